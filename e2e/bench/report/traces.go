package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/haroute/haroute/e2e/bench/results"
)

// traceOrder and modeOrder are the order of the report; others follow, sorted by name.
var (
	traceOrder = []string{"rolling", "scale", "churn", "preview", "burst", "certs", "balance"}
	modeOrder  = []string{results.ModeRuntime, results.ModeReload5s, results.ModeReload1s}
)

// ordered returns the keys of m, those named in first in that order, then the rest sorted.
func ordered[V any](m map[string]V, first []string) []string {
	var out []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	var rest []string
	for k := range m {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// byTraceAndMode groups runs by trace and mode, each group sorted by repeat.
func byTraceAndMode(runs []results.TraceRun) map[string]map[string][]results.TraceRun {
	g := make(map[string]map[string][]results.TraceRun)
	for _, r := range runs {
		if g[r.Trace] == nil {
			g[r.Trace] = make(map[string][]results.TraceRun)
		}
		g[r.Trace][r.Mode] = append(g[r.Trace][r.Mode], r)
	}
	for _, modes := range g {
		for _, rs := range modes {
			slices.SortStableFunc(rs, func(a, b results.TraceRun) int { return cmp.Compare(a.Repeat, b.Repeat) })
		}
	}
	return g
}

// runSpread is the spread over runs of one figure of each run; runs for which ok is false are left out.
func runSpread(runs []results.TraceRun, f func(results.TraceRun) (float64, bool)) spread {
	var vs []float64
	for _, r := range runs {
		if v, ok := f(r); ok {
			vs = append(vs, v)
		}
	}
	return spreadOf(vs)
}

// always wraps a figure every run has.
func always(f func(results.TraceRun) float64) func(results.TraceRun) (float64, bool) {
	return func(r results.TraceRun) (float64, bool) { return f(r), true }
}

// changePercentile is the p-th percentile of one run's change → traffic latencies.
func changePercentile(p float64) func(results.TraceRun) (float64, bool) {
	return func(r results.TraceRun) (float64, bool) { return percentile(r.ChangeToTraffic, p) }
}

// medianRun is the run with the median number of reloads (the lower one of an even count; ties go to
// the lower repeat): the one the plots over time show.
func medianRun(runs []results.TraceRun) results.TraceRun {
	s := slices.Clone(runs)
	slices.SortStableFunc(s, func(a, b results.TraceRun) int {
		return cmp.Or(cmp.Compare(a.Reloads, b.Reloads), cmp.Compare(a.Repeat, b.Repeat))
	})
	return s[(len(s)-1)/2]
}

func traceSection(d *doc, in *inputs) error {
	d.b.WriteString("## Traces: changes under load, in runtime and reload modes\n\n")
	if in.traces == nil {
		notMeasured(d, results.TracesFile)
		return nil
	}
	reproduce(d, in.traces.Command)
	d.para("Each trace makes the same API writes under load in each mode: `%s` (haroute's default: runtime API, "+
		"reloads only for what it cannot express) and `%s` / `%s` (`--mode reload`: a reload for every change, "+
		"coalesced over the stock router's 5 s interval, or 1 s). Change → traffic is the time from an API write to "+
		"the first request that saw it: p50 and p99 are computed per run, then summarized over the runs. Failed "+
		"requests got an error or a non-2xx answer; wrong ones were answered by a backend the Route did not have at the "+
		"time. The maxima are the largest seen by the samples taken every %s during the run.",
		results.ModeRuntime, results.ModeReload5s, results.ModeReload1s, fmtDuration(results.SampleInterval.Seconds()))
	if len(in.traces.Runs) == 0 {
		d.para("The file holds no runs.")
		return nil
	}
	groups := byTraceAndMode(in.traces.Runs)
	for _, trace := range ordered(groups, traceOrder) {
		if err := writeTrace(d, trace, groups[trace]); err != nil {
			return err
		}
	}
	return nil
}

func writeTrace(d *doc, trace string, modes map[string][]results.TraceRun) error {
	fmt.Fprintf(&d.b, "### %s\n\n", trace)
	var all []results.TraceRun
	for _, m := range ordered(modes, modeOrder) {
		all = append(all, modes[m]...)
	}
	changes := runSpread(all, always(func(r results.TraceRun) float64 { return float64(r.Changes) }))
	requests := runSpread(all, always(func(r results.TraceRun) float64 { return float64(r.Requests) }))
	d.para("API writes per run: %s; requests per run: %s.", fmtSpread(changes, fmtCount), fmtSpread(requests, fmtCount))
	t := table{header: []string{"mode", "runs", "reloads", "runtime ops", "change → traffic p50", "p99",
		"failed", "wrong", "HAProxy processes (max)", "HAProxy RSS max (MiB)", "haroute CPU (s)", "haroute RSS max (MiB)"}}
	for _, mode := range ordered(modes, modeOrder) {
		rs := modes[mode]
		t.add(mode, fmtNum(float64(len(rs)), 0),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return float64(r.Reloads) })), fmtCount),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return float64(r.RuntimeOps) })), fmtCount),
			fmtDurationSpread(runSpread(rs, changePercentile(50))),
			fmtDurationSpread(runSpread(rs, changePercentile(99))),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return float64(r.Failed) })), fmtCount),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return float64(r.Wrong) })), fmtCount),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return float64(r.HAProxyProcsMax) })), fmtCount),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return r.HAProxyRSSMaxMB })), fmtMiB),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return r.HarouteCPU })), fmtSeconds),
			fmtSpread(runSpread(rs, always(func(r results.TraceRun) float64 { return r.HarouteRSSMaxMB })), fmtMiB),
		)
	}
	t.write(&d.b)
	return traceFigures(d, trace, modes)
}

