package metrics_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haroute/haroute/inspect/metrics"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// cloneBackends returns a copy of cfg whose backends can be changed.
func cloneBackends(cfg *model.Config) *model.Config {
	out := *cfg
	out.Backends = slices.Clone(cfg.Backends)
	for i, b := range out.Backends {
		nb := *b // the recordings' backends are shared by every test
		out.Backends[i] = &nb
	}
	return &out
}

// routeSeries returns the series labelled with a Route.
func routeSeries(g gathered) gathered {
	var out gathered
	for _, s := range g.prefixed("haproxy_") {
		if s.labels["route"] != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestHAProxyDown: when HAProxy does not answer, or not with show stat, haproxy_up is 0 and no
// HAProxy series is exported, stale or not.
func TestHAProxyDown(t *testing.T) {
	r := recordings(t)[0]
	for name, run := range map[string]*replies{
		"unavailable": {err: socket.ErrUnavailable},
		"help text":   {reply: "Unknown command: 'show stat -1 7 -1'\n"},
	} {
		t.Run(name, func(t *testing.T) {
			c := newCollector(t, run, func() *model.Config { return r.applied }, metrics.Options{})
			g := gather(t, c)
			if up := g.value(t, "haproxy_up", map[string]string{}); up != 0 {
				t.Errorf("haproxy_up %v", up)
			}
			for _, p := range []string{"haproxy_frontend_", "haproxy_backend_", "haproxy_server_"} {
				if n := len(g.prefixed(p)); n > 0 {
					t.Errorf("%d %s* series", n, p)
				}
			}
			if got := g.value(t, "haproxy_exporter_scrape_errors_total", map[string]string{"reason": "haproxy"}); got != 1 {
				t.Errorf("scrape errors %v", got)
			}
			if !g.has("haproxy_exporter_scrape_duration_seconds", map[string]string{}) {
				t.Error("no scrape duration")
			}
		})
	}
}

// TestUnknownState: while the applied state is unknown, HAProxy's frontends and internal backends
// are exported but no series of a Route, and HAProxy is not asked for its servers.
func TestUnknownState(t *testing.T) {
	r := recordings(t)[0]
	run := &replies{reply: r.reply}
	c := newCollector(t, run, func() *model.Config { return nil }, metrics.Options{})
	g := gather(t, c)
	if up := g.value(t, "haproxy_up", map[string]string{}); up != 1 {
		t.Errorf("haproxy_up %v", up)
	}
	if rs := routeSeries(g); len(rs) > 0 {
		t.Errorf("series of Routes without an applied state:\n%s", rs.dump(""))
	}
	if n := len(g.prefixed("haproxy_server_")); n > 0 {
		t.Errorf("%d server series", n)
	}
	if !g.has("haproxy_frontend_current_sessions", map[string]string{"frontend": "public"}) ||
		!g.has("haproxy_backend_up", map[string]string{"backend": "other/openshift_default", "namespace": "", "route": ""}) {
		t.Errorf("frontends and internal backends missing:\n%s", g.dump(""))
	}
	if got := g.value(t, "haproxy_exporter_scrape_errors_total", map[string]string{"reason": "state"}); got != 1 {
		t.Errorf("state errors %v", got)
	}
	if got := run.commands(); len(got) != 1 || got[0] != "show stat -1 3 -1" {
		t.Errorf("sent %q, want show stat -1 3 -1", got)
	}
}

// TestServerThreshold: above the threshold (OpenShift's semantics), no server series, HAProxy asked
// for frontends and backends only, and the threshold gauges say why.
func TestServerThreshold(t *testing.T) {
	r := recordings(t)[0]
	run := &replies{reply: r.reply}
	c := newCollector(t, run, func() *model.Config { return r.applied }, metrics.Options{ServerThreshold: 4})
	g := gather(t, c)
	if n := len(g.prefixed("haproxy_server_")); n > 0 {
		t.Errorf("%d server series above the threshold", n)
	}
	if !g.has("haproxy_backend_up", map[string]string{"backend": "http", "namespace": "web", "route": "www"}) {
		t.Error("backend series missing above the threshold")
	}
	if got := run.commands(); len(got) != 1 || got[0] != "show stat -1 3 -1" {
		t.Errorf("sent %q, want show stat -1 3 -1", got)
	}
	// www 2, secure 2, late 1.
	if cur := g.value(t, "haproxy_exporter_server_threshold", map[string]string{"type": "current"}); cur != 5 {
		t.Errorf("current %v, want 5", cur)
	}
	if lim := g.value(t, "haproxy_exporter_server_threshold", map[string]string{"type": "limit"}); lim != 4 {
		t.Errorf("limit %v, want 4", lim)
	}
}

// TestSeriesFollowTheAppliedState: scrapes read the applied state each time: once web/late is gone
// (its spare free again), its series are gone, although HAProxy still lists the spare.
func TestSeriesFollowTheAppliedState(t *testing.T) {
	r := recordings(t)[0]
	freed := cloneBackends(r.applied)
	for i := range freed.Backends {
		if freed.Backends[i].Route == "web/late" {
			freed.Backends[i].Route = ""
			freed.Backends[i].Servers = nil
		}
	}
	state := r.applied
	c := newCollector(t, &replies{reply: r.reply}, func() *model.Config { return state }, metrics.Options{})
	if g := gather(t, c); len(g.match("haproxy_backend_up", map[string]string{"route": "late"})) != 1 {
		t.Fatalf("web/late not exported:\n%s", g.dump("haproxy_backend_up"))
	}
	state = freed
	g := gather(t, c)
	for _, s := range routeSeries(g) {
		if s.labels["route"] == "late" {
			t.Errorf("series of the deleted Route: %s", s)
		}
	}
	if len(g.match("haproxy_backend_up", map[string]string{"route": "www"})) != 1 {
		t.Error("web/www lost")
	}
}

// TestOneBackendPerRoute: should two backends claim one Route, the Route's own backend is exported
// and the spare is not (series must be unique or the whole scrape fails).
func TestOneBackendPerRoute(t *testing.T) {
	r := recordings(t)[0]
	dup := cloneBackends(r.applied)
	for i := range dup.Backends {
		if b := dup.Backends[i]; b.Spare && b.Route == "" && b.Kind == model.KindHTTP {
			b.Route = "web/www"
		}
	}
	g := gather(t, newCollector(t, &replies{reply: r.reply}, func() *model.Config { return dup }, metrics.Options{}))
	got := g.value(t, "haproxy_backend_http_responses_total", map[string]string{
		"backend": "http", "namespace": "web", "route": "www", "code": "2xx"})
	if got != wwwRequests {
		t.Errorf("web/www: %v responses, want its own backend's %d", got, wwwRequests)
	}
}

// TestServerNotInState: a server HAProxy lists that the applied state does not (a drift) is labelled
// from its OpenShift-style name, the same labels the state would give it.
func TestServerNotInState(t *testing.T) {
	r := recordings(t)[0]
	want := gather(t, newCollector(t, &replies{reply: r.reply}, func() *model.Config { return r.applied }, metrics.Options{}))
	drifted := cloneBackends(r.applied)
	for i := range drifted.Backends {
		if drifted.Backends[i].Route == "web/www" {
			drifted.Backends[i].Servers = nil
		}
	}
	got := gather(t, newCollector(t, &replies{reply: r.reply}, func() *model.Config { return drifted }, metrics.Options{}))
	filter := func(g gathered) string {
		var out []string
		for _, s := range g.match("haproxy_server_http_responses_total", map[string]string{"route": "www"}) {
			out = append(out, s.String())
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	if filter(got) != filter(want) || filter(want) == "" {
		t.Errorf("servers labelled from their names:\n%s\nwant:\n%s", filter(got), filter(want))
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := metrics.New(&replies{}, func() *model.Config { return nil }, metrics.Options{Fields: []int{2, 1000}}); err == nil {
		t.Error("an unknown column number was accepted")
	}
	if _, err := metrics.New(nil, nil, metrics.Options{}); err == nil {
		t.Error("no runner accepted")
	}
}

func TestKindLabel(t *testing.T) {
	for k, want := range map[model.BackendKind]string{
		model.KindHTTP: "http", model.KindEdge: "https-edge", model.KindReencrypt: "https", model.KindPassthrough: "tcp",
	} {
		if got := metrics.KindLabel(k); got != want {
			t.Errorf("KindLabel(%s) = %q, want %q", k, got, want)
		}
	}
}

// TestConcurrentScrapes: two scrapes at once (two Prometheus servers) are served one after the
// other and give the same series.
func TestConcurrentScrapes(t *testing.T) {
	r := recordings(t)[0]
	c := newCollector(t, &replies{reply: r.reply}, func() *model.Config { return r.applied }, metrics.Options{})
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	counts := make(chan int, 4)
	for range cap(counts) {
		go func() {
			fams, err := reg.Gather()
			if err != nil {
				t.Error(err)
			}
			n := 0
			for _, f := range fams {
				if strings.HasPrefix(f.GetName(), "haproxy_backend_") {
					n += len(f.GetMetric())
				}
			}
			counts <- n
		}()
	}
	first := <-counts
	for range cap(counts) - 1 {
		if n := <-counts; n != first || n == 0 {
			t.Errorf("backend series %d and %d", first, n)
		}
	}
}

// TestPassthroughRoute: a passthrough Route's backend is labelled tcp, and the HTTP columns HAProxy
// leaves empty in TCP mode give no series.
func TestPassthroughRoute(t *testing.T) {
	r := recordings(t)[0]
	claimed := cloneBackends(r.applied)
	for i := range claimed.Backends {
		if b := claimed.Backends[i]; b.Spare && b.Kind == model.KindPassthrough && b.Route == "" {
			b.Route = "web/pass"
			break
		}
	}
	g := gather(t, newCollector(t, &replies{reply: r.reply}, func() *model.Config { return claimed }, metrics.Options{}))
	labels := map[string]string{"backend": "tcp", "namespace": "web", "route": "pass"}
	if !g.has("haproxy_backend_up", labels) || !g.has("haproxy_backend_connections_total", labels) {
		t.Errorf("no series of the passthrough Route:\n%s", g.dump("haproxy_backend_up"))
	}
	if n := len(g.match("haproxy_backend_http_responses_total", labels)); n != 0 {
		t.Errorf("%d HTTP response series of a tcp backend", n)
	}
}

// TestRepeatedRows: a reply that lists a proxy and a server twice (HAProxy never does; the fuzzer
// made one) still scrapes, and the first row of each name counts.
func TestRepeatedRows(t *testing.T) {
	r := recordings(t)[0]
	header, rows, _ := strings.Cut(strings.TrimSuffix(r.reply, "\n"), "\n")
	var doubled []string
	for _, row := range strings.Split(rows, "\n") {
		doubled = append(doubled, row)
		// The copy claims a huge request count: were it counted, the value would change.
		doubled = append(doubled, strings.ReplaceAll(row, ","+strconv.Itoa(wwwRequests)+",", ",999999,"))
	}
	reply := header + "\n" + strings.Join(doubled, "\n") + "\n"
	n, err := gatherCount(fuzzCollector(t, reply, r.applied))
	if err != nil || n == 0 {
		t.Fatalf("gather of a reply with every row twice: %d series, %v", n, err)
	}
	g := gather(t, newCollector(t, &replies{reply: reply}, func() *model.Config { return r.applied }, metrics.Options{}))
	got := g.value(t, "haproxy_backend_http_responses_total", map[string]string{
		"backend": "http", "namespace": "web", "route": "www", "code": "2xx"})
	if got != wwwRequests {
		t.Errorf("web/www: %v responses, want the first row's %d", got, wwwRequests)
	}
}
