package reload

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/haroute/haroute/mapping/render"
)

// snapshot is the content of an HAProxy directory that a write of new files would change: every
// file WriteFiles would overwrite or remove as stale, and the new files' paths that do not exist yet.
type snapshot struct {
	files  []render.File
	absent []string
}

// takeSnapshot reads what writing next into dir would change: conf/haproxy.cfg, the files of the
// managed directories (managedDirs), and every path of next.
func takeSnapshot(dir string, next []render.File) (snapshot, error) {
	var s snapshot
	paths := map[string]bool{configFile: true}
	for _, f := range next {
		if err := checkRelPath(f.Path); err != nil {
			return s, err
		}
		paths[f.Path] = true
	}
	for _, m := range managedDirs() {
		rel := m.rel
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return s, fmt.Errorf("reading %s: %w", rel, err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && m.manages(e.Name()) {
				paths[rel+"/"+e.Name()] = true
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case err == nil:
			s.files = append(s.files, render.File{Path: p, Data: data})
		case errors.Is(err, fs.ErrNotExist):
			s.absent = append(s.absent, p)
		default:
			return s, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	return s, nil
}

// restore writes the snapshot back: its files (WriteFiles, which also removes the .map and .pem files
// the snapshot did not hold) and the removal of the files that did not exist.
func (s snapshot) restore(dir string) error {
	err := WriteFiles(dir, s.files)
	var errs []error
	changed := map[string]bool{}
	for _, p := range s.absent {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		switch rerr := os.Remove(abs); {
		case rerr == nil:
			changed[filepath.Dir(abs)] = true
		case !errors.Is(rerr, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("removing %s: %w", abs, rerr))
		}
	}
	return errors.Join(err, errors.Join(errs...), syncDirs(changed))
}
