package run

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

const routeEvents = 24

// TestRouteAddDeleteWithoutReload adds a Route file and deletes it again, 24 times: each new Route
// serves within a bounded wait, each deleted one falls back to HAProxy's 503 within a bounded wait,
// and HAProxy is never reloaded.
func TestRouteAddDeleteWithoutReload(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.1", "web")
	r := startRouter(t, map[string]string{
		"route-base.yaml": testkit.RouteYAML("base", "base.e2e.test", "web"),
		"service.yaml":    testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("base.e2e.test", "/", http.StatusOK, web.Name)
	reloads := r.Reloads()

	var adds, deletes []time.Duration
	for i := range routeEvents {
		name := fmt.Sprintf("r%02d", i)
		host := name + ".e2e.test"
		file := "route-" + name + ".yaml"
		at := time.Now()
		r.Write(file, testkit.RouteYAML(name, host, "web"))
		adds = append(adds, r.WaitAnswer(host, "/", http.StatusOK, web.Name).Sub(at))

		at = time.Now()
		r.Remove(file)
		deletes = append(deletes, r.WaitAnswer(host, "/", http.StatusServiceUnavailable, "").Sub(at))
	}
	if code, be, err := r.Get("base.e2e.test", "/"); err != nil || code != http.StatusOK || be != web.Name {
		t.Errorf("base Route after the churn: %d %q %v", code, be, err)
	}
	if got := r.Reloads(); got != reloads {
		t.Errorf("reload counter went from %d to %d while Routes were added and deleted, want no reload", reloads, got)
	}
	logLatency(t, "Route add (first 200 from the new host)", adds)
	logLatency(t, "Route delete (first 503 for the removed host)", deletes)
}
