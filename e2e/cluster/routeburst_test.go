//go:build e2e

package cluster

import (
	"cmp"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
)

// The burst of new Routes: 100 Routes created 200 ms apart, as a rolling release of many apps or a
// tenant onboarding script does, on top of burstExisting Routes (HAROUTE_BURST_EXISTING; 1005 for the
// large trace of docs/bench.md), with OpenShift's default RELOAD_INTERVAL of 5 s.
const (
	burstRoutes   = 100
	burstSpacing  = 200 * time.Millisecond
	burstExisting = 5
	burstPoll     = 5 * time.Millisecond
	// burstMaxReloads bounds the reloads of the burst: the spare pool grows with the rate of new
	// Routes, so one refill reload covers it (measured: 1); the bound leaves room for a slow machine
	// whose first refill lands late.
	burstMaxReloads = 2
)

// TestRouteBurst: each Route of the burst is served within moments of its creation (figures logged:
// p50 and max from create to first answer), HAProxy reloads at most burstMaxReloads times, and Route
// status (written off the sync path) reaches every new Route. HAROUTE_BURST_MODE=reload runs the same
// trace with --mode reload (every change a reload, the stock router's way) for comparison; the reload
// bound does not apply then.
func TestRouteBurst(t *testing.T) {
	existing := burstExisting
	if v, err := strconv.Atoi(os.Getenv("HAROUTE_BURST_EXISTING")); err == nil && v >= 0 {
		existing = v
	}
	c, ns, pods := framework.Setup(t, "burst")
	pod := pods.StartBackends("burst-pod")[0]
	c.CreateService(t, ns, "burst", pod)
	// The existing Routes are there before the router starts, as on a cluster it joins: they come
	// with its first sync and claim no spare.
	for i := range existing {
		c.CreateRoute(t, ns, fmt.Sprintf("old-%d", i), fmt.Sprintf("old-%d.e2e.test", i), "burst")
	}
	mode := cmp.Or(os.Getenv("HAROUTE_BURST_MODE"), "runtime")
	r := c.StartRouterArgs(t, []string{"--reload-interval", "5s", "--mode", mode})
	for i := range existing {
		r.WaitAnswer(fmt.Sprintf("old-%d.e2e.test", i), "/", http.StatusOK, "burst-pod")
	}
	time.Sleep(6 * time.Second) // a quiet router: the last reload is over RELOAD_INTERVAL ago
	before := r.Reloads()

	latency := make([]time.Duration, burstRoutes)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range burstRoutes {
		host := fmt.Sprintf("new-%d.e2e.test", i)
		due := start.Add(time.Duration(i) * burstSpacing)
		time.Sleep(time.Until(due))
		created := time.Now()
		c.CreateRoute(t, ns, fmt.Sprintf("new-%d", i), host, "burst")
		wg.Add(1)
		go func() {
			defer wg.Done()
			latency[i] = -1
			for time.Since(created) < framework.WaitTimeout {
				if code, be, err := r.Get(host, "/"); err == nil && code == http.StatusOK && be == "burst-pod" {
					latency[i] = time.Since(created)
					return
				}
				time.Sleep(burstPoll)
			}
		}()
	}
	wg.Wait()
	reloads := r.Reloads() - before
	sorted := slices.Clone(latency)
	slices.Sort(sorted)
	if sorted[0] < 0 {
		t.Fatalf("a Route of the burst was not served within %v", framework.WaitTimeout)
	}
	t.Logf("burst of %d Routes %v apart over %d existing, --mode %s: first answer of the first Route %v; p50 %v, p90 %v, max %v; %d reloads",
		burstRoutes, burstSpacing, existing, mode, latency[0].Round(time.Millisecond), sorted[len(sorted)/2].Round(time.Millisecond),
		sorted[len(sorted)*9/10].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), reloads)
	if mode == "runtime" && reloads > burstMaxReloads {
		t.Errorf("%d reloads for the burst, want at most %d", reloads, burstMaxReloads)
	}
	for i := range burstRoutes {
		c.WaitAdmitted(t, ns, fmt.Sprintf("new-%d", i), "True", "")
	}
}
