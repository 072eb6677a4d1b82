package run

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// TestBalanceAnnotationReloadsOnce changes a Route's balance annotation to leastconn (another
// backend profile, which no spare backend has): exactly one reload before HAProxy 3.4.4, none from
// it (a hand-over at runtime); the Route keeps serving and its backend is rendered from the
// leastconn profile.
func TestBalanceAnnotationReloadsOnce(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.3.1", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("web", "bal.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("bal.e2e.test", "/", http.StatusOK, web.Name)
	before := r.Reloads()
	caps, err := socket.DetectCapabilities(context.Background(), r.Admin)
	if err != nil {
		t.Fatal(err)
	}

	r.Write("route.yaml", testkit.RouteYAML("web", "bal.e2e.test", "web", "haproxy.router.openshift.io/balance", "leastconn"))
	const header = "backend be_http:e2e:web from haroute_http_leastconn_cookie"
	if caps.DynamicBackends && caps.SafeBackendDeletion {
		err := testkit.Eventually(applyTimeout, 50*time.Millisecond, func() error {
			list, err := r.Admin.Command(context.Background(), "show backend")
			if err != nil || !containsLine(testbed.ReadConfig(t, r.Dir), header) || strings.Contains(list, model.HandoverSuffix) || !strings.Contains(list, "be_http:e2e:web\n") {
				return fmt.Errorf("the hand-over has not ended: %q (%v)", list, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Reloads(); got != before {
			t.Errorf("HAProxy %s reloaded for a balance change (%d → %d), want a hand-over at runtime", caps.Version, before, got)
		}
	} else {
		r.WaitOneReload(before)
	}
	r.WaitAnswer("bal.e2e.test", "/", http.StatusOK, web.Name)
	if cfg := testbed.ReadConfig(t, r.Dir); !containsLine(cfg, header) {
		t.Errorf("the rendered config has no line %q", header)
	}
}

// TestKilledHAProxyRestarts kills HAProxy's master with SIGKILL: the supervisor starts a new one and
// traffic returns.
func TestKilledHAProxyRestarts(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.4.1", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("web", "kill.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("kill.e2e.test", "/", http.StatusOK, web.Name)
	old := r.ShowProc().Master.PID
	killPID(t, old)
	killedAt := time.Now()

	deadline := time.Now().Add(2 * applyTimeout)
	var pid int
	for time.Now().Before(deadline) {
		if pid = r.MasterPID(); pid != 0 && pid != old {
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
	web2 := testkit.StartHTTPBackend(t, "127.0.4.2", "web2")
	r.Write("service.yaml", testkit.ServiceYAML("web", web2))
	r.WaitAnswer("kill.e2e.test", "/", http.StatusOK, web2.Name)
}
