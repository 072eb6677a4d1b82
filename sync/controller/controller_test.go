package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/runtime/haproxy"
)

// run starts c.Run in the background; the test's cleanup cancels it and waits (bounded).
func run(t *testing.T, c *Controller) {
	t.Helper()
	if c.Log == nil {
		c.Log = testLogger(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Run did not return within 5s of cancel")
		}
	})
}

func newTestController(src *fakeSource, up *fakeHAProxy) *Controller {
	return &Controller{
		Source:        src,
		HAProxy:       up,
		Options:       mapping.DefaultOptions(),
		Holdoff:       20 * time.Millisecond,
		MaxHoldoff:    200 * time.Millisecond,
		DriftInterval: time.Hour,
		Metrics:       NewMetrics(),
	}
}

func TestNoTranslateBeforeSynced(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	up := newFakeHAProxy()
	c := newTestController(src, up)
	run(t, c)
	for range 5 {
		src.signal()
		time.Sleep(40 * time.Millisecond)
	}
	if n := src.snapshots.Load(); n != 0 {
		t.Fatalf("%d snapshots taken before the source synced", n)
	}
	if n := up.count("update"); n != 0 || c.Ready() {
		t.Fatalf("%d updates (ready %v) before the source synced", n, c.Ready())
	}
	src.synced.Store(true)
	// No further signal: the controller polls HasSynced and syncs by itself.
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })
	waitFor(t, time.Second, "ready", c.Ready)
	ups, _ := up.snapshot()
	if got := serversOf(ups[0], "demo", "web"); !slices.Equal(got, []string{"10.0.0.1"}) {
		t.Fatalf("first desired state serves %v, want [10.0.0.1]", got)
	}
}

func TestBurstIsCoalesced(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	c := newTestController(src, up)
	c.Holdoff, c.MaxHoldoff = 50*time.Millisecond, 500*time.Millisecond
	run(t, c)
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })
	before := src.snapshots.Load()

	for i := range 50 {
		addrs := []string{"10.0.0.1"}
		for k := range i % 7 {
			addrs = append(addrs, "10.0.1."+string(rune('1'+k)))
		}
		// Back to back: the burst must fit in one holdoff window however slow the machine is.
		src.set(webInput(addrs...))
	}
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the burst's final state", func() bool {
		ups, _ := up.snapshot()
		return slices.Equal(serversOf(ups[len(ups)-1], "demo", "web"), []string{"10.0.0.1", "10.0.0.2"})
	})
	time.Sleep(700 * time.Millisecond) // longer than MaxHoldoff: a late extra sync would show
	syncs := src.snapshots.Load() - before
	if syncs < 1 || syncs > 2 {
		t.Fatalf("a burst of 51 signals gave %d syncs, want 1–2", syncs)
	}
	if n := up.count("update"); n < 2 || n > 3 {
		t.Fatalf("%d updates in total, want 2–3", n)
	}
}

func TestIdenticalSnapshotSkipsUpdate(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	st := &fakeStatus{}
	c := newTestController(src, up)
	c.Status = st
	run(t, c)
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })
	for range 3 {
		before := src.snapshots.Load()
		src.set(webInput("10.0.0.1")) // new objects, same content
		waitFor(t, 3*time.Second, "a sync", func() bool { return src.snapshots.Load() > before })
	}
	time.Sleep(100 * time.Millisecond)
	if n := up.count("update"); n != 1 {
		t.Fatalf("%d updates for identical snapshots, want 1", n)
	}
	if st.count() < 4 {
		t.Fatalf("status written %d times, want once per sync (≥ 4)", st.count())
	}
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the update of a real change", func() bool { return up.count("update") == 2 })
}

