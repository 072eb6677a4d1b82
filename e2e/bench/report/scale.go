package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/haroute/haroute/e2e/bench/results"
)

// size is a workload size: Routes × endpoints per Route.
type size struct{ routes, endpoints int }

func (s size) String() string {
	return fmtNum(float64(s.routes), 0) + " × " + fmtNum(float64(s.endpoints), 0)
}

func compareSize(a, b size) int {
	return cmp.Or(cmp.Compare(a.routes, b.routes), cmp.Compare(a.endpoints, b.endpoints))
}

// groupBy groups items by key, the groups in key order and the items in their order.
func groupBy[T any](items []T, key func(T) size) ([]size, map[size][]T) {
	g := make(map[size][]T)
	var keys []size
	for _, it := range items {
		k := key(it)
		if _, ok := g[k]; !ok {
			keys = append(keys, k)
		}
		g[k] = append(g[k], it)
	}
	slices.SortFunc(keys, compareSize)
	return keys, g
}

// pick is the spread of f over items.
func pick[T any](items []T, f func(T) float64) spread {
	vs := make([]float64, len(items))
	for i, it := range items {
		vs[i] = f(it)
	}
	return spreadOf(vs)
}

// pickPositive is pick over the items where f is positive (0 means not measured).
func pickPositive[T any](items []T, f func(T) float64) spread {
	var vs []float64
	for _, it := range items {
		if v := f(it); v > 0 {
			vs = append(vs, v)
		}
	}
	return spreadOf(vs)
}

// pickAll is the spread of every sample f returns over items.
func pickAll[T any](items []T, f func(T) []float64) spread {
	var vs []float64
	for _, it := range items {
		vs = append(vs, f(it)...)
	}
	return spreadOf(vs)
}

func scaleSection(d *doc, in *inputs) error {
	d.b.WriteString("## Scale: haroute at growing numbers of Routes\n\n")
	if in.scale == nil {
		notMeasured(d, results.ScaleFile)
		return nil
	}
	reproduce(d, in.scale.Command)
	d.para("Memory once every Route is served and idle; start → served until every Route answers (a sample is " +
		"requested), start → status until every Route's status is written; change → traffic from the API write to " +
		"the first request that saw it. For the samples of one size (one per repeat, or per scrape of `/metrics`) " +
		"the cells give their minimum, median and maximum.")
	if len(in.scale.Points) == 0 {
		d.para("The file holds no points.")
		return nil
	}
	keys, g := groupBy(in.scale.Points, func(p results.ScalePoint) size { return size{p.Routes, p.Endpoints} })
	t := table{header: []string{"Routes × endpoints", "haroute RSS (MiB)", "HAProxy RSS (MiB)", "HAProxy PSS (MiB)",
		"start → served", "start → status", "endpoint change → traffic", "Route add → traffic", "`/metrics` scrape", "`/metrics` size"}}
	for _, k := range keys {
		ps := g[k]
		t.add(k.String(),
			fmtSpread(pick(ps, func(p results.ScalePoint) float64 { return p.HarouteRSSMB }), fmtMiB),
			fmtSpread(pick(ps, func(p results.ScalePoint) float64 { return p.HAProxyRSSMB }), fmtMiB),
			fmtSpread(pickPositive(ps, func(p results.ScalePoint) float64 { return p.HAProxyPSSMB }), fmtMiB),
			fmtDurationSpread(pickPositive(ps, func(p results.ScalePoint) float64 { return p.StartToServed })),
			fmtDurationSpread(pickPositive(ps, func(p results.ScalePoint) float64 { return p.StartToStatus })),
			fmtDurationSpread(pickAll(ps, func(p results.ScalePoint) []float64 { return p.EndpointChange })),
			fmtDurationSpread(pickAll(ps, func(p results.ScalePoint) []float64 { return p.RouteAdd })),
			fmtDurationSpread(pickAll(ps, func(p results.ScalePoint) []float64 { return p.MetricsScrape })),
			fmtSpread(pickPositive(ps, func(p results.ScalePoint) float64 { return float64(p.MetricsBytes) }), fmtBytes),
		)
	}
	t.write(&d.b)
	return scaleFigure(d, keys, g)
}

// scaleFigure plots memory against Routes, one line per figure and number of endpoints per Route.
func scaleFigure(d *doc, keys []size, g map[size][]results.ScalePoint) error {
	var endpoints []int
	for _, k := range keys {
		if !slices.Contains(endpoints, k.endpoints) {
			endpoints = append(endpoints, k.endpoints)
		}
	}
	slices.Sort(endpoints)
	figures := []struct {
		name string
		f    func(results.ScalePoint) float64
	}{
		{"haroute RSS", func(p results.ScalePoint) float64 { return p.HarouteRSSMB }},
		{"HAProxy RSS", func(p results.ScalePoint) float64 { return p.HAProxyRSSMB }},
		{"HAProxy PSS", func(p results.ScalePoint) float64 { return p.HAProxyPSSMB }},
	}
	var ss []series
	for _, fig := range figures {
		for _, e := range endpoints {
			s := series{name: fig.name, points: true}
			if len(endpoints) > 1 {
				s.name += fmt.Sprintf(" (%d endpoints)", e)
			}
			for _, k := range keys {
				if v := pick(g[k], fig.f); k.endpoints == e && v.Med > 0 {
					s.xs = append(s.xs, float64(k.routes))
					s.ys = append(s.ys, v.Med)
				}
			}
			if len(s.xs) > 0 {
				ss = append(ss, s)
			}
		}
	}
	if len(ss) == 0 {
		return nil
	}
	return d.figure("scale-memory.png", "memory against the number of Routes", figure{
		title: "Memory, idle, every Route served", xLabel: "Routes", yLabel: "MiB (median)", series: ss, logX: true,
	})
}

// fmtBytes formats a size in bytes in KiB or MiB.
func fmtBytes(b float64) string {
	if b >= 1<<20 {
		return fmtNum(b/(1<<20), 1) + " MiB"
	}
	return fmtNum(b/(1<<10), 0) + " KiB"
}

// fileSafe turns a name into a file name part: lower-case letters, digits and dashes.
func fileSafe(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
