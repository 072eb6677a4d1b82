package oracle

import (
	"fmt"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
)

// Sizes and bounds of the churn test.
const (
	churnSteps       = 300 // shortChurnSteps in short mode
	churnSpares      = 4   // per kind and balance; churn adds at most this many Routes per kind
	churnWorkers     = 4
	churnMaxRequests = 200000
	churnMaxTime     = 2 * time.Minute
	churnTimeout     = 2 * time.Second
	churnPause       = 5 * time.Millisecond // between steps, so that requests interleave with them
)

// TestChurnUnderTraffic sends requests to stable Routes while a walk of runtime-only mutations
// (Routes added and deleted, endpoints scaled, pod IPs and weights changed) runs: no request may fail,
// every answer must come from an endpoint of the requested Route in a step in effect while the
// request was in flight (or the step before: a removed server finishes what it was doing), and A
// must never reload.
func TestChurnUnderTraffic(t *testing.T) {
	seed, steps := *seedFlag, churnSteps
	if testing.Short() {
		steps = shortChurnSteps
	}
	t.Logf("seed %d (-oracle.seed), %d steps", seed, steps)
	ctx := t.Context()
	began := time.Now()

	bed := NewBed(t, httpBackends, tlsBackends)
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = churnSpares
	wopts := WalkOptionsFor(opts, bed.Issuer(t))
	wopts.Weights = ChurnWeights()
	wopts.SingleService = true
	wopts.MaxAddedPerKind = churnSpares
	wk := NewWalker(seed, NewWorld(bed.Addrs, string(bed.ServiceCA.PEM())), wopts)
	stable, err := AddStableRoutes(wk)
	if err != nil {
		t.Fatal(err)
	}
	wk.opts.MinRoutes = len(stable) // the walker keeps its own copy of the options

	drv := NewDriver(t, opts, bed.DefaultCertPEM)
	res, err := drv.Step(ctx, wk.World.Input())
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if len(res.Problems) > 0 {
		t.Fatalf("stable routes not admitted: %v", res.Problems)
	}
	reloads := res.ReloadsAfter
	targets, err := TargetsFor(wk.World, stable)
	if err != nil {
		t.Fatal(err)
	}
	hist := NewHistory(EndpointSets(wk.World, stable))
	traffic := StartTraffic(ctx, opts.HTTPPort, opts.HTTPSPort, targets, hist, churnWorkers, churnMaxRequests, churnTimeout)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			traffic.Stop()
		}
	}
	t.Cleanup(stop)

	stats := NewStats()
	deadline := began.Add(churnMaxTime)
	stableSteps := 0 // steps that changed a stable Route's endpoints or weights
	for step := 1; step <= steps && time.Now().Before(deadline); step++ {
		m := wk.Step()
		if wk.Stable(m.Route) {
			stableSteps++
		}
		hist.Begin(EndpointSets(wk.World, stable))
		res, err := drv.Step(ctx, wk.World.Input())
		hist.Complete()
		stats.Record(m, res)
		failed := ""
		switch {
		case err != nil:
			failed = fmt.Sprintf("driver: %v", err)
		case res.ApplyErr != nil:
			failed = fmt.Sprintf("plan: %s\nruntime path failed: %v", DescribePlan(res.Plan, 40), res.ApplyErr)
		case res.Plan.NeedsReload():
			failed = fmt.Sprintf("a runtime-only mutation gave a structural plan: %v", res.Plan.Structural)
		}
		if failed != "" {
			stop()
			t.Fatalf("seed %d, step %d (%s): %s\ntraffic so far: %s", seed, step, m, failed, traffic.Summary())
		}
		time.Sleep(churnPause)
	}
	stop()

	after, err := drv.Reloads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stats.Requests = traffic.Requests
	t.Logf("churn: %s\nsteps on stable routes: %d\ntraffic: %s; %v in all", stats.Summary(), stableSteps, traffic.Summary(), time.Since(began).Round(time.Millisecond))
	if stats.Steps < steps {
		t.Errorf("only %d of %d steps ran within %v", stats.Steps, steps, churnMaxTime)
	}
	if after != reloads {
		t.Errorf("A reloaded during the churn: reload counter %d → %d", reloads, after)
	}
	if traffic.Failed+traffic.Wrong > 0 {
		t.Errorf("seed %d: %d failed requests and %d answers from a wrong backend", seed, traffic.Failed, traffic.Wrong)
	}
	if traffic.Requests < steps {
		t.Errorf("only %d requests during %d steps: the client did not keep up", traffic.Requests, stats.Steps)
	}
}
