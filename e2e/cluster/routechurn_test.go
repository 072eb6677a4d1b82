//go:build e2e

package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// routeChurnRounds is how many times a Route is added and deleted under load.
const routeChurnRounds = 5

// TestRouteChurnUnderLoad: while a client keeps sending requests to one Route, other Routes are added
// and deleted: each is served, then gone, and HAProxy never reloads. A timeout annotation is no
// reload either; a balance annotation (another profile) is a hand-over at runtime on HAProxy 3.4 and
// exactly one reload before it, which the client does not notice.
func TestRouteChurnUnderLoad(t *testing.T) {
	c, ns, pods := framework.Setup(t, "churn")
	bs := pods.StartBackends("steady-pod", "extra-pod")
	c.CreateService(t, ns, "steady", bs[0])
	c.CreateService(t, ns, "extra", bs[1])
	r := c.StartRouter(t)
	c.CreateRoute(t, ns, "steady", "steady.e2e.test", "steady")
	r.WaitBackends("steady.e2e.test", "/", "steady-pod")
	reloads := r.Reloads()

	load := testkit.StartLoad(t, r.Client, "http://steady.e2e.test/", "steady-pod")
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

	// A timeout annotation is a map entry on every version.
	c.UpdateRoute(t, ns, "steady", framework.Annotations("haproxy.router.openshift.io/timeout", "45s"))
	r.WaitResponse("http://steady.e2e.test/", func(*testkit.Response) error {
		entries, err := socket.ShowMap(context.Background(), r.Admin, mapPath(r, model.MapTimeoutServer))
		if err != nil || len(entries) != 1 || entries[0].Value != "45000" {
			return fmt.Errorf("the timeout map holds %v (%v)", entries, err)
		}
		return nil
	})
	if got := r.Reloads(); got != reloads {
		t.Errorf("HAProxy reloaded for a timeout annotation (%d → %d), want no reload", reloads, got)
	}
	// A balance annotation: another profile. HAProxy 3.4 hands the Route over at runtime; before
	// it, one reload renders the backend with the new algorithm.
	caps, err := socket.DetectCapabilities(context.Background(), r.Admin)
	if err != nil {
		t.Fatal(err)
	}
	c.UpdateRoute(t, ns, "steady", framework.Annotations("haproxy.router.openshift.io/timeout", "45s", "haproxy.router.openshift.io/balance", "leastconn"))
	if caps.DynamicBackends && caps.SafeBackendDeletion {
		r.WaitResponse("http://steady.e2e.test/", func(*testkit.Response) error {
			list, err := r.Admin.Command(context.Background(), "show backend")
			if err != nil || !strings.Contains(list, "be_http:"+ns+":steady\n") || strings.Contains(list, model.HandoverSuffix) {
				return fmt.Errorf("the hand-over has not ended: %q (%v)", list, err)
			}
			return nil
		})
		if got := r.Reloads(); got != reloads {
			t.Errorf("HAProxy %s reloaded for a balance annotation (%d → %d), want a hand-over at runtime", caps.Version, reloads, got)
		}
	} else {
		r.WaitOneReload(reloads)
	}
	r.WaitBackends("steady.e2e.test", "/", "steady-pod")
	load.Check(t, 500)
}

// mapPath is the path of one of the router's map files, as HAProxy names it.
func mapPath(r *framework.ClusterRouter, name string) string {
	return layout.For(r.Dir).InConf(name)
}
