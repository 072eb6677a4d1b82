//go:build e2e

package cluster

import (
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
)

// TestRouteLabelSharding: two routers select Routes by label (ROUTE_LABELS shard=a and shard=b, each
// with its own ROUTER_NAME). Each serves and admits only its own shard; relabelling a Route moves it
// from one router to the other, status entry included.
func TestRouteLabelSharding(t *testing.T) {
	c, ns, pods := framework.Setup(t, "shard")
	bs := pods.StartBackends("a-pod", "b-pod")
	c.CreateService(t, ns, "a", bs[0])
	c.CreateService(t, ns, "b", bs[1])
	ra := c.StartRouter(t, "ROUTE_LABELS=shard=a", "ROUTER_NAME=shard-a")
	rb := c.StartRouter(t, "ROUTE_LABELS=shard=b", "ROUTER_NAME=shard-b")

	c.CreateRoute(t, ns, "a", "a.shard.e2e.test", "a", framework.Labels("shard", "a"))
	c.CreateRoute(t, ns, "b", "b.shard.e2e.test", "b", framework.Labels("shard", "b"))
	c.CreateRoute(t, ns, "none", "none.shard.e2e.test", "a")
	// A last Route per shard: once a router serves its own, it has seen every Route created before
	// (one watch delivers them in order), so the 503s below are answers, not a router lagging behind.
	c.CreateRoute(t, ns, "a-last", "a-last.shard.e2e.test", "a", framework.Labels("shard", "a"))
	c.CreateRoute(t, ns, "b-last", "b-last.shard.e2e.test", "b", framework.Labels("shard", "b"))
	ra.WaitAnswer("a-last.shard.e2e.test", "/", http.StatusOK, "a-pod")
	rb.WaitAnswer("b-last.shard.e2e.test", "/", http.StatusOK, "b-pod")

	ra.WaitAnswer("a.shard.e2e.test", "/", http.StatusOK, "a-pod")
	rb.WaitAnswer("b.shard.e2e.test", "/", http.StatusOK, "b-pod")
	ra.WaitAnswer("b.shard.e2e.test", "/", http.StatusServiceUnavailable, "")
	rb.WaitAnswer("a.shard.e2e.test", "/", http.StatusServiceUnavailable, "")
	for _, r := range []*framework.ClusterRouter{ra, rb} {
		r.WaitAnswer("none.shard.e2e.test", "/", http.StatusServiceUnavailable, "")
	}
	c.WaitAdmittedBy(t, ns, "a", "shard-a", "True", "")
	c.WaitAdmittedBy(t, ns, "b", "shard-b", "True", "")
	for route, other := range map[string]string{"a": "shard-b", "b": "shard-a", "none": ""} {
		for _, adm := range c.Admissions(t, ns, route) {
			if other == "" || adm.RouterName == other {
				t.Errorf("route %s has a status entry from %s, which does not select it: %+v", route, adm.RouterName, adm)
			}
		}
	}

	c.UpdateRoute(t, ns, "a", framework.Labels("shard", "b"))
	rb.WaitAnswer("a.shard.e2e.test", "/", http.StatusOK, "a-pod")
	ra.WaitAnswer("a.shard.e2e.test", "/", http.StatusServiceUnavailable, "")
	c.WaitAdmittedBy(t, ns, "a", "shard-b", "True", "")
	// The router that no longer selects the Route takes its entry out of the status.
	c.WaitNoEntry(t, ns, "a", "shard-a")
}
