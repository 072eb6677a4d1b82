//go:build e2e

package cluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

const scaleMax = 20

// TestScaleUnderLoad: while a client keeps sending requests, the test (playing the endpoint
// controller) scales a Service's EndpointSlice 1→20→1 one pod at a time, then moves the last pod to
// new IPs: every request succeeds, every answer comes from a current (or just removed) pod, each new
// pod is reached, and HAProxy's reload counter does not move.
func TestScaleUnderLoad(t *testing.T) {
	c, ns, pods := framework.Setup(t, "scale")
	names := make([]string, scaleMax+3)
	for i := range names {
		names[i] = fmt.Sprintf("pod-%02d", i)
	}
	bs := pods.StartBackends(names...)
	c.CreateService(t, ns, "web", bs[0])
	r := c.StartRouter(t)
	const host = "scale.e2e.test"
	c.CreateRoute(t, ns, "web", host, "web")
	r.WaitBackends(host, "/", bs[0].Name)
	reloads := r.Reloads()
	logBefore := len(r.Proc.Out.String())

	load := testkit.StartLoad(t, r.Client, "http://"+host+"/", bs[0].Name)
	step := func(cur, next []*framework.Backend) {
		load.Allow(append(backendNames(cur), backendNames(next)...)...)
		c.SetEndpoints(t, ns, "web", next...)
		r.WaitServers(addrsOf(next))
	}
	for n := 2; n <= scaleMax; n++ {
		step(bs[:n-1], bs[:n])
		load.WaitFirst(t, bs[n-1].Name, framework.WaitTimeout)
	}
	for n := scaleMax - 1; n >= 1; n-- {
		step(bs[:n+1], bs[:n])
	}
	cur := bs[0]
	for _, next := range bs[scaleMax:] {
		step([]*framework.Backend{cur}, []*framework.Backend{next})
		load.WaitFirst(t, next.Name, framework.WaitTimeout)
		cur = next
	}
	load.Check(t, 500)
	if got := r.Reloads(); got != reloads {
		t.Errorf("HAProxy reload counter went from %d to %d while scaling, want no reload", reloads, got)
	}
	// HAProxy says something of every server haroute takes out or puts back: the expected
	// consequence of its own operations, logged at debug, not as warnings.
	var warns, serverWarns int
	for _, l := range strings.Split(r.Proc.Out.String()[logBefore:], "\n") {
		if strings.Contains(l, "level=WARN") {
			warns++
			if strings.Contains(l, "for maintenance") || strings.Contains(l, "leaving forced maintenance") {
				serverWarns++
			}
		}
	}
	t.Logf("FIGURES scale: %d warning lines logged while scaling, %d of them HAProxy's server maintenance messages", warns, serverWarns)
	if serverWarns > 0 {
		t.Errorf("%d of HAProxy's messages about servers haroute took out or put back were logged as warnings", serverWarns)
	}
}

func backendNames(bs []*framework.Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}

func addrsOf(bs []*framework.Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Addr()
	}
	return out
}
