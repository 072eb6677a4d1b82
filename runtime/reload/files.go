package reload

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
)

// File and directory modes of the HAProxy directory.
const (
	dirMode     fs.FileMode = 0o755
	fileMode    fs.FileMode = 0o644
	privateMode fs.FileMode = 0o600
)

// configFile is the rendered file written last, once everything it refers to is in place.
const configFile = layout.Config

// managedDir is a directory whose files with one of the suffixes are all rendered: those a render no
// longer produces are stale and removed.
type managedDir struct {
	rel      string
	suffixes []string
}

// managedDirs are the directories whose stale files are removed after a render: .map and .pem in
// conf/ and the certificate directories, .cfg in the backend directory.
func managedDirs() []managedDir {
	return []managedDir{
		{layout.ConfDir, []string{".map", ".pem"}},
		{layout.BackendsDir, []string{".cfg"}},
		{layout.CertDir, []string{".map", ".pem"}},
		{layout.CADir, []string{".map", ".pem"}},
	}
}

// manages reports whether name (a file of the directory) is one a render produces.
func (m managedDir) manages(name string) bool {
	for _, s := range m.suffixes {
		if strings.HasSuffix(name, s) && !strings.HasPrefix(name, ".") {
			return true
		}
	}
	return false
}

// WriteFiles writes the rendered files under dir atomically, each through a temporary file, fsync and
// rename (conf/haproxy.cfg last, so the files it refers to are in place first), creates dir/run/ and
// the backend directory, removes the .map and .pem files in conf/, router/certs/ and router/cacerts/
// and the .cfg files of the backend directory that files no longer holds, and fsyncs every directory
// it changed. A file that already has its content and mode is left alone. Private material (router/certs/, the default certificate, anything holding a private key)
// gets mode 0600, everything else 0644. Paths must be relative, clean and inside dir.
func WriteFiles(dir string, files []render.File) error {
	keep := map[string]bool{}
	for _, f := range files {
		if err := checkRelPath(f.Path); err != nil {
			return err
		}
		keep[f.Path] = true
	}
	changed, err := writeOrdered(dir, files) // directories to fsync
	if err != nil {
		return err
	}
	for _, d := range []string{layout.RunDir, layout.BackendsDir} {
		// HAProxy's -f refuses a missing backend directory, even an empty one a custom template leaves.
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), dirMode); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	removed, err := removeStale(dir, keep)
	for _, d := range removed {
		changed[d] = true
	}
	return errors.Join(err, syncDirs(changed))
}

// writeOrdered writes files (checked paths) atomically, haproxy.cfg last, and returns the directories
// it changed.
func writeOrdered(dir string, files []render.File) (map[string]bool, error) {
	ordered := slices.Clone(files)
	slices.SortStableFunc(ordered, func(a, b render.File) int {
		switch {
		case a.Path == configFile && b.Path != configFile:
			return 1
		case b.Path == configFile && a.Path != configFile:
			return -1
		}
		return strings.Compare(a.Path, b.Path)
	})
	changed := map[string]bool{}
	for _, f := range ordered {
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), dirMode); err != nil {
			return changed, fmt.Errorf("writing %s: %w", dst, err)
		}
		wrote, err := writeFileAtomic(dst, f.Data, modeFor(f))
		if err != nil {
			return changed, err
		}
		if wrote {
			changed[filepath.Dir(dst)] = true
		}
	}
	return changed, nil
}

// checkRelPath refuses a file path that is not a clean relative path inside the directory.
func checkRelPath(p string) error {
	if !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p {
		return fmt.Errorf("render produced a file outside the HAProxy directory: %q", p)
	}
	return nil
}

// modeFor gives private keys and certificate bundles 0600 and everything else 0644.
func modeFor(f render.File) fs.FileMode {
	if strings.HasPrefix(f.Path, layout.CertDir+"/") || f.Path == layout.DefaultCertificate ||
		bytes.Contains(f.Data, []byte("PRIVATE KEY-----")) {
		return privateMode
	}
	return fileMode
}

// writeFileAtomic replaces path with data through a temporary file in the same directory, an fsync
// and a rename, so readers see the old or the new file, never a part. A file that already has this
// content and mode is left alone (wrote is false).
func writeFileAtomic(path string, data []byte, mode fs.FileMode) (wrote bool, err error) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm() == mode {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return false, nil
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	done = true
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}

// removeStale deletes the regular .map and .pem files of the managed directories that are not in
// keep (paths relative to dir, slash-separated) and returns the directories it removed files from.
// Other files and subdirectories are left alone.
func removeStale(dir string, keep map[string]bool) ([]string, error) {
	var errs []error
	var changed []string
	for _, m := range managedDirs() {
		rel := m.rel
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		entries, err := os.ReadDir(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cleaning %s: %w", rel, err))
			continue
		}
		removed := false
		for _, e := range entries {
			name := rel + "/" + e.Name()
			if keep[name] || !e.Type().IsRegular() || !m.manages(e.Name()) {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing stale %s: %w", p, err))
				continue
			}
			removed = true
		}
		if removed {
			changed = append(changed, abs)
		}
	}
	return changed, errors.Join(errs...)
}

// syncDirs fsyncs each directory, so the renames and removals in it survive a crash.
func syncDirs(dirs map[string]bool) error {
	var errs []error
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := syncDir(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// ReadConfiguration reads the configuration HAProxy loads from the HAProxy directory dir
// (render.ConfigArgs): conf/haproxy.cfg, then the .cfg files of the backend directory in name order
// (HAProxy skips names that start with a dot), one blank line between files, as render.Configuration
// joins them. A missing backend directory reads as empty.
func ReadConfiguration(dir string) ([]byte, error) {
	files := []render.File{}
	main, err := os.ReadFile(layout.For(dir).Config())
	if err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	files = append(files, render.File{Path: configFile, Data: main})
	backends := layout.For(dir).BackendsDir()
	entries, err := os.ReadDir(backends)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	for _, e := range entries { // sorted by name
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".cfg") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(backends, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading the configuration: %w", err)
		}
		files = append(files, render.File{Path: layout.BackendsDir + "/" + e.Name(), Data: data})
	}
	return render.Configuration(files), nil
}
