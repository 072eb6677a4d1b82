//go:build e2e

package cluster

import (
	"fmt"
	"net/http"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// TestInsecureEdgePolicies: three edge Routes, one per insecureEdgeTerminationPolicy, all served over
// https; over plain http, Redirect answers 302 to https, Allow serves, None is not served (503). Then
// the None Route switches to Allow and is served over http.
func TestInsecureEdgePolicies(t *testing.T) {
	c, ns, pods := framework.Setup(t, "insecure")
	c.CreateService(t, ns, "web", pods.StartBackend("web-pod"))
	r := c.StartRouter(t)
	ca := testkit.NewCA(t, "insecure-ca")

	policies := map[string]routev1.InsecureEdgeTerminationPolicyType{
		"redirect.e2e.test": routev1.InsecureEdgeTerminationPolicyRedirect,
		"allow.e2e.test":    routev1.InsecureEdgeTerminationPolicyAllow,
		"none.e2e.test":     routev1.InsecureEdgeTerminationPolicyNone,
	}
	names := map[string]string{"redirect.e2e.test": "redirect", "allow.e2e.test": "allow", "none.e2e.test": "none"}
	for host, policy := range policies {
		cert, key := ca.Issue(t, host)
		c.CreateRoute(t, ns, names[host], host, "web", framework.Edge(cert, key, policy))
	}
	for host := range policies {
		r.WaitBackendsURL("https://"+host+"/p", "web-pod")
	}
	r.WaitResponse("http://redirect.e2e.test/p?q=1", func(resp *testkit.Response) error {
		if loc := resp.Header.Get("Location"); resp.Status != http.StatusFound || loc != "https://redirect.e2e.test/p?q=1" {
			return fmt.Errorf("answer %d, Location %q; want 302 to https://redirect.e2e.test/p?q=1", resp.Status, loc)
		}
		return nil
	})
	r.WaitAnswer("allow.e2e.test", "/p", http.StatusOK, "web-pod")
	r.WaitAnswer("none.e2e.test", "/p", http.StatusServiceUnavailable, "")

	c.UpdateRoute(t, ns, "none", func(rt *routev1.Route) {
		rt.Spec.TLS.InsecureEdgeTerminationPolicy = routev1.InsecureEdgeTerminationPolicyAllow
	})
	r.WaitAnswer("none.e2e.test", "/p", http.StatusOK, "web-pod")
	r.WaitBackendsURL("https://none.e2e.test/p", "web-pod")
}