func TestErrorIsRetried(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	up.fail = 3
	c := newTestController(src, up)
	run(t, c)
	// Attempts: 3 failures, then success; backoff 100 ms and up between them.
	waitFor(t, 10*time.Second, "a successful update after 3 failures", func() bool {
		ups, _ := up.snapshot()
		return len(ups) == 1
	})
	if n := up.count("update"); n != 4 {
		t.Fatalf("%d Update calls, want 4 (3 failures, 1 success)", n)
	}
	if got := value(t, c.Metrics.UpdateFailures.WithLabelValues(string(plan.Initial))); got != 3 {
		t.Fatalf("haroute_update_failures_total{reason=Initial} = %v, want 3", got)
	}
	waitFor(t, time.Second, "ready", c.Ready)
	ups, _ := up.snapshot()
	if got := serversOf(ups[0], "demo", "web"); !slices.Equal(got, []string{"10.0.0.1"}) {
		t.Fatalf("applied after retries serves %v", got)
	}
}

func TestChangesDuringBackoffAreNotLost(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	up.fail = 2
	c := newTestController(src, up)
	run(t, c)
	waitFor(t, 3*time.Second, "the first failure", func() bool { return up.count("update") >= 1 })
	src.set(webInput("10.0.0.9")) // arrives while the controller backs off
	waitFor(t, 10*time.Second, "the latest state applied", func() bool {
		ups, _ := up.snapshot()
		return len(ups) > 0 && slices.Equal(serversOf(ups[len(ups)-1], "demo", "web"), []string{"10.0.0.9"})
	})
	if ups, _ := up.snapshot(); len(ups) != 1 {
		t.Fatalf("%d successful updates, want 1 (the stale state is never applied)", len(ups))
	}
}

// TestReloadLabelsFromThePlan: every reload is counted under the one reason the HAProxy side gives
// it (here the plan's: Initial, then ReloadMode for a change in reload mode); an identical state
// changes nothing.
func TestReloadLabelsFromThePlan(t *testing.T) {
	up := newFakeHAProxy()
	up.reloadEveryChange = true
	src, c := startSynced(t, up, 0)
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the second update", func() bool { return up.count("update") == 2 })
	src.set(webInput("10.0.0.1", "10.0.0.2")) // identical: no update
	time.Sleep(150 * time.Millisecond)
	_, ev := up.snapshot()
	if want := []string{"update", "update"}; !slices.Equal(ev, want) {
		t.Fatalf("events %v, want %v", ev, want)
	}
	m := c.Metrics
	for reason, want := range map[plan.ReasonKind]float64{plan.Initial: 1, plan.ReloadMode: 1} {
		if got := value(t, m.Reloads.WithLabelValues(string(reason))); got != want {
			t.Fatalf("haroute_reloads_total{reason=%s} = %v, want %v", reason, got, want)
		}
	}
	if got := series(m.Reloads); got != 2 {
		t.Fatalf("%d reload reason series, want 2", got)
	}
	if got := series(m.RuntimeOps); got != 0 {
		t.Fatalf("%d runtime op series in reload mode, want 0", got)
	}
}

func TestRuntimeModeDoesNotForget(t *testing.T) {
	up := newFakeHAProxy()
	src, c := startSynced(t, up, 0)
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the second update", func() bool { return up.count("update") == 2 })
	if n := up.count("forget"); n != 0 {
		t.Fatalf("%d forgets in runtime mode", n)
	}
	if got := value(t, c.Metrics.RuntimeOps.WithLabelValues("add_server", "ok")); got != 1 {
		t.Fatalf("add_server ok = %v, want 1", got)
	}
	if got := value(t, c.Metrics.Reloads.WithLabelValues("Initial")); got != 1 {
		t.Fatalf("haroute_reloads_total{reason=Initial} = %v, want 1", got)
	}
}

