//go:build e2e

package cluster

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// TestReencryptRoute: HAProxy terminates TLS with the Route's certificate and opens a new TLS
// connection to the pod, verified against the Route's destination CA for the name
// <service>.<namespace>.svc. A pod whose certificate comes from another CA is refused (503).
func TestReencryptRoute(t *testing.T) {
	c := framework.Start(t)
	ns := c.Namespace(t, "reencrypt")
	const host, badHost = "re.e2e.test", "re-bad.e2e.test"
	frontCA, podCA, otherCA := testkit.NewCA(t, "front-ca"), testkit.NewCA(t, "pod-ca"), testkit.NewCA(t, "other-ca")
	pods := framework.NewPodNetwork(t)
	podCert, podKey := podCA.Issue(t, "re."+ns+".svc")
	c.CreateService(t, ns, "re", pods.StartTLSBackend("re-pod", podCert, podKey))
	badCert, badKey := otherCA.Issue(t, "re-bad."+ns+".svc")
	c.CreateService(t, ns, "re-bad", pods.StartTLSBackend("re-bad-pod", badCert, badKey))
	r := c.StartRouter(t)

	cert, key := frontCA.Issue(t, host)
	c.CreateRoute(t, ns, "re", host, "re", framework.Reencrypt(cert, key, podCA.PEM()))
	badFront, badFrontKey := frontCA.Issue(t, badHost)
	c.CreateRoute(t, ns, "re-bad", badHost, "re-bad", framework.Reencrypt(badFront, badFrontKey, podCA.PEM()))

	r.WaitResponse("https://"+host+"/", func(resp *testkit.Response) error {
		if resp.Status != http.StatusOK || resp.Backend != "re-pod" {
			return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
		}
		return verifyLeaf(resp, frontCA, host)
	})
	c.WaitAdmitted(t, ns, "re", "True", "")
	// The second Route is admitted and its certificate served, but its pod fails verification.
	c.WaitAdmitted(t, ns, "re-bad", "True", "")
	r.WaitResponse("https://"+badHost+"/", func(resp *testkit.Response) error {
		if resp.Status != http.StatusServiceUnavailable || resp.Backend != "" {
			return fmt.Errorf("answer %d from %q, want HAProxy's 503", resp.Status, resp.Backend)
		}
		return verifyLeaf(resp, frontCA, badHost)
	})
}
