package metrics_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/inspect/metrics"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

var record = flag.Bool("stats.record", false,
	"record the fixture's show stat and applied state into testdata/haproxy-<series>/ (HAROUTE_HAPROXY picks the binary)")

// The fixture's traffic: requests per Route, and one request no Route matches.
const (
	wwwRequests    = 6
	secureRequests = 3
	lateRequests   = 4
)

// fixture is HAProxy driven by an Instance, serving Route web/www (two pods) over plain HTTP, web/secure
// (edge, the same pods) and web/late, added at runtime, which claimed a spare backend; the traffic
// above has gone through it.
type fixture struct {
	inst  *haproxy.Instance
	h     *testbed.HAProxy
	admin *socket.Admin
	// late is the backend serving web/late: a claimed spare.
	late *model.Backend
}

func startFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	www0 := testkit.StartHTTPBackend(t, "127.0.0.2", "www-a")
	www1 := testkit.StartHTTPBackend(t, "127.0.0.3", "www-b")
	late := testkit.StartHTTPBackend(t, "127.0.0.4", "late")
	cert, key := ca.Issue(t, "secure.example.com")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	desired := func(withLate bool) *model.Config {
		var m testbed.Manifests
		m.Service("web", "www", www0, www1)
		m.Route("web", "www", "www.example.com", "", "www")
		m.Route("web", "secure", "secure.example.com", "", "www", testbed.Edge(cert, key))
		if withLate {
			m.Service("web", "late", late)
			m.Route("web", "late", "late.example.com", "", "late")
		}
		cfg, problems := mapping.Translate(m.Input(t), opts)
		if len(problems) > 0 {
			t.Fatalf("translate: %v", problems)
		}
		return cfg
	}
	dir := testkit.TempDir(t)
	inst, err := haproxy.New(haproxy.Config{
		Dir:    dir,
		Render: render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")},
		Binary: testkit.HAProxyBinary(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.WriteInitial(desired(false)); err != nil {
		t.Fatal(err)
	}
	f := &fixture{inst: inst, h: testbed.Start(t, dir)}
	f.admin = socket.NewAdmin(f.h.AdminSocket, socket.Options{})
	// web/late is new: it claims a spare at runtime, or on 3.4.4+ gets its own backend at runtime.
	out, err := inst.Update(ctx, desired(true))
	if err != nil || out.Reloaded {
		t.Fatalf("adding web/late: reloaded %v, %v", out.Reloaded, err)
	}
	for _, b := range inst.Applied().Backends {
		if b.Route == "web/late" {
			f.late = b
		}
	}
	caps, err := socket.DetectCapabilities(ctx, f.admin)
	if err != nil {
		t.Fatal(err)
	}
	if caps.DynamicBackends && caps.SafeBackendDeletion {
		if f.late.Spare || f.late.Name != "be_http:web:late" {
			t.Fatalf("web/late is served by %q (spare %v), want its own backend added at runtime", f.late.Name, f.late.Spare)
		}
	} else if !f.late.Spare || !strings.Contains(f.late.Name, model.SpareNamespace) {
		t.Fatalf("web/late is served by %q (spare %v), want a claimed spare", f.late.Name, f.late.Spare)
	}

	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	get := func(url string, n int, want int) {
		for range n {
			if status, _, _ := client.Get(t, url); status != want {
				t.Fatalf("GET %s: %d, want %d", url, status, want)
			}
		}
	}
	get("http://www.example.com/", wwwRequests, http.StatusOK)
	get("https://secure.example.com/", secureRequests, http.StatusOK)
	get("http://late.example.com/", lateRequests, http.StatusOK)
	get("http://nowhere.example.com/", 1, http.StatusServiceUnavailable)
	client.CloseIdleConnections()
	f.waitCounted(t, wwwRequests+secureRequests+lateRequests, 1)
	if *record {
		f.record(t)
	}
	return f
}

// record writes the raw `show stat -1 7 -1` reply and the applied backends into
// testdata/haproxy-<major>.<minor>/ (see testdata/README.md).
func (f *fixture) record(t *testing.T) {
	t.Helper()
	info, err := f.h.Cmd("show info")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := socket.ParseInfo(info)
	if err != nil {
		t.Fatal(err)
	}
	v, err := socket.ParseVersion(kv["Version"])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.h.Cmd("show stat -1 7 -1")
	if err != nil {
		t.Fatal(err)
	}
	state, err := json.MarshalIndent(model.Config{Backends: f.inst.Applied().Backends}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", recordedDir(v))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"show_stat.txt": []byte(raw),
		"applied.json":  append(state, '\n'),
		"version.txt":   []byte(v.Text + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded HAProxy %s into %s", v.Text, dir)
}

// waitCounted waits (bounded) until HAProxy's backends count ok 2xx and bad 5xx responses: a
// client has its response before HAProxy ends the transaction and counts it (3.4 was seen a scrape
// late).
func (f *fixture) waitCounted(t *testing.T, ok, bad int) {
	t.Helper()
	var got2xx, got5xx int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		raw, err := f.h.Cmd("show stat -1 2 -1")
		if err != nil {
			t.Fatal(err)
		}
		got2xx, got5xx = sumColumns(t, raw, "hrsp_2xx"), sumColumns(t, raw, "hrsp_5xx")
		if got2xx >= ok && got5xx >= bad {
			return
		}
	}
	t.Fatalf("HAProxy counted %d 2xx and %d 5xx responses, want %d and %d", got2xx, got5xx, ok, bad)
}

// sumColumns adds up one column of a `show stat` CSV reply.
func sumColumns(t *testing.T, csv, column string) int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	header := strings.Split(strings.TrimPrefix(lines[0], "# "), ",")
	i := slices.Index(header, column)
	if i < 0 {
		t.Fatalf("show stat has no column %s", column)
	}
	sum := 0
	for _, l := range lines[1:] {
		if fields := strings.Split(l, ","); i < len(fields) {
			n, _ := strconv.Atoi(fields[i])
			sum += n
		}
	}
	return sum
}

func recordedDir(v socket.Version) string {
	return fmt.Sprintf("haproxy-%d.%d", v.Major, v.Minor)
}

// TestCollectorOnHAProxy scrapes the fixture's HAProxy: the Routes' requests are counted under their
// namespace and route, with OpenShift's backend kinds; the claimed spare is reported under web/late;
// servers carry their pod and Service; free spares are not exported.
func TestCollectorOnHAProxy(t *testing.T) {
	f := startFixture(t)
	c := newCollector(t, f.admin, f.inst.Applied, metrics.Options{Fields: metrics.AllFields()})
	checkFixtureSeries(t, gather(t, c), f.late.Name)
}

// checkFixtureSeries checks the series of the fixture's HAProxy (live or recorded); lateBackend is
// the name of the spare web/late claimed.
func checkFixtureSeries(t *testing.T, g gathered, lateBackend string) {
	t.Helper()
	if up := g.value(t, "haproxy_up", map[string]string{}); up != 1 {
		t.Fatalf("haproxy_up %v", up)
	}
	route := func(kind, name, code string) map[string]string {
		return map[string]string{"backend": kind, "namespace": "web", "route": name, "code": code}
	}
	for _, c := range []struct {
		kind, name string
		want       float64
	}{
		{"http", "www", wwwRequests},
		{"https-edge", "secure", secureRequests},
		{"http", "late", lateRequests}, // the claimed spare
	} {
		if got := g.value(t, "haproxy_backend_http_responses_total", route(c.kind, c.name, "2xx")); got != c.want {
			t.Errorf("%s: %v 2xx responses, want %v", c.name, got, c.want)
		}
		if got := g.value(t, "haproxy_backend_up", map[string]string{"backend": c.kind, "namespace": "web", "route": c.name}); got != 1 {
			t.Errorf("%s: haproxy_backend_up %v", c.name, got)
		}
	}
	// Only the three Routes' backends and the internal ones: no free spare, no spare name.
	kinds := g.labelValues("haproxy_backend_", "backend")
	want := []string{"http", "https-edge", "other/be_no_sni", "other/be_sni", "other/openshift_default"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("backend labels %v, want %v", kinds, want)
	}
	if n := len(g.match("haproxy_backend_up", nil)); n != 6 {
		t.Errorf("%d haproxy_backend_up series, want 6 (3 Routes, 3 internal):\n%s", n, g.dump("haproxy_backend_up"))
	}
	if got := g.value(t, "haproxy_backend_http_responses_total", map[string]string{
		"backend": "other/openshift_default", "namespace": "", "route": "", "code": "5xx"}); got != 1 {
		t.Errorf("openshift_default: %v 5xx responses, want 1", got)
	}
	for _, s := range g {
		for k, v := range s.labels {
			if strings.Contains(v, model.SpareNamespace) || strings.Contains(v, lateBackend) {
				t.Errorf("series %s: label %s names a spare", s, k)
			}
		}
	}

	// Servers: the pods of each Route, by address, pod and Service.
	perPod := map[string]float64{}
	for _, s := range g.match("haproxy_server_http_responses_total", map[string]string{"namespace": "web", "code": "2xx"}) {
		if !strings.HasPrefix(s.labels["server"], "127.0.0.") {
			t.Errorf("server label %q, want ip:port", s.labels["server"])
		}
		perPod[s.labels["route"]+"/"+s.labels["pod"]+"/"+s.labels["service"]] += s.value
	}
	wantPods := map[string]float64{"late/late-0/late": lateRequests}
	if perPod["www/www-0/www"]+perPod["www/www-1/www"] != wwwRequests ||
		perPod["secure/www-0/www"]+perPod["secure/www-1/www"] != secureRequests ||
		perPod["late/late-0/late"] != wantPods["late/late-0/late"] || len(perPod) != 5 {
		t.Errorf("2xx responses per route/pod/service: %v", perPod)
	}
	if n := len(g.match("haproxy_server_up", nil)); n != 5 {
		t.Errorf("%d haproxy_server_up series, want 5:\n%s", n, g.dump("haproxy_server_up"))
	}

	// Frontends by name.
	if got := g.value(t, "haproxy_frontend_http_responses_total", map[string]string{"frontend": "public", "code": "2xx"}); got != wwwRequests+lateRequests {
		t.Errorf("public: %v 2xx responses, want %d", got, wwwRequests+lateRequests)
	}
	for _, fe := range []string{"public", "public_ssl", "fe_sni", "fe_no_sni"} {
		if !g.has("haproxy_frontend_current_sessions", map[string]string{"frontend": fe}) {
			t.Errorf("no haproxy_frontend_current_sessions of %s", fe)
		}
	}
}
