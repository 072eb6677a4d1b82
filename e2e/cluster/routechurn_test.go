//go:build e2e

package cluster

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/e2e/testbed"
)

// routeChurnRounds is how many times a Route is added and deleted under load.
const routeChurnRounds = 5

// TestRouteChurnUnderLoad: while a client keeps sending requests to one Route, other Routes are added
// and deleted: each is served, then gone, and HAProxy never reloads. Then a balance annotation (a
// backend option no spare backend has) causes exactly one reload, which the client does not notice.
func TestRouteChurnUnderLoad(t *testing.T) {
	c, ns, pods := framework.Setup(t, "churn")
	bs := pods.StartBackends("steady-pod", "extra-pod")
	c.CreateService(t, ns, "steady", bs[0])
	c.CreateService(t, ns, "extra", bs[1])
	r := c.StartRouter(t)
	c.CreateRoute(t, ns, "steady", "steady.e2e.test", "steady")
	r.WaitBackends("steady.e2e.test", "/", "steady-pod")
	reloads := r.Reloads()

	load := testbed.StartLoad(t, r.Client, "http://steady.e2e.test/", "steady-pod")
	for i := range routeChurnRounds {
		name := fmt.Sprintf("extra-%d", i)
		host := name + ".e2e.test"
		c.CreateRoute(t, ns, name, host, "extra")
		r.WaitAnswer(host, "/", http.StatusOK, "extra-pod")
		c.DeleteRoute(t, ns, name)
		r.WaitAnswer(host, "/", http.StatusServiceUnavailable, "")
	}
	if got := r.Reloads(); got != reloads {
		t.Errorf("HAProxy reload counter went from %d to %d while Routes came and went, want no reload", reloads, got)
	}

	c.UpdateRoute(t, ns, "steady", framework.Annotations("haproxy.router.openshift.io/balance", "leastconn"))
	r.WaitOneReload(reloads)
	r.WaitBackends("steady.e2e.test", "/", "steady-pod")
	load.Check(t, 500)
}
