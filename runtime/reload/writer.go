package reload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/haroute/haroute/mapping/render"
)

// Writer writes the successive renders of one HAProxy directory through, touching only what changed:
// a file whose Data is the very slice it last wrote under that path (a render.Renderer returns an
// unchanged file that way) is neither read nor written, and only the paths that went away are
// removed. A runtime change to one backend thus writes one backend file, whatever the number of
// Routes, while every file on disk stays a complete render: each file is replaced atomically (a
// temporary file, fsync, rename, and an fsync of its directory), haproxy.cfg last.
//
// The Writer trusts the directory to hold what it wrote. Forget makes the next Write a full
// WriteFiles (which reads and compares every file); call it when something else may have written
// the directory, and Known when something else wrote a complete render there (a reload).
type Writer struct {
	dir   string
	known map[string][]byte
}

// NewWriter returns a Writer of the HAProxy directory dir that knows nothing yet.
func NewWriter(dir string) *Writer { return &Writer{dir: dir} }

// Forget makes the next Write a full WriteFiles.
func (w *Writer) Forget() { w.known = nil }

// Known records files (a complete render) as what the directory holds.
func (w *Writer) Known(files []render.File) {
	w.known = make(map[string][]byte, len(files))
	for _, f := range files {
		w.known[f.Path] = f.Data
	}
}

// Write makes the directory hold files (a complete render, paths relative and clean). On an error
// some files may be new already; the Writer then forgets what it knew.
func (w *Writer) Write(files []render.File) error {
	if w.known == nil {
		if err := WriteFiles(w.dir, files); err != nil {
			return err
		}
		w.Known(files)
		return nil
	}
	var changed []render.File
	seen := 0
	for _, f := range files {
		old, ok := w.known[f.Path]
		if ok {
			seen++
		}
		if !ok || !sameData(old, f.Data) {
			if err := checkRelPath(f.Path); err != nil {
				return err
			}
			changed = append(changed, f)
		}
	}
	var gone []string
	if seen != len(w.known) {
		present := make(map[string]bool, len(files))
		for _, f := range files {
			present[f.Path] = true
		}
		for p := range w.known {
			if !present[p] {
				gone = append(gone, p)
			}
		}
		slices.Sort(gone)
	}
	if err := w.apply(changed, gone); err != nil {
		w.Forget()
		return err
	}
	for _, f := range changed {
		w.known[f.Path] = f.Data
	}
	for _, p := range gone {
		delete(w.known, p)
	}
	return nil
}

// apply writes changed (haproxy.cfg last), removes gone, and fsyncs the directories it changed.
func (w *Writer) apply(changed []render.File, gone []string) error {
	dirs, err := writeOrdered(w.dir, changed)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range gone {
		if err := checkRelPath(p); err != nil {
			return err
		}
		abs := filepath.Join(w.dir, filepath.FromSlash(p))
		switch err := os.Remove(abs); {
		case err == nil:
			dirs[filepath.Dir(abs)] = true
		case !errors.Is(err, os.ErrNotExist):
			errs = append(errs, fmt.Errorf("removing stale %s: %w", abs, err))
		}
	}
	return errors.Join(errors.Join(errs...), syncDirs(dirs))
}

// sameData reports whether a and b are the very same bytes (same array and length; two empty slices
// are the same).
func sameData(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
