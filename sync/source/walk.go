package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// folderList is one listing of a manifest folder. LoadDir reads its files; Folder reads them too and
// watches its directories. Both take it from listFolder, so that the files read and the directories
// watched follow one set of rules.
type folderList struct {
	// files are the manifest files, in the order their objects are merged.
	files []string
	// dirs are the directories to watch, sorted: the folder, its listed subdirectories and those
	// holding the targets of linked files.
	dirs []string
	// problems are the directories that could not be listed; unlisted names them (the folder itself
	// included), as their content is unknown this time.
	problems []FileError
	unlisted []string
}

// listFolder lists the manifest files under dir. The rules:
//
//   - dir itself is listed even when it is a symbolic link to a directory;
//   - an entry whose name starts with "." is skipped, file, directory or link (a mounted ConfigMap's
//     "..data" link and timestamped directory, .git, editors' temporary files);
//   - every other directory is listed, to any depth; entries come in lexical order, a directory's
//     files at the directory's place among its siblings;
//   - a symbolic link to a directory is not followed;
//   - a manifest is a regular file, or a symbolic link to one, whose name ends in .yaml, .yml or .json
//     (in any case). The directory of a link's target is watched as well as the link's own, so that
//     an edit made at the target is seen;
//   - a dangling link, and an entry that vanished while listing, are left out like deleted files (the
//     directory a dangling link points into is watched, when it exists). A link that cannot be
//     followed for another reason (a loop, a target out of reach) is listed, so that reading it
//     reports why;
//   - a directory that cannot be listed is reported in problems and unlisted, and the listing goes on.
func listFolder(dir string) folderList {
	var l folderList
	watch := map[string]bool{}
	l.list(dir, true, watch)
	for d := range watch {
		l.dirs = append(l.dirs, d)
	}
	slices.Sort(l.dirs)
	return l
}

// list adds the entries of the directory dir (the folder itself when root is set) to l, and the
// directories to watch to watch.
func (l *folderList) list(dir string, root bool, watch map[string]bool) {
	watch[dir] = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !root && errors.Is(err, fs.ErrNotExist) {
			delete(watch, dir) // removed while listing: gone like its files
			return
		}
		l.problems = append(l.problems, FileError{Path: dir, Err: fmt.Errorf("listing manifests: %w", err)})
		l.unlisted = append(l.unlisted, dir)
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		switch t := e.Type(); {
		case t.IsDir():
			l.list(path, false, watch)
		case !isManifest(name):
		case t.IsRegular():
			l.files = append(l.files, path)
		case t&fs.ModeSymlink != 0 && linkedManifest(path, watch):
			l.files = append(l.files, path)
		}
	}
}

// linkedManifest reports whether the symbolic link path (with a manifest's name) is listed: when it
// leads to a regular file, whose directory it then adds to watch, and when it cannot be followed for
// another reason than a missing target. A dangling link is not listed, but the directory its target
// would be in is watched when it exists, so that the file is read once it appears.
func linkedManifest(path string, watch map[string]bool) bool {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if target, err := os.Readlink(path); err == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			if d, err := filepath.EvalSymlinks(filepath.Dir(target)); err == nil {
				watch[d] = true
			}
		}
		return false
	case err != nil:
		return true
	case !st.Mode().IsRegular():
		return false
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		watch[filepath.Dir(target)] = true
	}
	return true
}

// isManifest reports whether a file name ends in .yaml, .yml or .json (in any case).
func isManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