// traceFigures plots a trace: reloads and HAProxy's memory over time (the median run of each mode)
// and the distribution of change → traffic (every run of each mode).
func traceFigures(d *doc, trace string, modes map[string][]results.TraceRun) error {
	var reloads, rss, cdf []series
	for _, mode := range ordered(modes, modeOrder) {
		r := medianRun(modes[mode])
		var ts, rl, mem []float64
		for _, s := range r.Samples {
			ts = append(ts, s.T)
			rl = append(rl, float64(s.Reloads))
			mem = append(mem, s.HAProxyRSSMB)
		}
		name := fmt.Sprintf("%s (repeat %d)", mode, r.Repeat)
		if len(ts) > 0 {
			reloads = append(reloads, series{name: name, xs: ts, ys: rl})
			rss = append(rss, series{name: name, xs: ts, ys: mem})
		}
		var lat []float64
		for _, run := range modes[mode] {
			lat = append(lat, run.ChangeToTraffic...)
		}
		if xs, ys := ecdf(lat); len(xs) > 0 {
			cdf = append(cdf, series{name: mode, xs: xs, ys: ys})
		}
	}
	if len(reloads) > 0 {
		d.para("Over time, one line per mode: the run with the median number of reloads.")
		if err := d.figure("trace-"+fileSafe(trace)+"-reloads.png", trace+": HAProxy reloads over time", figure{
			title: trace + ": reloads since the trace started", xLabel: "seconds since the first change",
			yLabel: "reloads", series: reloads, steps: true,
		}); err != nil {
			return err
		}
		if err := d.figure("trace-"+fileSafe(trace)+"-rss.png", trace+": HAProxy memory over time", figure{
			title: trace + ": HAProxy RSS, all processes", xLabel: "seconds since the first change",
			yLabel: "MiB", series: rss, steps: true,
		}); err != nil {
			return err
		}
	}
	if len(cdf) > 0 {
		if err := d.figure("trace-"+fileSafe(trace)+"-latency.png", trace+": change to traffic, distribution", figure{
			title: trace + ": change → traffic, all runs", xLabel: "seconds from the API write to traffic",
			yLabel: "fraction of changes", series: cdf, steps: true, logX: true, legendLowRight: true,
		}); err != nil {
			return err
		}
	}
	return nil
}

// ecdf returns the empirical distribution of values: sorted values and the fraction at or below each.
func ecdf(values []float64) (xs, ys []float64) {
	xs = finiteSorted(values)
	ys = make([]float64, len(xs))
	for i := range xs {
		ys[i] = float64(i+1) / float64(len(xs))
	}
	return xs, ys
}
