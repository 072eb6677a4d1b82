package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/haroute/haroute/e2e/bench/results"
)

// inputs is everything the report reads; a nil pointer (or a false found) is a file that was not
// in the results directory.
type inputs struct {
	traces    *results.Traces
	scale     *results.Scale
	dataPlane *results.DataPlane
	idle      *results.Idle
	// update holds the result lines of update.txt (updateFound false when the file is missing), cpu
	// its "cpu:" line.
	update      []benchLine
	updateCPU   string
	updateFound bool
	// notes is the hand-written text copied at the end (nil when the file is missing).
	notes []byte
}

// load reads the results directory in and the notes file.
func load(in, notesPath string) (*inputs, error) {
	if st, err := os.Stat(in); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("results directory %s: not a directory", in)
	}
	d := &inputs{}
	if err := readJSON(in, results.TracesFile, &d.traces); err != nil {
		return nil, err
	}
	if err := readJSON(in, results.ScaleFile, &d.scale); err != nil {
		return nil, err
	}
	if err := readJSON(in, results.DataPlaneFile, &d.dataPlane); err != nil {
		return nil, err
	}
	if err := readJSON(in, results.IdleFile, &d.idle); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(in, results.UpdateFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("results %s: %w", results.UpdateFile, err)
	default:
		defer f.Close()
		d.updateFound = true
		if d.update, d.updateCPU, err = parseBenchOutput(f); err != nil {
			return nil, fmt.Errorf("results %s: %w", results.UpdateFile, err)
		}
	}
	if d.notes, err = os.ReadFile(notesPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("notes: %w", err)
	}
	return d, nil
}

// readJSON reads dir/name into a new *T stored in *dst, or leaves *dst nil when the file is missing.
func readJSON[T any](dir, name string, dst **T) error {
	v := new(T)
	found, err := results.Read(dir, name, v)
	if err != nil {
		return err // results.Read names the file
	}
	if found {
		*dst = v
	}
	return nil
}
