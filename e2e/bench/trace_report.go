//go:build e2e

package bench

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/haroute/haroute/e2e/bench/results"
)

// summary is the one-line account of a run for the test log.
func summary(o runOutcome) string {
	c2t := "none observed"
	if n := len(o.ChangeToTraffic); n > 0 {
		sorted := slices.Sorted(slices.Values(o.ChangeToTraffic))
		c2t = fmt.Sprintf("n=%d p50 %s p90 %s max %s", n, ms(median(sorted)), ms(sorted[n*9/10]), ms(sorted[n-1]))
	}
	if o.unobserved > 0 {
		c2t += fmt.Sprintf(", %d not observed", o.unobserved)
	}
	return fmt.Sprintf("TRACE %s %s #%d: %d changes, %d reloads, %d runtime ops; change→traffic %s; "+
		"%d requests, %d failed, %d wrong, %d stale; long-lived %d open of %d; HAProxy ≤%d procs ≤%.1f MiB; "+
		"haroute %.2f s CPU ≤%.1f MiB",
		o.Trace, o.Mode, o.Repeat, o.Changes, o.Reloads, o.RuntimeOps, c2t,
		o.Requests, o.Failed, o.Wrong, o.stale, o.LongLived, o.opened, o.HAProxyProcsMax, o.HAProxyRSSMaxMB,
		o.HarouteCPU, o.HarouteRSSMaxMB)
}

// ms formats seconds as milliseconds.
func ms(s float64) string { return fmt.Sprintf("%.0fms", s*1000) }

// median returns the median of sorted values (0 for none).
func median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	default:
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
}

// spread formats the min/median/max of values with format f.
func spread(values []float64, f func(float64) string) string {
	if len(values) == 0 {
		return "-"
	}
	s := slices.Sorted(slices.Values(values))
	return f(s[0]) + "/" + f(median(s)) + "/" + f(s[len(s)-1])
}

// table returns the min/median/max over the repeats of each trace × mode, in the order they ran.
func table(runs []results.TraceRun) string {
	type key struct{ trace, mode string }
	var keys []key
	groups := map[key][]results.TraceRun{}
	for _, r := range runs {
		k := key{r.Trace, r.Mode}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "trace\tmode\tn\treloads\truntime ops\tc→t p50 ms\tc→t max ms\trequests\tfailed\twrong\tlong-lived\tHAProxy procs\tHAProxy MiB\tharoute CPU s\tharoute MiB")
	integer := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	tenth := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	millis := func(v float64) string { return fmt.Sprintf("%.0f", v*1000) }
	for _, k := range keys {
		g := groups[k]
		col := func(f func(results.TraceRun) float64) []float64 {
			out := make([]float64, 0, len(g))
			for _, r := range g {
				out = append(out, f(r))
			}
			return out
		}
		p50 := col(func(r results.TraceRun) float64 { return median(slices.Sorted(slices.Values(r.ChangeToTraffic))) })
		most := col(func(r results.TraceRun) float64 {
			if len(r.ChangeToTraffic) == 0 {
				return 0
			}
			return slices.Max(r.ChangeToTraffic)
		})
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.trace, k.mode, len(g),
			spread(col(func(r results.TraceRun) float64 { return float64(r.Reloads) }), integer),
			spread(col(func(r results.TraceRun) float64 { return float64(r.RuntimeOps) }), integer),
			spread(p50, millis), spread(most, millis),
			spread(col(func(r results.TraceRun) float64 { return float64(r.Requests) }), integer),
			spread(col(func(r results.TraceRun) float64 { return float64(r.Failed) }), integer),
			spread(col(func(r results.TraceRun) float64 { return float64(r.Wrong) }), integer),
			spread(col(func(r results.TraceRun) float64 { return float64(r.LongLived) }), integer),
			spread(col(func(r results.TraceRun) float64 { return float64(r.HAProxyProcsMax) }), integer),
			spread(col(func(r results.TraceRun) float64 { return r.HAProxyRSSMaxMB }), tenth),
			spread(col(func(r results.TraceRun) float64 { return r.HarouteCPU }), func(v float64) string { return fmt.Sprintf("%.2f", v) }),
			spread(col(func(r results.TraceRun) float64 { return r.HarouteRSSMaxMB }), tenth))
	}
	_ = w.Flush()
	return b.String()
}
