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

// TestEdgeCertificateRotation: replacing an edge Route's certificate (a new key pair from another CA)
// changes the certificate HAProxy serves for the host, without a reload, and the Route keeps serving.
func TestEdgeCertificateRotation(t *testing.T) {
	c, ns, pods := framework.Setup(t, "rotation")
	c.CreateService(t, ns, "web", pods.StartBackend("web-pod"))
	r := c.StartRouter(t)

	const host = "rotate.e2e.test"
	oldCA, newCA := testkit.NewCA(t, "old-ca"), testkit.NewCA(t, "new-ca")
	cert, key := oldCA.Issue(t, host)
	c.CreateRoute(t, ns, "web", host, "web", framework.Edge(cert, key, routev1.InsecureEdgeTerminationPolicyNone))
	served := func(ca *testkit.CA) func(*testkit.Response) error {
		return func(resp *testkit.Response) error {
			if resp.Status != http.StatusOK || resp.Backend != "web-pod" {
				return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
			}
			return verifyLeaf(resp, ca, host)
		}
	}
	first := r.WaitResponse("https://"+host+"/", served(oldCA)).Leaf()
	reloads := r.Reloads()

	newCert, newKey := newCA.Issue(t, host)
	c.UpdateRoute(t, ns, "web", func(rt *routev1.Route) {
		rt.Spec.TLS.Certificate, rt.Spec.TLS.Key = string(newCert), string(newKey)
	})
	second := r.WaitResponse("https://"+host+"/", served(newCA)).Leaf()
	if second.Equal(first) {
		t.Fatal("the served certificate did not change")
	}
	if got := r.Reloads(); got != reloads {
		t.Errorf("HAProxy reload counter went from %d to %d for a certificate rotation, want no reload", reloads, got)
	}
}
