package faults

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/socket"
)

// Bounds of TestRouteBurst.
const (
	burstRoutes = 500
	// burstPool is the URL host every probe of the burst uses (the Route's host goes in the Host
	// header), so that they share the client's kept-alive connections.
	burstPool  = "burst.pool"
	burstRound = 20 * time.Millisecond
)

// TestRouteBurst writes burstRoutes Routes in one manifest file, waits until every one answers, then
// removes the file and waits until every one answers 503 again, under load on a Route that exists
// throughout: no request of the load fails or reaches a wrong backend, no backend holds a server
// twice, and only the base Route's server is left at the end. The reloads of each step (before 3.4
// the spare pool cannot hold the burst; 3.4 must not reload at all) and the time until all answer,
// and until all are gone, are logged.
func TestRouteBurst(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.55.1", "web")
	burst := testkit.StartHTTPBackend(t, "127.0.55.2", "burst")
	host := "base.burst.e2e.test"
	b := newBed(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("base", host, "web"),
		"service.yaml": testkit.ServiceYAML("web", web) + "---\n" + testkit.ServiceYAML("burst", burst),
	})
	r := b.StartManaged(testbed.FolderOpts{}, nil)
	r.WaitAnswer(host, "/", http.StatusOK, web.Name)
	load := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+host+"/", web.Name)
	time.Sleep(loadSettle)

	reloads := r.Reloads()
	added := time.Now()
	b.Write("burst.yaml", routesYAML("burst", burstRoutes, "burst"))
	waitAllAnswer(t, r, http.StatusOK, burst.Name)
	allServed := time.Now()
	if _, err := serverCheck(r); err != nil {
		t.Error(err)
	}
	addReloads := r.Reloads() - reloads

	removed := time.Now()
	b.Remove("burst.yaml")
	waitAllAnswer(t, r, http.StatusServiceUnavailable, "")
	allGone := time.Now()
	waitServers(t, r, testkit.Addrs(web))
	removeReloads := r.Reloads() - reloads - addReloads
	time.Sleep(loadSettle)
	f := stopLoad(load)
	load.Check(t, 1)
	t.Logf("%d Routes in one write: all answered %v after the write (%d reloads); all 503 %v after their removal (%d reloads)",
		burstRoutes, allServed.Sub(added).Round(time.Millisecond), addReloads, allGone.Sub(removed).Round(time.Millisecond), removeReloads)
	figures(t, fmt.Sprintf("burst of %d Routes", burstRoutes), f, "all served after", allServed.Sub(added), addReloads+removeReloads)
	// HAProxy 3.4 adds and deletes every Route's backend at runtime.
	if caps, err := socket.DetectCapabilities(context.Background(), r.Admin); err != nil {
		t.Errorf("HAProxy's version: %v", err)
	} else if caps.DynamicBackends && caps.SafeBackendDeletion && addReloads+removeReloads != 0 {
		t.Errorf("HAProxy %s reloaded %d times for the burst (adds %d, removals %d), want none", caps.Version, addReloads+removeReloads, addReloads, removeReloads)
	}
}

// waitAllAnswer waits (bounded by applyTimeout) until every Route of the burst answers status from
// backend ("" for HAProxy itself).
func waitAllAnswer(t *testing.T, r *testbed.RouterProcess, status int, backend string) {
	t.Helper()
	pending := make([]string, burstRoutes)
	for i := range pending {
		pending[i] = hostOf("burst", i)
	}
	var last string
	deadline := time.Now().Add(applyTimeout)
	for len(pending) > 0 && time.Now().Before(deadline) {
		var next []string
		for _, h := range pending {
			resp, err := r.Client.Do(http.MethodGet, "http://"+burstPool+"/", http.Header{"Host": {h}})
			if err != nil || resp.Status != status || resp.Backend != backend {
				if err != nil {
					last = err.Error()
				} else {
					last = fmt.Sprintf("%s: %d from %q", h, resp.Status, resp.Backend)
				}
				next = append(next, h)
			}
		}
		pending = next
		if len(pending) > 0 {
			time.Sleep(burstRound)
		}
	}
	if len(pending) > 0 {
		t.Fatalf("%d of %d Routes do not answer %d from %q within %v; last: %s", len(pending), burstRoutes, status, backend, applyTimeout, last)
	}
}
