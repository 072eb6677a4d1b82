//go:build e2e

package cluster

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
)

// TestHAProxyKilled: after changes applied at runtime (a scale-up and a Route added after start,
// which claimed a spare backend), HAProxy's master and workers are SIGKILLed: haroute starts a new
// HAProxy that serves the whole current state within seconds.
func TestHAProxyKilled(t *testing.T) {
	c, ns, pods := framework.Setup(t, "kill")
	bs := pods.StartBackends("web-1", "web-2", "late-pod")
	c.CreateService(t, ns, "web", bs[0])
	c.CreateService(t, ns, "late", bs[2])
	r := c.StartRouter(t)
	c.CreateRoute(t, ns, "web", "web.e2e.test", "web")
	r.WaitBackends("web.e2e.test", "/", "web-1")
	reloads := r.Reloads()
	c.SetEndpoints(t, ns, "web", bs[0], bs[1])
	c.CreateRoute(t, ns, "late", "late.e2e.test", "late")
	r.WaitBackends("web.e2e.test", "/", "web-1", "web-2")
	r.WaitAnswer("late.e2e.test", "/", http.StatusOK, "late-pod")
	if got := r.Reloads(); got != reloads {
		t.Fatalf("reload counter went from %d to %d before the kill: the changes were not runtime-only", reloads, got)
	}

	old := r.KillHAProxy()
	killed := time.Now()
	if err := framework.Eventually(func() error {
		if pid := r.ShowProc().Master.PID; pid == old {
			return fmt.Errorf("master is still %d", pid)
		}
		return nil
	}); err != nil {
		t.Fatalf("no new HAProxy: %v", err)
	}
	r.WaitBackends("web.e2e.test", "/", "web-1", "web-2")
	r.WaitAnswer("late.e2e.test", "/", http.StatusOK, "late-pod")
	t.Logf("state served again %v after the kill", time.Since(killed).Round(time.Millisecond))
	if r.Proc.Exited() {
		t.Fatal("haroute exited")
	}
}
