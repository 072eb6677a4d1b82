package main

import (
	"cmp"
	"slices"

	"github.com/haroute/haroute/e2e/bench/results"
)

// updateCommand is what the bench target runs to write update.txt.
const updateCommand = "go test ./runtime/haproxy -run XXX -bench UpdateOneEndpoint -benchmem -benchtime 20x -count 3 > bin/bench/update.txt"

// updateSize is the result lines of one benchmark size.
type updateSize struct {
	name   string // the benchmark's name, -N suffix removed
	routes int    // from its routes=N element; 0 when it has none
	lines  []benchLine
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

func updateSection(d *doc, in *inputs) error {
	d.b.WriteString("## Per-change cost: one endpoint through the runtime path\n\n")
	if !in.updateFound {
		notMeasured(d, results.UpdateFile)
		return nil
	}
	d.para("Measured with `%s`.", updateCommand)
	d.para("`BenchmarkUpdateOneEndpoint`: one endpoint added or removed through `runtime/haproxy`'s Instance (plan, " +
		"render, write the changed files through, runtime ops) against a real HAProxy (the tests' default: `$HAROUTE_HAPROXY`, " +
		"else Debian's `/usr/sbin/haproxy`), with the given number of other Routes. Allocated/op is in MB of 1,000,000 bytes, as `go test` counts it; the ratio compares the median " +
		"time/op with that of the smallest size.")
	sizes := updateSizes(in.update)
	if len(sizes) == 0 {
		d.para("The file holds no benchmark results.")
		return nil
	}
	base := sizes[0].metric("ns/op")
	t := table{header: []string{"Routes", "runs", "time/op (ms)", "allocated/op (MB)", "allocs/op", "time ratio"}}
	var fig series
	fig.name, fig.points = "median, with minimum and maximum", true
	for _, u := range sizes {
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
		if u.routes > 0 && ns.N > 0 {
			fig.xs = append(fig.xs, float64(u.routes))
			fig.ys = append(fig.ys, ns.Med/1e6)
			fig.lo = append(fig.lo, ns.Min/1e6)
			fig.hi = append(fig.hi, ns.Max/1e6)
		}
	}
	t.write(&d.b)
	if len(fig.xs) == 0 {
		return nil
	}
	return d.figure("update-time.png", "time of one endpoint update against the number of Routes", figure{
		title: "One endpoint update", xLabel: "Routes", yLabel: "ms per update", series: []series{fig}, logX: true,
	})
}

// scaled multiplies every value of s by f.
func scaled(s spread, f float64) spread {
	return spread{Min: s.Min * f, Med: s.Med * f, Max: s.Max * f, N: s.N}
}
