package run

import (
	"fmt"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

const (
	churnHost    = "web.e2e.test"
	churnMax     = 20 // scale 1 → churnMax → 1
	churnIPMoves = 20 // pod IP changes at scale 1
)

// TestEndpointChurnWithoutReload scales an EndpointSlice file 1 → 20 → 1 and then moves the one pod
// to a new address 20 times, waiting for each change to be applied, while a loopback client keeps
// sending requests: no request fails, every answer comes from a current or just-removed endpoint,
// and HAProxy is never reloaded.
func TestEndpointChurnWithoutReload(t *testing.T) {
	t.Parallel()
	var pods []*testkit.Backend
	for i := range churnMax + churnIPMoves {
		pods = append(pods, testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.1.%d", i+1), fmt.Sprintf("pod-%02d", i)))
	}
	r := startRouter(t, map[string]string{
		"route.yaml":     testkit.RouteYAML("web", churnHost, "web"),
		"endpoints.yaml": testkit.ServiceYAML("web", pods[:1]...),
	})
	r.WaitServers(testkit.Addrs(pods[:1]...))
	reloads := r.Reloads()
	l := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+churnHost+"/", pods[0].Name)

	names := func(bs []*testkit.Backend) []string {
		out := make([]string, len(bs))
		for i, b := range bs {
			out[i] = b.Name
		}
		return out
	}
	// step moves the endpoints from cur to next: answers from either are fine while it applies,
	// and from the removed ones for a moment after.
	step := func(cur, next []*testkit.Backend) time.Time {
		l.Allow(append(names(cur), names(next)...)...)
		at := time.Now()
		r.Write("endpoints.yaml", testkit.ServiceYAML("web", next...))
		r.WaitServers(testkit.Addrs(next...))
		return at
	}

	var scaleUp, moves []time.Duration
	for n := 2; n <= churnMax; n++ {
		at := step(pods[:n-1], pods[:n])
		scaleUp = append(scaleUp, l.WaitFirst(t, pods[n-1].Name, applyTimeout).Sub(at))
	}
	for n := churnMax - 1; n >= 1; n-- {
		step(pods[:n+1], pods[:n])
	}
	cur := pods[0]
	for i := range churnIPMoves {
		next := pods[churnMax+i]
		at := step([]*testkit.Backend{cur}, []*testkit.Backend{next})
		moves = append(moves, l.WaitFirst(t, next.Name, applyTimeout).Sub(at))
		cur = next
	}
	l.Check(t, 1000)
	if got := r.Reloads(); got != reloads {
		t.Errorf("reload counter went from %d to %d during endpoint churn, want no reload", reloads, got)
	}
	logLatency(t, "pod IP change (first answer from the new pod)", moves)
	logLatency(t, fmt.Sprintf("scale-up 1→%d (first answer from the added pod)", churnMax), scaleUp)
	logLatency(t, "all endpoint events", append(moves, scaleUp...))
}