func TestRestartForgetsAndUpdates(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	restarts := make(chan struct{}, 1)
	c := newTestController(src, up)
	c.Restarts = restarts
	// As `haroute run` does: HAProxy starts from files of the applied state.
	up.applied = plan.Compute(nil, translate(t, src.in)).Next
	restarts <- struct{}{} // the first start: HAProxy runs the applied files, nothing to forget
	run(t, c)
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })
	if n := up.count("forget"); n != 0 {
		t.Fatalf("the first start made the updater forget (%d)", n)
	}
	time.Sleep(100 * time.Millisecond)
	if n := up.count("forget"); n != 0 {
		t.Fatalf("the first start made the updater forget (%d)", n)
	}
	// A runtime change touches HAProxy; a restart after it loses that state.
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the runtime update", func() bool { return up.count("update") == 2 })
	restarts <- struct{}{}
	waitFor(t, 3*time.Second, "the resync, counted", func() bool {
		return up.count("update") == 3 && value(t, c.Metrics.Reloads.WithLabelValues("Restart")) == 1
	})
	_, ev := up.snapshot()
	if want := []string{"update", "update", "forget", "update"}; !slices.Equal(ev, want) {
		t.Fatalf("events %v, want %v", ev, want)
	}
}

// startSynced runs a controller over one Route of a synced source (with periodic checks every
// drift, when not 0) and waits for its first update.
func startSynced(t *testing.T, up *fakeHAProxy, drift time.Duration) (*fakeSource, *Controller) {
	t.Helper()
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	c := newTestController(src, up)
	if drift > 0 {
		c.DriftInterval = drift
	}
	run(t, c)
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })
	return src, c
}

// TestSidecarRestartFromProcesses: without a supervisor, the controller learns of restarts from the
// HAProxy side's process check, and resyncs when the runtime changes are lost.
func TestSidecarRestartFromProcesses(t *testing.T) {
	up := newFakeHAProxy()
	_, c := startSynced(t, up, 50*time.Millisecond)
	waitFor(t, 3*time.Second, "the worker gauge", func() bool { return value(t, c.Metrics.Workers) == 1 })
	waitFor(t, 3*time.Second, "drift checks", func() bool {
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.repairs >= 2
	})
	if n := up.count("forget"); n != 0 {
		t.Fatalf("forgot without a restart (%d)", n)
	}
	up.set(func(u *fakeHAProxy) { u.restart, u.workers = "workers [101] replaced by [102]", 2 })
	// The fake records an update before the loop counts it: wait for both.
	waitFor(t, 3*time.Second, "the resync, counted", func() bool {
		return up.count("update") == 2 && value(t, c.Metrics.Reloads.WithLabelValues(string(plan.Restart))) == 1
	})
	_, ev := up.snapshot()
	if i := slices.Index(ev, "forget"); i < 0 || ev[i+1] != "update" {
		t.Fatalf("events %v, want a forget followed by an update", ev)
	}
}

// TestDriftResyncReloads: drift that ops cannot repair makes the next sync reload, labelled Drift.
func TestDriftResyncReloads(t *testing.T) {
	up := newFakeHAProxy()
	_, c := startSynced(t, up, 50*time.Millisecond)
	up.set(func(u *fakeHAProxy) {
		u.repair = haproxy.RepairOutcome{Drift: []string{"backend b missing"}, Resync: true, Reason: plan.Reason{Kind: plan.Drift}}
	})
	// The fake records an update before the loop counts it: wait for both.
	waitFor(t, 3*time.Second, "the resync, counted", func() bool {
		return up.count("update") == 2 && value(t, c.Metrics.Reloads.WithLabelValues(string(plan.Drift))) == 1
	})
	if got := value(t, c.Metrics.DriftRepairs); got != 1 {
		t.Fatalf("haroute_drift_repairs_total = %v, want 1", got)
	}
}

func TestStatusFailureRetriedWithoutBlockingUpdates(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	st := &fakeStatus{fail: 1}
	c := newTestController(src, up)
	c.Status = st
	run(t, c)
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })
	waitFor(t, 5*time.Second, "the status retry", func() bool { return st.count() >= 2 })
	if !c.Ready() {
		t.Fatal("a status failure kept the controller from being ready")
	}
	if n := up.count("update"); n != 1 {
		t.Fatalf("%d updates; the status retry must not update HAProxy again", n)
	}
}

