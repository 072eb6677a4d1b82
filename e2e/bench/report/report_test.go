package main

import (
	"bytes"
	"flag"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bench.md.golden")

const (
	fixtureDir   = "testdata/results"
	fixtureNotes = "testdata/notes.md"
	goldenFile   = "testdata/bench.md.golden"
)

func buildFixture(t *testing.T) *report {
	t.Helper()
	in, err := load(fixtureDir, fixtureNotes)
	if err != nil {
		t.Fatal(err)
	}
	r, err := build(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGolden: the markdown of the fixture's results, tables included.
func TestGolden(t *testing.T) {
	r := buildFixture(t)
	if *update {
		if err := os.WriteFile(goldenFile, r.markdown, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (go test ./e2e/bench/report -update writes it)", err)
	}
	if !bytes.Equal(r.markdown, want) {
		t.Errorf("markdown differs from %s (-update rewrites it); got:\n%s", goldenFile, r.markdown)
	}
}

// TestDeterministic: the same inputs give the same markdown and the same PNG bytes.
func TestDeterministic(t *testing.T) {
	a, b := buildFixture(t), buildFixture(t)
	if !bytes.Equal(a.markdown, b.markdown) {
		t.Error("two builds of the same inputs differ in their markdown")
	}
	if len(a.plots) != len(b.plots) {
		t.Fatalf("%d plots, then %d", len(a.plots), len(b.plots))
	}
	for i := range a.plots {
		if a.plots[i].name != b.plots[i].name || !bytes.Equal(a.plots[i].data, b.plots[i].data) {
			t.Errorf("plot %s differs between two builds", a.plots[i].name)
		}
	}
}

// TestPlots: every plot the markdown links to is a PNG that decodes, and every plot is linked.
func TestPlots(t *testing.T) {
	r := buildFixture(t)
	want := []string{"trace-rolling-reloads.png", "trace-rolling-rss.png", "trace-rolling-latency.png",
		"scale-memory.png", "update-time.png"}
	var got []string
	for _, p := range r.plots {
		got = append(got, p.name)
		img, err := png.Decode(bytes.NewReader(p.data))
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Errorf("%s: %v, want a plot of at least 300×200", p.name, b)
		}
		if !bytes.Contains(r.markdown, []byte("]("+plotDir+"/"+p.name+")")) {
			t.Errorf("%s is not linked from the markdown", p.name)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("plots %v, want %v", got, want)
	}
}

// TestMissingFiles: an empty results directory gives every section's "not measured" and no plots;
// missing notes leave the notes out.
func TestMissingFiles(t *testing.T) {
	in, err := load(t.TempDir(), filepath.Join(t.TempDir(), "none.md"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := build(in)
	if err != nil {
		t.Fatal(err)
	}
	md := string(r.markdown)
	for _, f := range []string{"traces.json", "scale.json", "update.txt", "idle.json", "dataplane.json"} {
		if !strings.Contains(md, "Not measured in this run (no `"+f+"` in the results).") {
			t.Errorf("no \"not measured\" for %s:\n%s", f, md)
		}
	}
	if len(r.plots) != 0 {
		t.Errorf("%d plots without results", len(r.plots))
	}
	if strings.Contains(md, "hand-written, copied verbatim") {
		t.Error("the notes' introduction without a notes file")
	}
	if _, err := load(filepath.Join(t.TempDir(), "absent"), ""); err == nil {
		t.Error("load of a missing results directory: no error")
	}
}

// TestBadJSON: a results file that does not parse is an error naming it.
func TestBadJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scale.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load(dir, ""); err == nil || !strings.Contains(err.Error(), "scale.json") {
		t.Errorf("load: %v, want an error naming scale.json", err)
	}
}

// TestRun writes the report into a directory, replaces stale plots and keeps other files.
func TestRun(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, plotDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"stale.png": "x", "keep.txt": "y"} {
		if err := os.WriteFile(filepath.Join(out, plotDir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run([]string{"-in", fixtureDir, "-out", out, "-notes", fixtureNotes}, io.Discard); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, markdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := buildFixture(t).markdown; !bytes.Equal(md, want) {
		t.Error("bench.md differs from build's markdown")
	}
	if _, err := os.Stat(filepath.Join(out, plotDir, "stale.png")); err == nil {
		t.Error("stale.png was kept")
	}
	if _, err := os.Stat(filepath.Join(out, plotDir, "keep.txt")); err != nil {
		t.Errorf("keep.txt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, plotDir, "update-time.png")); err != nil {
		t.Errorf("update-time.png: %v", err)
	}
	// Without results: no plot directory is made, and the plots of the earlier report go.
	empty, fresh := t.TempDir(), t.TempDir()
	if err := run([]string{"-in", empty, "-out", fresh}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(fresh, plotDir)); err == nil {
		t.Error("a plot directory without plots")
	}
	if err := run([]string{"-in", empty, "-out", out}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if pngs, _ := filepath.Glob(filepath.Join(out, plotDir, "*.png")); len(pngs) > 0 {
		t.Errorf("plots of the earlier report kept: %v", pngs)
	}
	if err := run([]string{"-in", fixtureDir, "extra"}, io.Discard); err == nil {
		t.Error("run with an extra argument: no error")
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		p      float64
		want   float64
		ok     bool
	}{
		{nil, 50, 0, false},
		{[]float64{math.NaN()}, 50, 0, false},
		{[]float64{7}, 50, 7, true},
		{[]float64{7}, 99, 7, true},
		{[]float64{3, 1, 2}, 50, 2, true},      // odd: the middle value
		{[]float64{4, 1, 3, 2}, 50, 2.5, true}, // even: the mean of the two middle values
		{[]float64{1, 2, 3, 4, 5}, 0, 1, true}, // the minimum
		{[]float64{1, 2, 3, 4, 5}, 100, 5, true},
		{[]float64{1, 2, 3, 4, 5}, 99, 4.96, true}, // rank 3.96: 4 + 0.96
		{[]float64{1, 2, 3, 4, 5}, 25, 2, true},
		{[]float64{10, 20}, 99, 19.9, true},
		{[]float64{2, math.Inf(1), 1, math.NaN()}, 50, 1.5, true}, // non-finite values left out
		{[]float64{1, 2}, 150, 2, true},                           // clamped
	} {
		got, ok := percentile(tc.values, tc.p)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("percentile(%v, %v) = %v, %v; want %v, %v", tc.values, tc.p, got, ok, tc.want, tc.ok)
		}
	}
	in := []float64{3, 1, 2}
	if _, _ = median(in); in[0] != 3 {
		t.Error("median sorted its argument")
	}
}

func TestSpreadOf(t *testing.T) {
	if s := spreadOf(nil); s.N != 0 || fmtSpread(s, fmtCount) != none {
		t.Errorf("spreadOf(nil) = %+v", s)
	}
	s := spreadOf([]float64{5, 1, 3, 2})
	if s != (spread{Min: 1, Med: 2.5, Max: 5, N: 4}) {
		t.Errorf("spreadOf = %+v", s)
	}
	if got := fmtSpread(s, fmtCount); got != "1 / 2.5 / 5" {
		t.Errorf("fmtSpread = %q", got)
	}
	if got := fmtSpread(spreadOf([]float64{2, 2}), fmtCount); got != "2" {
		t.Errorf("fmtSpread of equal values = %q", got)
	}
	if got := fmtDurationSpread(spreadOf([]float64{0.065, 0.066, 0.108})); got != "65 / 66 / 108 ms" {
		t.Errorf("fmtDurationSpread = %q", got)
	}
	if got := fmtDurationSpread(spreadOf([]float64{0.4, 2.7, 5.1})); got != "0.40 / 2.7 / 5.1 s" {
		t.Errorf("fmtDurationSpread = %q", got)
	}
}

func TestFmtNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		d    int
		want string
	}{
		{0, 0, "0"}, {999, 0, "999"}, {1000, 0, "1,000"}, {17900.4, 0, "17,900"}, {1234567.891, 2, "1,234,567.89"},
		{-1234.5, 1, "-1,234.5"}, {-0.01, 1, "0.0"}, {math.NaN(), 1, none}, {52.345, 1, "52.3"},
	} {
		if got := fmtNum(tc.v, tc.d); got != tc.want {
			t.Errorf("fmtNum(%v, %d) = %q, want %q", tc.v, tc.d, got, tc.want)
		}
	}
}

func TestParseBenchLine(t *testing.T) {
	for _, tc := range []struct {
		line    string
		ok      bool
		name    string
		procs   int
		n       int
		metrics map[string]float64
	}{
		{"BenchmarkUpdateOneEndpoint/routes=1000-2  20  15400000 ns/op  5000000 B/op  26500 allocs/op", true,
			"BenchmarkUpdateOneEndpoint/routes=1000", 2, 20, map[string]float64{"ns/op": 15400000, "B/op": 5000000, "allocs/op": 26500}},
		{"BenchmarkUpdateOneEndpoint/routes=20000  3  2.75e+08 ns/op", true, // GOMAXPROCS=1: no suffix
			"BenchmarkUpdateOneEndpoint/routes=20000", 1, 3, map[string]float64{"ns/op": 2.75e8}},
		{"BenchmarkRequests/routes=10-16 \t 5000 \t 55000 ns/op \t 17900 req/s \t 0.004 srvconns/req \t 12 B/op \t 1 allocs/op", true,
			"BenchmarkRequests/routes=10", 16, 5000, map[string]float64{"ns/op": 55000, "req/s": 17900, "srvconns/req": 0.004, "B/op": 12, "allocs/op": 1}},
		{"BenchmarkX/mode=reload-5s-4  10  100 ns/op", true, "BenchmarkX/mode=reload-5s", 4, 10, map[string]float64{"ns/op": 100}},
		{"BenchmarkX/mode=reload-5s  10  100 ns/op", true, "BenchmarkX/mode=reload-5s", 1, 10, map[string]float64{"ns/op": 100}},
		{"BenchmarkCompute-2  10  9000000 ns/op  3.00 ops/op", true, "BenchmarkCompute", 2, 10, map[string]float64{"ns/op": 9e6, "ops/op": 3}},
		{"--- BENCH: BenchmarkUpdateOneEndpoint/routes=1000-2", false, "", 0, 0, nil},
		{"BenchmarkUpdateOneEndpoint/routes=1000-2", false, "", 0, 0, nil}, // -v prints the name alone first
		{"BenchmarkX-2  20  100 ns/op  7", false, "", 0, 0, nil},           // a value without its unit
		{"BenchmarkX-2  many  100 ns/op", false, "", 0, 0, nil},
		{"BenchmarkX-2  20  fast ns/op", false, "", 0, 0, nil},
		{"goos: linux", false, "", 0, 0, nil},
		{"ok  \tgithub.com/haroute/haroute/runtime/haproxy\t95.1s", false, "", 0, 0, nil},
		{"", false, "", 0, 0, nil},
	} {
		l, ok := parseBenchLine(tc.line)
		if ok != tc.ok {
			t.Errorf("parseBenchLine(%q): ok %v, want %v", tc.line, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if l.Name != tc.name || l.Procs != tc.procs || l.Iterations != tc.n || len(l.Metrics) != len(tc.metrics) {
			t.Errorf("parseBenchLine(%q) = %+v", tc.line, l)
		}
		for unit, v := range tc.metrics {
			if l.Metrics[unit] != v {
				t.Errorf("parseBenchLine(%q): %s = %v, want %v", tc.line, unit, l.Metrics[unit], v)
			}
		}
	}
}

// TestParseBenchOutput reads three concatenated runs with logs in between, of two benchmarks (the
// fixture's figures are made up).
func TestParseBenchOutput(t *testing.T) {
	f, err := os.Open(filepath.Join(fixtureDir, "update.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, cpu, err := parseBenchOutput(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 18 || cpu != "Intel(R) Xeon(R) CPU @ 2.20GHz" {
		t.Fatalf("%d lines, cpu %q; want 18 and the cpu: line", len(lines), cpu)
	}
	families := updateFamilies(lines)
	if len(families) != 2 || families[0].name != "BenchmarkUpdateOneEndpoint" || families[1].name != "BenchmarkSyncOneEndpoint" {
		t.Fatalf("families %+v", families)
	}
	for _, fam := range families {
		sizes := fam.sizes
		if len(sizes) != 3 || sizes[0].routes != 1000 || sizes[1].routes != 10000 || sizes[2].routes != 20000 {
			t.Fatalf("%s: sizes %+v", fam.name, sizes)
		}
		for _, u := range sizes {
			if len(u.lines) != 3 || familyName(u.name) != fam.name {
				t.Errorf("%s: size %s with %d lines", fam.name, u.name, len(u.lines))
			}
		}
	}
	if s := families[0].sizes[0].metric("ns/op"); s != (spread{Min: 14.9e6, Med: 15.4e6, Max: 16e6, N: 3}) {
		t.Errorf("update routes=1000 ns/op %+v", s)
	}
	if s := families[1].sizes[0].metric("ns/op"); s != (spread{Min: 18.5e6, Med: 19e6, Max: 19.6e6, N: 3}) {
		t.Errorf("sync routes=1000 ns/op %+v", s)
	}
	if p, ok := param("BenchmarkX/routes=250/mode=a", "routes"); !ok || p != 250 {
		t.Errorf("param = %d, %v", p, ok)
	}
	if _, ok := param("BenchmarkX", "routes"); ok {
		t.Error("param of a name without it")
	}
}

// TestUpdateFamilies: lines group by benchmark family in a fixed order (Update, Sync, then the
// others by name), each family's time ratio is against its own smallest size, and a name without
// routes=N is its own family, labelled with its name.
func TestUpdateFamilies(t *testing.T) {
	line := func(name string, ns float64) benchLine {
		return benchLine{Name: name, Procs: 2, Iterations: 20, Metrics: map[string]float64{"ns/op": ns}}
	}
	lines := []benchLine{
		line("BenchmarkZeta/routes=10", 5e6),
		line("BenchmarkSyncOneEndpoint/routes=10000", 60e6),
		line("BenchmarkUpdateOneEndpoint/routes=10000", 100e6),
		line("BenchmarkSyncOneEndpoint/routes=1000", 20e6),
		line("BenchmarkCompute", 9e6),
		line("BenchmarkUpdateOneEndpoint/routes=1000", 10e6),
		line("BenchmarkZeta/routes=10/mode=a", 7e6),
	}
	families := updateFamilies(lines)
	var names []string
	for _, f := range families {
		names = append(names, f.name)
	}
	want := "BenchmarkUpdateOneEndpoint BenchmarkSyncOneEndpoint BenchmarkCompute BenchmarkZeta BenchmarkZeta/mode=a"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("families %s, want %s", got, want)
	}
	ratios := func(f updateFamily) string {
		var rs []string
		for _, r := range f.table().rows {
			rs = append(rs, r[0]+"="+r[len(r)-1])
		}
		return strings.Join(rs, " ")
	}
	for i, want := range []string{"1,000=1.00 10,000=10.00", "1,000=1.00 10,000=3.00", "BenchmarkCompute=1.00", "10=1.00", "10=1.00"} {
		if got := ratios(families[i]); got != want {
			t.Errorf("%s: label=ratio %s, want %s", families[i].name, got, want)
		}
	}
	if s, ok := families[1].series(); !ok || s.name != "Sync: median, with minimum and maximum" || len(s.xs) != 2 || s.ys[0] != 20 {
		t.Errorf("sync series %+v, %v", s, ok)
	}
	if s, ok := families[2].series(); ok {
		t.Errorf("a series without routes=N: %+v", s)
	}
}

func TestFigureCheck(t *testing.T) {
	for _, f := range []figure{
		{},
		{series: []series{{name: "empty"}}},
		{series: []series{{name: "short", xs: []float64{1, 2}, ys: []float64{1}}}},
		{series: []series{{name: "nan", xs: []float64{1}, ys: []float64{math.NaN()}}}},
	} {
		if _, err := f.png(); err == nil {
			t.Errorf("png of %+v: no error", f)
		}
	}
	// A log scale is not used over values that are not positive, or that span less than 10×.
	for _, xs := range [][]float64{{0, 10}, {1, 5}} {
		f := figure{logX: true, series: []series{{name: "s", xs: xs, ys: []float64{1, 2}}}}
		if f.useLogX() {
			t.Errorf("useLogX over %v", xs)
		}
		if _, err := f.png(); err != nil {
			t.Errorf("png over %v: %v", xs, err)
		}
	}
	if !(figure{logX: true, series: []series{{xs: []float64{1, 100}, ys: []float64{1, 2}}}}).useLogX() {
		t.Error("no log scale over 1…100")
	}
}
