package run

import (
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
)

// TestBalanceAnnotationReloadsOnce changes a Route's balance annotation to leastconn (a backend
// option no spare backend has): exactly one reload, and the Route keeps serving.
func TestBalanceAnnotationReloadsOnce(t *testing.T) {
	t.Parallel()
	web := testbed.StartHTTPBackend(t, "127.0.3.1", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testbed.RouteYAML("web", "bal.e2e.test", "web"),
		"service.yaml": testbed.ServiceYAML("web", web),
	})
	r.WaitAnswer("bal.e2e.test", "/", http.StatusOK, web.Name)
	before := r.Reloads()

	r.write("route.yaml", testbed.RouteYAML("web", "bal.e2e.test", "web", "haproxy.router.openshift.io/balance", "leastconn"))
	r.WaitOneReload(before)
	r.WaitAnswer("bal.e2e.test", "/", http.StatusOK, web.Name)
	cfg := testbed.ReadConfig(t, r.Dir)
	if !containsLine(cfg, "balance leastconn") {
		t.Errorf("the rendered config has no `balance leastconn` line")
	}
}

// TestKilledHAProxyRestarts kills HAProxy's master with SIGKILL: the supervisor starts a new one and
// traffic returns.
func TestKilledHAProxyRestarts(t *testing.T) {
	t.Parallel()
	web := testbed.StartHTTPBackend(t, "127.0.4.1", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testbed.RouteYAML("web", "kill.e2e.test", "web"),
		"service.yaml": testbed.ServiceYAML("web", web),
	})
	r.WaitAnswer("kill.e2e.test", "/", http.StatusOK, web.Name)
	old := r.ShowProc().Master.PID
	killPID(t, old)
	killedAt := time.Now()

	deadline := time.Now().Add(2 * applyTimeout)
	var pid int
	for time.Now().Before(deadline) {
		if pid = masterPID(r); pid != 0 && pid != old {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 || pid == old {
		t.Fatalf("no new HAProxy master within %v of killing %d", 2*applyTimeout, old)
	}
	r.MustStopWith(pid)
	r.Client.CloseIdleConnections()
	back := r.WaitAnswer("kill.e2e.test", "/", http.StatusOK, web.Name)
	r.WaitHTTP("/healthz/ready", http.StatusOK, applyTimeout)
	t.Logf("HAProxy master %d killed; new master %d; traffic back after %v", old, pid, back.Sub(killedAt).Round(time.Millisecond))

	// The restarted HAProxy still takes runtime changes.
	web2 := testbed.StartHTTPBackend(t, "127.0.4.2", "web2")
	r.write("service.yaml", testbed.ServiceYAML("web", web2))
	r.WaitAnswer("kill.e2e.test", "/", http.StatusOK, web2.Name)
}
