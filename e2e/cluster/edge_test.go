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

// TestEdgeRoute: an edge Route terminates TLS with its own certificate (the one HAProxy serves for its
// SNI verifies against the Route's CA) and forwards plain HTTP to the pods; another host over https
// gets the default certificate and a 503.
func TestEdgeRoute(t *testing.T) {
	c, ns, pods := framework.Setup(t, "edge")
	c.CreateService(t, ns, "web", pods.StartBackend("edge-pod"))
	r := c.StartRouter(t)

	ca := testkit.NewCA(t, "edge-e2e-ca")
	const host = "secure.e2e.test"
	cert, key := ca.Issue(t, host)
	c.CreateRoute(t, ns, "web", host, "web", framework.Edge(cert, key, routev1.InsecureEdgeTerminationPolicyNone))

	// Kept-alive connections keep the certificate of their handshake: the Route is served once an
	// answer from its pod comes over a connection that got the Route's certificate.
	resp := r.WaitResponse("https://"+host+"/", func(resp *testkit.Response) error {
		if resp.Status != http.StatusOK || resp.Backend != "edge-pod" {
			return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
		}
		return verifyLeaf(resp, ca, host)
	})
	leaf := resp.Leaf()
	c.WaitAdmitted(t, ns, "web", "True", "")

	other := r.WaitResponse("https://other.e2e.test/", func(resp *testkit.Response) error {
		if resp.Status != http.StatusServiceUnavailable {
			return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
		}
		return nil
	})
	if l := other.Leaf(); l == nil || l.Equal(leaf) {
		t.Errorf("another SNI got the Route's certificate, or none")
	}
}
