// Command report regenerates docs/bench.md and its plots from the results of the benchmark harness
// (e2e/bench, `make bench`):
//
//	go run ./e2e/bench/report -in bin/bench -out docs
//
// It reads traces.json, scale.json, dataplane.json and idle.json (package results) and update.txt
// (`go test -bench 'UpdateOneEndpoint|SyncOneEndpoint' -benchmem` output) from -in, writes
// -out/bench.md and the PNG plots under -out/bench/ (it owns that directory: PNG files there that it
// did not write are removed), and copies the hand-written notes of -notes (default
// -out/bench-notes.md) verbatim at the end. A section whose file is missing says it was not
// measured. The same inputs give the same markdown, byte for byte, and the same PNG files.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Names under -out.
const (
	markdownFile = "bench.md"
	notesFile    = "bench-notes.md"
	plotDir      = "bench"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// run parses the command line and writes the report.
func run(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("report", flag.ContinueOnError)
	fl.SetOutput(stderr)
	in := fl.String("in", "bin/bench", "the results directory `make bench` wrote")
	out := fl.String("out", "docs", "where bench.md and the plots (under bench/) go")
	notes := fl.String("notes", "", "the hand-written notes copied at the end (default: -out/bench-notes.md)")
	if err := fl.Parse(args); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("arguments: unexpected %q", fl.Args())
	}
	if *notes == "" {
		*notes = filepath.Join(*out, notesFile)
	}
	data, err := load(*in, *notes)
	if err != nil {
		return err
	}
	r, err := build(data)
	if err != nil {
		return err
	}
	return r.write(*out)
}

// report is what build makes: the markdown and the plots it links to.
type report struct {
	markdown []byte
	plots    []plotFile
}

// plotFile is one PNG under the plot directory.
type plotFile struct {
	name string // file name, without directory
	data []byte
}

// write stores the report under out: bench.md, and the plots under bench/, removing the PNG files
// there that are not part of this report.
func (r *report) write(out string) error {
	dir := filepath.Join(out, plotDir)
	if len(r.plots) > 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write plots: %w", err)
		}
	}
	keep := make(map[string]bool, len(r.plots))
	for _, p := range r.plots {
		keep[p.name] = true
		if err := writeFile(filepath.Join(dir, p.name), p.data); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		entries, err = nil, nil // no plots, and none from an earlier report
	}
	if err != nil {
		return fmt.Errorf("write plots: %w", err)
	}
	for _, e := range entries {
		if name := e.Name(); e.Type().IsRegular() && strings.HasSuffix(name, ".png") && !keep[name] {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("remove stale plot: %w", err)
			}
		}
	}
	return writeFile(filepath.Join(out, markdownFile), r.markdown)
}

// writeFile replaces path with data through a temporary file and a rename, unless it already holds
// exactly data (so that an unchanged file keeps its time stamp).
func writeFile(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
