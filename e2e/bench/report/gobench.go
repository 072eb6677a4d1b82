package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// benchLine is one result line of `go test -bench` output:
//
//	BenchmarkUpdateOneEndpoint/routes=1000-2   20   15400000 ns/op   5000000 B/op   26500 allocs/op
type benchLine struct {
	// Name is the benchmark's name without the -N GOMAXPROCS suffix; Procs is N (1 when absent).
	Name  string
	Procs int
	// Iterations is b.N.
	Iterations int
	// Metrics holds every "value unit" pair: ns/op, B/op, allocs/op and those of b.ReportMetric.
	Metrics map[string]float64
}

// parseBenchOutput reads the result lines of (possibly several concatenated) `go test -bench`
// outputs, in order. Other lines (goos:, pkg:, PASS, ok, logs) are skipped; cpu is the value of the
// first "cpu:" line, if any.
func parseBenchOutput(r io.Reader) (lines []benchLine, cpu string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if v, ok := strings.CutPrefix(text, "cpu:"); ok && cpu == "" {
			cpu = strings.TrimSpace(v)
			continue
		}
		if l, ok := parseBenchLine(text); ok {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("read benchmark output: %w", err)
	}
	return lines, cpu, nil
}

// parseBenchLine parses one result line; ok is false for any other line.
func parseBenchLine(text string) (l benchLine, ok bool) {
	f := strings.Fields(text)
	// Name, iterations, then value-unit pairs: at least one.
	if len(f) < 4 || len(f)%2 != 0 || !strings.HasPrefix(f[0], "Benchmark") {
		return benchLine{}, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n <= 0 {
		return benchLine{}, false
	}
	l = benchLine{Iterations: n, Metrics: make(map[string]float64, (len(f)-2)/2)}
	l.Name, l.Procs = splitProcs(f[0])
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return benchLine{}, false
		}
		l.Metrics[f[i+1]] = v
	}
	return l, true
}

// splitProcs splits "Name/sub-8" into "Name/sub" and 8. A name without the suffix has Procs 1. Only
// the last path element can carry it, so "routes=1000" keeps its digits.
func splitProcs(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i < strings.LastIndexByte(name, '/') {
		return name, 1
	}
	p, err := strconv.Atoi(name[i+1:])
	if err != nil || p <= 0 {
		return name, 1
	}
	return name[:i], p
}

// param returns the integer value of a "key=value" element of a benchmark name
// ("BenchmarkX/routes=1000" → 1000 for "routes").
func param(name, key string) (int, bool) {
	for _, part := range strings.Split(name, "/") {
		if v, ok := strings.CutPrefix(part, key+"="); ok {
			n, err := strconv.Atoi(v)
			return n, err == nil
		}
	}
	return 0, false
}
