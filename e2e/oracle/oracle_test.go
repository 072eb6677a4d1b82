package oracle

import (
	"flag"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/mapping/plan"
)

var (
	seedFlag  = flag.Uint64("oracle.seed", 20261103, "seed of the oracle's and the churn test's random walks")
	stepsFlag = flag.Int("oracle.steps", 200, "steps of the oracle's random walk (at least 1)")
)

// Sizes of the oracle.
const (
	httpBackends  = 48
	tlsBackends   = 24
	spareBackends = 2 // small, so that pool exhaustion happens now and then
	askWorkers    = 8
	maxShown      = 12 // differences shown per kind in a failure
)

// TestOracle is the equivalence oracle: after every step of a seeded random walk, HAProxy A (driven
// by runtime operations, reloaded only for structural plans) and a fresh HAProxy B (started from the
// rendered files of the same desired state) must hold the same state per Route and give the same
// answers, and A must have reloaded exactly on the structural steps.
func TestOracle(t *testing.T) {
	seed, steps := *seedFlag, *stepsFlag
	if steps < 1 {
		t.Fatalf("-oracle.steps=%d: want at least 1", steps)
	}
	t.Logf("seed %d (-oracle.seed), %d steps (-oracle.steps)", seed, steps)
	ctx := t.Context()

	bed := NewBed(t, httpBackends, tlsBackends)
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = spareBackends
	wk := NewWalker(seed, NewWorld(bed.Addrs, string(bed.ServiceCA.PEM())), WalkOptionsFor(opts, bed.Issuer(t)))
	if err := SeedRoutes(wk); err != nil {
		t.Fatal(err)
	}
	drv := NewDriver(t, opts, bed.DefaultCertPEM)
	clientA := testbed.NewClient(t, opts.HTTPPort, opts.HTTPSPort, nil)
	stats := NewStats()
	feel := NewFeel(bed.Addrs)
	var freshTime, checkTime time.Duration

	for step := 0; step <= steps; step++ {
		m := Mutation{Kind: "seed", Detail: "initial routes"}
		if step > 0 {
			m = wk.Step()
		}
		in := wk.World.Input()
		res, err := drv.Step(ctx, in)
		stats.Record(m, res)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Logf("figures up to the failure: %s\n%s", stats.Summary(), feel.Stats.String())
			t.Fatalf("seed %d, step %d (%s)\nplan: %s\n"+format, append([]any{seed, step, m, DescribePlan(res.Plan, 40)}, args...)...)
		}
		if err != nil {
			fail("driver: %v", err)
		}
		if res.ApplyErr != nil {
			fail("runtime path failed: %v", res.ApplyErr)
		}
		if k := res.Reason.Kind; k == plan.TemplateChanged || k == plan.DiffRefused {
			// The default template renders nothing a runtime plan changes outside the server lines,
			// and matched states always have a runtime way: either reason is a bug.
			fail("reload for %v with the default template", res.Reason)
		}
		if !res.Started {
			want := 0
			if res.Plan.NeedsReload() {
				want = 1
			}
			if got := res.ReloadsAfter - res.ReloadsBefore; got != want {
				fail("A's reload counter rose by %d (%d → %d), want %d", got, res.ReloadsBefore, res.ReloadsAfter, want)
			}
		}

		if res.Plan.NeedsReload() && step > 0 {
			t.Logf("step %d (%s): reload: %v", step, m, res.Plan.Structural)
		}

		began := time.Now()
		scope := NewScope(t)
		b, err := StartFresh(scope, in, opts, bed.DefaultCertPEM)
		if err != nil {
			fail("start B: %v", err)
		}
		freshTime += time.Since(began)
		began = time.Now()
		chk, err := CheckStep(ctx, drv, clientA, b, wk.World.Owners(), askWorkers, feel, m.Route)
		checkTime += time.Since(began)
		scope.Close()
		if err != nil {
			fail("%v", err)
		}
		stats.Requests += chk.Requests
		if chk.Failed() {
			fail("%s", chk.Describe(maxShown))
		}
	}
	t.Logf("oracle: %s\nwhat users feel: %s\ntime starting B: %v; observing and asking: %v", stats.Summary(), feel.Stats.String(), freshTime.Round(time.Millisecond), checkTime.Round(time.Millisecond))
	// The controller plans most changes from the last desired state (plan.ComputeDelta): a walk
	// that never does proves nothing about that path.
	if steps >= 20 && stats.Delta == 0 {
		t.Errorf("no step of %d was planned from the last desired state", steps)
	}
}
