package controller

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

// TestRealHAProxyDriftAndExternalReload runs the controller against a real HAProxy in sidecar shape
// (no Restarts channel): a hand-made weight change is repaired through runtime ops, and a reload the
// controller did not send is detected through show proc and answered with a resync (a reload).
func TestRealHAProxyDriftAndExternalReload(t *testing.T) {
	const wait = 15 * time.Second
	ctx := context.Background()
	ca := testkit.NewCA(t, "controller CA")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	in := webInput("127.0.0.11", "127.0.0.12")

	// What `haroute run` does first: the first config from the first snapshot, HAProxy on it.
	desired, _ := mapping.Translate(in, opts)
	dir := testkit.TempDir(t)
	up, err := haproxy.New(haproxy.Config{
		Dir:    dir,
		Render: render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")},
		Binary: testkit.HAProxyBinary(),
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := up.WriteInitial(desired)
	if err != nil {
		t.Fatal(err)
	}
	hp := testbed.Start(t, dir)
	admin := socket.NewAdmin(hp.AdminSocket, socket.Options{})
	master := socket.NewMaster(hp.MasterSocket, socket.Options{})

	src := newFakeSource(in)
	src.synced.Store(true)
	c := &Controller{
		Source: src, Options: opts, HAProxy: up,
		Holdoff: 20 * time.Millisecond, MaxHoldoff: 200 * time.Millisecond,
		DriftInterval: 200 * time.Millisecond, Metrics: NewMetrics(),
	}
	run(t, c)
	waitFor(t, wait, "ready", c.Ready)
	if err := c.Healthy(ctx); err != nil {
		t.Fatalf("Healthy: %v", err)
	}
	if got := series(c.Metrics.Reloads); got != 0 {
		t.Fatalf("%d reload series after the first sync of an HAProxy started from the same state", got)
	}

	// Drift: someone changes a server weight by hand.
	b := first.State.Backend(first.State.Routes[0].Backend)
	srv := b.Servers[0]
	if err := socket.SetServerWeight(ctx, admin, b.Name, srv.Name, 7); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wait, "the drift repaired", func() bool {
		states, err := socket.ShowServersState(ctx, admin, b.Name)
		if err != nil {
			return false
		}
		for _, s := range states {
			if s.Server == srv.Name {
				return s.UserWeight == int(srv.Weight) && value(t, c.Metrics.DriftRepairs) >= 1
			}
		}
		return false
	})
	if got := value(t, c.Metrics.RuntimeOps.WithLabelValues("set_server_weight", "ok")); got != 1 {
		t.Fatalf("set_server_weight ok = %v, want 1", got)
	}

	// A reload the controller did not send: its runtime state may be gone, so it resyncs.
	if _, err := master.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wait, "the resync after an external reload", func() bool {
		return value(t, c.Metrics.Reloads.WithLabelValues(string(plan.Restart))) == 1 && up.Applied() != nil
	})
	if got := value(t, c.Metrics.Workers); got < 1 {
		t.Fatalf("haroute_haproxy_workers = %v", got)
	}
	waitFor(t, wait, "healthy after the resync", func() bool { return c.Healthy(ctx) == nil })

	// A reload someone else sent that failed: the worker that served keeps serving with its runtime
	// state, so nothing is resynced (a 3.1+ master lists it under "# old workers" then).
	good, err := os.ReadFile(hp.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hp.ConfigPath, append(slices.Clone(good), "\nbogus_keyword\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := master.ShowProc(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := master.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wait, "the failed reload", func() bool {
		ps, err := master.ShowProc(ctx)
		return err == nil && ps.Master.Reloads > before.Master.Reloads
	})
	if err := os.WriteFile(hp.ConfigPath, good, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * c.DriftInterval) // several periodic show proc checks; none may see a restart
	if got := value(t, c.Metrics.Reloads.WithLabelValues(string(plan.Restart))); got != 1 {
		t.Fatalf("haroute_reloads_total{reason=Restart} = %v after an external failed reload, want still 1", got)
	}
}
