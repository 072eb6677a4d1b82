package run

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// metricsRequests is how many requests TestRouteMetrics sends to each Route between two scrapes.
const metricsRequests = 5

// The bounded wait for HAProxy's counters to count every answer the client received.
const (
	metricsSettleTries = 40
	metricsSettlePause = 25 * time.Millisecond
)

// TestRouteMetrics: /metrics on the stats port serves HAProxy's traffic counters per Route, labelled
// like OpenShift's exporter (backend kind, namespace, route; servers by address, pod and Service),
// also for a Route added while haroute runs, which a spare backend serves until the next reload
// (before HAProxy 3.4.4; from it, its own backend added at runtime): its series carry its own name,
// never the spare's.
func TestRouteMetrics(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.30", "metrics-pod")
	r := startRouter(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("metrics", "metrics.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("metrics.e2e.test", "/", http.StatusOK, web.Name)
	reloads := r.Reloads()
	late := testkit.StartHTTPBackend(t, "127.0.2.31", "late-pod")
	r.Write("late.yaml", testkit.RouteYAML("late", "late.e2e.test", "late")+"---\n"+testkit.ServiceYAML("late", late))
	r.WaitAnswer("late.e2e.test", "/", http.StatusOK, late.Name)
	if r.Reloads() != reloads {
		t.Fatal("adding a Route reloaded HAProxy: no spare to check")
	}

	type check struct{ name, series string }
	var checks []check
	for _, c := range []struct {
		route, svc string
		be         *testkit.Backend
	}{{"metrics", "web", web}, {"late", "late", late}} {
		checks = append(checks,
			check{c.route + " backend", seriesKey("haproxy_backend_http_responses_total",
				"backend", "http", "code", "2xx", "namespace", "e2e", "route", c.route)},
			check{c.route + " server", seriesKey("haproxy_server_http_responses_total",
				"code", "2xx", "namespace", "e2e", "pod", c.be.Name, "route", c.route, "server", c.be.Addr(), "service", c.svc)},
		)
	}
	// The answers the waits above got may still be counted after they arrived (see below): take the
	// starting values once two scrapes agree.
	before := scrapeMetrics(t, r)
	for try := 0; try < metricsSettleTries; try++ {
		time.Sleep(metricsSettlePause)
		again := scrapeMetrics(t, r)
		settled := true
		for _, c := range checks {
			settled = settled && again.values[c.series] == before.values[c.series]
		}
		before = again
		if settled {
			break
		}
	}
	for _, host := range []string{"metrics.e2e.test", "late.e2e.test"} {
		for range metricsRequests {
			if code, _, err := r.Get(host, "/"); err != nil || code != http.StatusOK {
				t.Fatalf("GET %s: %d, %v", host, code, err)
			}
		}
	}
	// HAProxy counts a response on the worker thread that handled it, which may still be at it when
	// the client has its answer: scrape again (bounded) until every counter has caught up.
	caughtUp := func(after metricsText) bool {
		for _, c := range checks {
			if after.values[c.series]-before.values[c.series] < metricsRequests {
				return false
			}
		}
		return true
	}
	after := scrapeMetrics(t, r)
	for try := 0; try < metricsSettleTries && !caughtUp(after); try++ {
		time.Sleep(metricsSettlePause)
		after = scrapeMetrics(t, r)
	}
	for _, c := range checks {
		v, ok := after.values[c.series]
		if !ok {
			t.Errorf("%s: no series %s in /metrics:\n%s", c.name, c.series, after.grep(`route="`))
			continue
		}
		if d := v - before.values[c.series]; d != metricsRequests {
			t.Errorf("%s: %s rose by %v, want %d", c.name, c.series, d, metricsRequests)
		}
	}
	if up := after.values["haproxy_up"]; up != 1 {
		t.Errorf("haproxy_up %v", up)
	}
	if strings.Contains(after.text, "_spare") {
		t.Errorf("a series names a spare:\n%s", after.grep("_spare"))
	}
	// The controller's own metrics are served beside them.
	if _, ok := after.values["haroute_haproxy_workers"]; !ok {
		t.Error("haroute_haproxy_workers missing from /metrics")
	}
}

// metricsText is one answer of /metrics: its text and the value of each series.
type metricsText struct {
	text   string
	values map[string]float64
}

// grep returns the lines of the answer that contain s.
func (m metricsText) grep(s string) string {
	var out []string
	for _, l := range strings.Split(m.text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// scrapeMetrics reads /metrics on the router's stats port (text format).
func scrapeMetrics(t *testing.T, r *folderRouter) metricsText {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(r.StatsPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s, %v", resp.Status, err)
	}
	m := metricsText{text: string(body), values: map[string]float64{}}
	for _, l := range strings.Split(m.text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			t.Fatalf("/metrics: line %q", l)
		}
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics: line %q: %v", l, err)
		}
		m.values[l[:i]] = v
	}
	return m
}

// seriesKey returns a series as the text format writes it: name{k1="v1",...}, labels sorted by name
// (kv holds name, value pairs).
func seriesKey(name string, kv ...string) string {
	pairs := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, fmt.Sprintf("%s=%q", kv[i], kv[i+1]))
	}
	sort.Strings(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}
