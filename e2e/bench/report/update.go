package main

import (
	"cmp"
	"slices"
	"strings"

	"github.com/haroute/haroute/e2e/bench/results"
)

// updateCommand is what the bench target runs to write update.txt.
const updateCommand = "go test ./runtime/haproxy -run XXX -bench 'UpdateOneEndpoint|SyncOneEndpoint' -benchmem -benchtime 100x -count 3 > bin/bench/update.txt"

// knownFamily is a benchmark of update.txt the report describes, in the order it shows them.
type knownFamily struct {
	name  string // the benchmark's name without its routes=N element
	short string // its name in the figure's legend
	about string // what it measures, one sentence after its name
}

var knownFamilies = []knownFamily{
	{
		name:  "BenchmarkUpdateOneEndpoint",
		short: "Update",
		about: "the change through `runtime/haproxy`'s Instance alone (plan, render, write the changed files through, runtime ops).",
	},
	{
		name:  "BenchmarkSyncOneEndpoint",
		short: "Sync",
		about: "the same update, preceded by the incremental `mapping.Translator`'s translation of the snapshot " +
			"and the validation of the result (what the controller does first).",
	},
}

// updateSize is the result lines of one benchmark size.
type updateSize struct {
	name   string // the benchmark's name, -N suffix removed
	routes int    // from its routes=N element; 0 when it has none
	lines  []benchLine
}

// updateFamily is the sizes of one benchmark: the lines whose names differ only in routes=N.
type updateFamily struct {
	name  string       // the benchmark's name without its routes=N element
	sizes []updateSize // in order of routes, then name
}

// familyName is a benchmark's name without its routes=N element ("BenchmarkX/routes=1000/mode=a" →
// "BenchmarkX/mode=a"); a name without one is its own family.
func familyName(name string) string {
	parts := strings.Split(name, "/")
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return strings.HasPrefix(p, "routes=") }), "/")
}

// familyRank orders the families: the known ones first, in their order, then the others.
func familyRank(name string) int {
	if i := slices.IndexFunc(knownFamilies, func(k knownFamily) bool { return k.name == name }); i >= 0 {
		return i
	}
	return len(knownFamilies)
}

// updateSizes groups the lines by benchmark name, in order of routes, then name.
func updateSizes(lines []benchLine) []updateSize {
	var out []updateSize
	for _, l := range lines {
		i := slices.IndexFunc(out, func(u updateSize) bool { return u.name == l.Name })
		if i < 0 {
			routes, _ := param(l.Name, "routes")
			out = append(out, updateSize{name: l.Name, routes: routes})
			i = len(out) - 1
		}
		out[i].lines = append(out[i].lines, l)
	}
	slices.SortStableFunc(out, func(a, b updateSize) int {
		return cmp.Or(cmp.Compare(a.routes, b.routes), cmp.Compare(a.name, b.name))
	})
	return out
}

// updateFamilies groups the lines by family, then by size: the known families first, in their
// order, then the others in order of name.
func updateFamilies(lines []benchLine) []updateFamily {
	var out []updateFamily
	for _, u := range updateSizes(lines) {
		name := familyName(u.name)
		i := slices.IndexFunc(out, func(f updateFamily) bool { return f.name == name })
		if i < 0 {
			out = append(out, updateFamily{name: name})
			i = len(out) - 1
		}
		out[i].sizes = append(out[i].sizes, u)
	}
	slices.SortFunc(out, func(a, b updateFamily) int {
		return cmp.Or(cmp.Compare(familyRank(a.name), familyRank(b.name)), cmp.Compare(a.name, b.name))
	})
	return out
}

// metric is the spread of one metric over the lines that report it.
func (u updateSize) metric(unit string) spread {
	var vs []float64
	for _, l := range u.lines {
		if v, ok := l.Metrics[unit]; ok {
			vs = append(vs, v)
		}
	}
	return spreadOf(vs)
}

// table is the family's rows by size. The time ratio compares each size's median time/op with that
// of the family's smallest size that reports one.
func (f updateFamily) table() table {
	var base spread
	for _, u := range f.sizes {
		if base = u.metric("ns/op"); base.N > 0 {
			break
		}
	}
	t := table{header: []string{"Routes", "runs", "time/op (ms)", "allocated/op (MB)", "allocs/op", "time ratio"}}
	for _, u := range f.sizes {
		label := u.name
		if u.routes > 0 {
			label = fmtNum(float64(u.routes), 0)
		}
		ns := u.metric("ns/op")
		ratio := none
		if ns.N > 0 && base.Med > 0 {
			ratio = fmtRatio(ns.Med / base.Med)
		}
		t.add(label, fmtNum(float64(len(u.lines)), 0),
			fmtSpread(scaled(ns, 1e-6), fmtMagnitude),
			fmtSpread(scaled(u.metric("B/op"), 1e-6), fmtMagnitude),
			fmtSpread(u.metric("allocs/op"), func(v float64) string { return fmtNum(v, 0) }),
			ratio)
	}
	return t
}

// series is the family's line in the figure: the median time/op in ms of each size with routes=N,
// with its minimum and maximum. ok is false when no size has one.
func (f updateFamily) series() (s series, ok bool) {
	short := strings.TrimPrefix(f.name, "Benchmark")
	if i := familyRank(f.name); i < len(knownFamilies) {
		short = knownFamilies[i].short
	}
	s.name, s.points = short+": median, with minimum and maximum", true
	for _, u := range f.sizes {
		ns := u.metric("ns/op")
		if u.routes > 0 && ns.N > 0 {
			s.xs = append(s.xs, float64(u.routes))
			s.ys = append(s.ys, ns.Med/1e6)
			s.lo = append(s.lo, ns.Min/1e6)
			s.hi = append(s.hi, ns.Max/1e6)
		}
	}
	return s, len(s.xs) > 0
}

func updateSection(d *doc, in *inputs) error {
	d.b.WriteString("## Per-change cost: one endpoint added or removed\n\n")
	if !in.updateFound {
		notMeasured(d, results.UpdateFile)
		return nil
	}
	d.para("Measured with `%s`.", updateCommand)
	d.para("One endpoint of one Route added or removed, in turn, against a real HAProxy (the tests' default: " +
		"`$HAROUTE_HAPROXY`, else Debian's `/usr/sbin/haproxy`), with the given number of other Routes. Allocated/op " +
		"is in MB of 1,000,000 bytes, as `go test` counts it; the time ratio compares the median time/op with that of " +
		"the smallest size of the same benchmark.")
	families := updateFamilies(in.update)
	if len(families) == 0 {
		d.para("The file holds no benchmark results.")
		return nil
	}
	var fig []series
	for _, f := range families {
		if i := familyRank(f.name); i < len(knownFamilies) {
			d.para("**`%s`**: %s", f.name, knownFamilies[i].about)
		} else {
			d.para("**`%s`**", f.name)
		}
		t := f.table()
		t.write(&d.b)
		if s, ok := f.series(); ok {
			fig = append(fig, s)
		}
	}
	if len(fig) == 0 {
		return nil
	}
	return d.figure("update-time.png", "time of one endpoint update against the number of Routes, one line per benchmark", figure{
		title: "One endpoint update", xLabel: "Routes", yLabel: "ms per update", series: fig, logX: true,
	})
}

// scaled multiplies every value of s by f.
func scaled(s spread, f float64) spread {
	return spread{Min: s.Min * f, Med: s.Med * f, Max: s.Max * f, N: s.N}
}