func TestDeferredDeletionsRetried(t *testing.T) {
	up := newFakeHAProxy()
	up.deferred = 1
	_, c := startSynced(t, up, 0)
	waitFor(t, 5*time.Second, "the retry of deferred deletions", func() bool { return up.count("update") == 2 })
	time.Sleep(deferredRetry + 500*time.Millisecond)
	if n := up.count("update"); n != 2 {
		t.Fatalf("%d updates; nothing is deferred any more, want 2", n)
	}
	if got := value(t, c.Metrics.RuntimeOps.WithLabelValues("del_server", "deferred")); got != 1 {
		t.Fatalf("del_server deferred = %v, want 1", got)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	src := newFakeSource(webInput())
	for name, c := range map[string]*Controller{
		"no source":  {HAProxy: newFakeHAProxy()},
		"no haproxy": {Source: src, Options: mapping.DefaultOptions()},
		"no options": {Source: src, HAProxy: newFakeHAProxy()},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Run(ctx)
		cancel()
		if err == nil {
			t.Errorf("%s: Run returned nil", name)
		} else if !strings.Contains(err.Error(), "controller:") {
			t.Errorf("%s: error %q", name, err)
		}
	}
}

func TestDiffCounts(t *testing.T) {
	a := translate(t, webInput("10.0.0.1", "10.0.0.2"))
	b := translate(t, webInput("10.0.0.1", "10.0.0.3"))
	d := diff(a, b)
	if d.routes != 1 || d.servers < 2 {
		t.Fatalf("totals %+v", d)
	}
	if d.routesChanged != 0 || d.backendsChanged != 1 || d.serversChanged != 2 {
		t.Fatalf("changes %+v, want 0 routes, 1 backend, 2 servers", d)
	}
	if d := diff(b, b); d.routesChanged+d.backendsChanged+d.serversChanged != 0 {
		t.Fatalf("no change counted as %+v", d)
	}
	if d := diff(nil, a); d.routesChanged != 1 || d.serversChanged != d.servers {
		t.Fatalf("from nothing: %+v", d)
	}
}

// TestDeferredReloadCarriesNewestState: a reload that may not be sent yet (RELOAD_INTERVAL) is not
// made with the files of the moment; the controller plans again when it may, from a fresh snapshot,
// so changes made meanwhile ride along in the same reload.
func TestDeferredReloadCarriesNewestState(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	c := newTestController(src, up)
	up.reloadEveryChange = true // every change is a reload
	run(t, c)
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })
	up.mu.Lock()
	up.readyAt = time.Now().Add(400 * time.Millisecond)
	up.mu.Unlock()
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the deferred reload", func() bool { return up.count("deferred") >= 1 })
	src.set(webInput("10.0.0.1", "10.0.0.2", "10.0.0.3"))
	waitFor(t, 5*time.Second, "the reload", func() bool { return up.count("update") == 2 })
	updates, ev := up.snapshot()
	if got := serversOf(updates[len(updates)-1], "demo", "web"); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}) {
		t.Fatalf("the reload carried servers %v, want the newest state's three (events %v)", got, ev)
	}
	for _, d := range updates {
		if got := serversOf(d, "demo", "web"); len(got) == 2 {
			t.Fatalf("the intermediate state was installed (events %v)", ev)
		}
	}
	if got := value(t, c.Metrics.Reloads.WithLabelValues(string(plan.ReloadMode))); got != 1 {
		t.Fatalf("haroute_reloads_total{reason=ReloadMode} = %v, want 1 (one for both changes)", got)
	}
}

// TestLowPoolIsRefilled: when an update reports a spare pool running low, the next sync refills it.
func TestLowPoolIsRefilled(t *testing.T) {
	up := newFakeHAProxy()
	up.low = 1
	src, _ := startSynced(t, up, 0)
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the refill", func() bool { return up.count("refill") == 1 })
	time.Sleep(100 * time.Millisecond) // no further refill once the pool is not low
	if _, ev := up.snapshot(); !slices.Equal(ev, []string{"update", "update", "refill"}) {
		t.Fatalf("events %v", ev)
	}
}
