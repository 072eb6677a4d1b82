//go:build e2e

package bench

import (
	"context"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench/results"
	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Paces and bounds of the held-connections measurement.
const (
	// heldChanges EndpointSlice updates, one every heldEvery, while one more long-lived connection
	// opens every longLivedEvery.
	heldChanges = 30
	heldEvery   = time.Second
	// heldApplyTimeout bounds the wait for every change to reach traffic.
	heldApplyTimeout = 2 * time.Minute
	heldPoll         = 200 * time.Millisecond
	// heldQuietRounds bounds the reload intervals waited for the reload count to stop moving.
	heldQuietRounds = 6
	heldAPITimeout  = 5 * time.Minute
	// benchReloadInterval is both routers' reload interval: OpenShift's default.
	benchReloadInterval = 5 * time.Second
)

// mib converts kB to MiB.
func mib(kB int) float64 { return float64(kB) / 1024 }

// heldRouter is what measureHeld needs of a router, stock or haroute.
type heldRouter struct {
	name        string
	pid         int
	httpPort    int
	client      *testkit.Client
	haproxyPIDs func() ([]int, error)
	reloads     func() int
}

// measureHeld measures a router that serves w under what makes reloads costly: it opens one more
// long-lived connection a second to Route 0 while it moves the endpoints of one other Route a second
// to other pods (pod IP churn), heldChanges times; it waits until traffic shows every change and the
// router has stopped reloading, then measures HAProxy's processes (old ones kept alive by the
// connections they hold included) with every connection still open, and puts the endpoints back.
func measureHeld(t *testing.T, c *framework.Cluster, w *Workload, r heldRouter) results.HeldPoint {
	t.Helper()
	if w.Routes < 2 {
		t.Fatalf("held connections: want at least 2 Routes (one holds the connections), got %d", w.Routes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), heldAPITimeout)
	defer cancel()
	reloads0 := r.reloads()
	ll := startLongLived(r.httpPort, w.Host(0), backendNames(w.BackendsOf(0))...)
	defer ll.Close()
	type change struct {
		route    int
		backends []*framework.Backend
	}
	var changes []change
	tick := time.NewTicker(heldEvery)
	defer tick.Stop()
	for k := range heldChanges {
		i := 1 + k%(w.Routes-1)
		now, err := w.Shift(ctx, c, i, 1+k/(w.Routes-1))
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		changes = append(changes, change{i, now})
		<-tick.C
	}
	ll.Stop()
	// A Route changed twice keeps its last endpoints.
	last := map[int][]*framework.Backend{}
	for _, ch := range changes {
		last[ch.route] = ch.backends
	}
	if err := testkit.Eventually(heldApplyTimeout, heldPoll, func() error {
		for i, bs := range last {
			if err := checkAnswerFrom(r.client, w.Host(i), bs); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("%s: not every endpoint change reached traffic: %v", r.name, err)
	}
	// The stock router coalesces changes over its reload interval: wait until a whole interval
	// passes without a reload.
	for n, prev := 0, r.reloads(); n < heldQuietRounds; n++ {
		time.Sleep(benchReloadInterval)
		cur := r.reloads()
		if cur == prev {
			break
		}
		prev = cur
	}
	open, opened, failed, lastErr := ll.Open()
	if failed > 0 || open < opened {
		t.Logf("%s: long-lived connections: %d open of %d opened, %d could not be opened (last: %v)", r.name, open, opened, failed, lastErr)
	}
	pids, err := r.haproxyPIDs()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Measure(r.pid, pids)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the endpoints of the start, for the next router.
	for i := range last {
		if _, err := w.Shift(ctx, c, i, 0); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
	p := results.HeldPoint{
		Changes: len(changes), Reloads: r.reloads() - reloads0, Connections: open, Procs: len(pids),
		HAProxyMB: mib(m.HAProxyRSS), HAProxyPSSMB: mib(m.HAProxyPSS),
	}
	t.Logf("FIGURES held router=%s routes=%d endpoints=%d changes=%d reloads=%d connections=%d haproxy_procs=%d haproxy_rss_kB=%d haproxy_pss_kB=%d",
		r.name, w.Routes, w.Endpoints, p.Changes, p.Reloads, p.Connections, p.Procs, m.HAProxyRSS, m.HAProxyPSS)
	return p
}
