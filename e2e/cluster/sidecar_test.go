//go:build e2e

package cluster

import (
	"testing"

	"github.com/haroute/haroute/e2e/framework"
)

// TestSidecar: haroute in the sidecar shape. `haroute run --once` writes the first configuration, the
// test starts HAProxy on it itself, and haroute, given only the shared directory and its sockets,
// applies endpoint changes and new Routes at runtime and a structural change through the external
// master's reload.
func TestSidecar(t *testing.T) {
	c, ns, pods := framework.Setup(t, "sidecar")
	bs := pods.StartBackends("web-1", "web-2")
	c.CreateService(t, ns, "web", bs[0])
	c.CreateRoute(t, ns, "first", "first.e2e.test", "web")
	r := c.StartSidecarRouter(t)
	if r.HAProxy == nil {
		t.Fatal("no test-started HAProxy")
	}
	if pid := r.ShowProc().Master.PID; pid != r.HAProxy.PID {
		t.Fatalf("master socket answers for PID %d, not the test's HAProxy %d", pid, r.HAProxy.PID)
	}
	r.WaitBackends("first.e2e.test", "/", "web-1")
	reloads := r.Reloads()

	c.SetEndpoints(t, ns, "web", bs[0], bs[1])
	c.CreateRoute(t, ns, "second", "second.e2e.test", "web")
	r.WaitBackends("first.e2e.test", "/", "web-1", "web-2")
	r.WaitBackends("second.e2e.test", "/", "web-1", "web-2")
	if got := r.Reloads(); got != reloads {
		t.Errorf("reload counter went from %d to %d for runtime changes", reloads, got)
	}

	c.UpdateRoute(t, ns, "first", framework.Annotations("haproxy.router.openshift.io/balance", "leastconn"))
	r.WaitOneReload(reloads)
	r.WaitBackends("first.e2e.test", "/", "web-1", "web-2")
	if r.HAProxy.Exited() {
		t.Fatal("the test's HAProxy exited")
	}
	if pid := r.ShowProc().Master.PID; pid != r.HAProxy.PID {
		t.Errorf("master PID is %d after the reload, want the test's HAProxy %d", pid, r.HAProxy.PID)
	}
}
