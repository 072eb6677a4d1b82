//go:build e2e

package cluster

import (
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
)

// TestWildcardRoute: with ROUTER_ALLOW_WILDCARD_ROUTES=true, a Route with wildcardPolicy Subdomain and
// host www.wild.e2e.test serves every host of wild.e2e.test; an exact Route in that domain keeps its
// own host; a deeper subdomain and the bare domain are not served.
func TestWildcardRoute(t *testing.T) {
	c, ns, pods := framework.Setup(t, "wildcard")
	bs := pods.StartBackends("wild-pod", "exact-pod")
	c.CreateService(t, ns, "wild", bs[0])
	c.CreateService(t, ns, "exact", bs[1])
	r := c.StartRouter(t, "ROUTER_ALLOW_WILDCARD_ROUTES=true")

	c.CreateRoute(t, ns, "wild", "www.wild.e2e.test", "wild", framework.Wildcard())
	c.CreateRoute(t, ns, "exact", "exact.wild.e2e.test", "exact")
	for _, host := range []string{"www.wild.e2e.test", "anything.wild.e2e.test", "ANOTHER.wild.e2e.test"} {
		r.WaitAnswer(host, "/", http.StatusOK, "wild-pod")
	}
	r.WaitAnswer("exact.wild.e2e.test", "/", http.StatusOK, "exact-pod")
	r.WaitAnswer("a.b.wild.e2e.test", "/", http.StatusServiceUnavailable, "")
	r.WaitAnswer("wild.e2e.test", "/", http.StatusServiceUnavailable, "")
	c.WaitAdmitted(t, ns, "wild", "True", "")
}
