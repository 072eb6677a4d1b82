//go:build e2e

package cluster

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// TestPassthroughRoute: HAProxy picks a passthrough Route by SNI and relays the TLS connection: the
// client sees the pod's own certificate and the pod's answer; the plain HTTP port does not serve the
// host.
func TestPassthroughRoute(t *testing.T) {
	c := framework.Start(t)
	ns := c.Namespace(t, "passthrough")
	const host = "pass.e2e.test"
	ca := testkit.NewCA(t, "pod-ca")
	cert, key := ca.Issue(t, host)
	pods := framework.NewPodNetwork(t)
	c.CreateService(t, ns, "tls", pods.StartTLSBackend("tls-pod", cert, key))
	r := c.StartRouter(t)

	c.CreateRoute(t, ns, "tls", host, "tls", framework.Passthrough())
	r.WaitResponse("https://"+host+"/", func(resp *testkit.Response) error {
		if resp.Status != http.StatusOK || resp.Backend != "tls-pod" {
			return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
		}
		return verifyLeaf(resp, ca, host)
	})
	c.WaitAdmitted(t, ns, "tls", "True", "")
	r.WaitAnswer(host, "/", http.StatusServiceUnavailable, "")
}
