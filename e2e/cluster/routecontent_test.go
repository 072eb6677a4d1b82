//go:build e2e

package cluster

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/socket"
)

// TestRouteContentForcesNoReload: what a tenant may legally put in a Route does not turn its runtime
// change into a reload for everyone. A path with ';' (RFC 3986 allows it) and a reencrypt Route whose
// destination CA is a 200 kB bundle (against a 28 kB payload limit) are added, served and deleted
// without a reload. HAProxy 2.6 has no `add ssl ca-file`: there the bundle is loaded by exactly one
// reload, and everything else stays runtime.
func TestRouteContentForcesNoReload(t *testing.T) {
	c := framework.Start(t)
	ns := c.Namespace(t, "content")
	frontCA, podCA := testkit.NewCA(t, "front-ca"), testkit.NewCA(t, "pod-ca")
	pods := framework.NewPodNetwork(t)
	c.CreateService(t, ns, "web", pods.StartBackend("web-pod"))
	podCert, podKey := podCA.Issue(t, "re."+ns+".svc")
	c.CreateService(t, ns, "re", pods.StartTLSBackend("re-pod", podCert, podKey))
	r := c.StartRouter(t)
	c.CreateRoute(t, ns, "base", "base.e2e.test", "web")
	r.WaitAnswer("base.e2e.test", "/", http.StatusOK, "web-pod")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	caps, err := socket.DetectCapabilities(ctx, r.Admin)
	if err != nil {
		t.Fatal(err)
	}
	reloads := r.Reloads()

	c.CreateRoute(t, ns, "semi", "semi.e2e.test", "web", framework.Path("/a;b=c"))
	r.WaitAnswer("semi.e2e.test", "/a;b=c/x", http.StatusOK, "web-pod")
	c.WaitAdmitted(t, ns, "semi", "True", "")
	if code, _, err := r.Get("semi.e2e.test", "/a"); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("GET /a (outside the Route's path) = %d, %v; want 503", code, err)
	}

	const host = "re.e2e.test"
	bundle := podCA.LargeCABundle(t, 200_000)
	cert, key := frontCA.Issue(t, host)
	c.CreateRoute(t, ns, "re", host, "re", framework.Reencrypt(cert, key, bundle))
	r.WaitResponse("https://"+host+"/", func(resp *testkit.Response) error {
		if resp.Status != http.StatusOK || resp.Backend != "re-pod" {
			return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
		}
		return verifyLeaf(resp, frontCA, host)
	})
	c.WaitAdmitted(t, ns, "re", "True", "")
	wantReloads := 0
	if !caps.AddCAFile {
		wantReloads = 1
	}
	if got := r.Reloads() - reloads; got != wantReloads {
		t.Errorf("HAProxy %s reloaded %d times to add a ';' path Route and a Route with a %d-byte CA bundle, want %d",
			caps.Version, got, len(bundle), wantReloads)
	}
	reloads = r.Reloads()

	c.DeleteRoute(t, ns, "semi")
	c.DeleteRoute(t, ns, "re")
	r.WaitAnswer("semi.e2e.test", "/a;b=c/x", http.StatusServiceUnavailable, "")
	r.WaitResponse("https://"+host+"/", func(resp *testkit.Response) error {
		if resp.Status != http.StatusServiceUnavailable || resp.Backend != "" {
			return fmt.Errorf("answer %d from %q, want HAProxy's 503", resp.Status, resp.Backend)
		}
		return nil
	})
	if got := r.Reloads(); got != reloads {
		t.Errorf("reload counter went from %d to %d for deleting the two Routes, want no reload", reloads, got)
	}
	if code, be, err := r.Get("base.e2e.test", "/"); err != nil || code != http.StatusOK || be != "web-pod" {
		t.Errorf("the base Route after the churn: %d %q %v", code, be, err)
	}
}
