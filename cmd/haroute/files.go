package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/render"
)

// File and directory modes of the HAProxy directory.
const (
	dirMode     fs.FileMode = 0o755
	fileMode    fs.FileMode = 0o644
	privateMode fs.FileMode = 0o600
)

// configFile is the rendered file written last, once everything it refers to is in place.
const configFile = "conf/haproxy.cfg"

// managedDirs are the directories whose stale .map and .pem files are removed after a render.
func managedDirs() []string { return []string{"conf", "router/certs", "router/cacerts"} }

// managedSuffixes are the suffixes of the files a render produces in managedDirs.
func managedSuffixes() []string { return []string{".map", ".pem"} }

// writeTree writes the rendered files under out atomically (conf/haproxy.cfg last), creates out/run/,
// and removes the .map and .pem files in conf/, router/certs/ and router/cacerts/ that the render no
// longer produces.
func writeTree(out string, files []render.File) error {
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
	keep := map[string]bool{}
	for _, f := range ordered {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || path.Clean(f.Path) != f.Path {
			return fmt.Errorf("render produced a file outside the HAProxy directory: %q", f.Path)
		}
		keep[f.Path] = true
	}
	for _, f := range ordered {
		dst := filepath.Join(out, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), dirMode); err != nil {
			return fmt.Errorf("writing %s: %w", dst, err)
		}
		if err := writeFileAtomic(dst, f.Data, modeFor(f)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(out, "run"), dirMode); err != nil {
		return fmt.Errorf("creating the socket directory: %w", err)
	}
	return removeStale(out, keep)
}

// modeFor gives private keys and certificate bundles 0600 and everything else 0644.
func modeFor(f render.File) fs.FileMode {
	if strings.HasPrefix(f.Path, "router/certs/") || f.Path == defaultCertFile ||
		bytes.Contains(f.Data, []byte("PRIVATE KEY-----")) {
		return privateMode
	}
	return fileMode
}

// writeFileAtomic replaces path with data through a temporary file in the same directory and a
// rename, so readers see the old or the new file, never a part. A file that already has this content
// and mode is left alone.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm() == mode {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return nil
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		done = true
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done = true
	return nil
}

// removeStale deletes the regular .map and .pem files of the managed directories that are not in
// keep (paths relative to out, slash-separated). Other files and subdirectories are left alone.
func removeStale(out string, keep map[string]bool) error {
	var errs []error
	for _, dir := range managedDirs() {
		entries, err := os.ReadDir(filepath.Join(out, filepath.FromSlash(dir)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cleaning %s: %w", dir, err))
			continue
		}
		for _, e := range entries {
			rel := dir + "/" + e.Name()
			if keep[rel] || !e.Type().IsRegular() || !hasManagedSuffix(e.Name()) {
				continue
			}
			p := filepath.Join(out, filepath.FromSlash(rel))
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing stale %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

func hasManagedSuffix(name string) bool {
	for _, s := range managedSuffixes() {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
