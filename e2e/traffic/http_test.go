package traffic

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

func TestHostMatching(t *testing.T) {
	f := newFixture(t)
	www := testkit.StartHTTPBackend(t, "127.0.0.2", "www")
	other := testkit.StartHTTPBackend(t, "127.0.0.3", "other")
	f.m.Service("web", "www", www).Service("web", "other", other)
	f.m.Route("web", "www", "www.example.com", "", "www")
	f.m.Route("web", "other", "other.example.com", "", "other")
	r := f.start(t)

	for _, tc := range []struct {
		url string
		w   want
	}{
		{"http://www.example.com/", want{200, "www", "/"}},
		{"http://www.example.com/api/x", want{200, "www", "/api/x"}},
		{"http://WWW.Example.COM/Mixed/Case", want{200, "www", "/Mixed/Case"}},
		{"http://www.example.com:8080/port", want{200, "www", "/port"}},
		{"http://www.example.com./dot", want{200, "www", "/dot"}},
		{"http://WWW.EXAMPLE.COM.:80/dot-port", want{200, "www", "/dot-port"}},
		{"http://other.example.com/", want{200, "other", "/"}},
		{"http://OTHER.example.com:1234/x", want{200, "other", "/x"}},
		{"http://xwww.example.com/", want{503, "", ""}},
		{"http://www.example.com.evil/", want{503, "", ""}},
		{"http://example.com/", want{503, "", ""}},
	} {
		t.Run(tc.url, func(t *testing.T) { expect(t, r.Client, tc.url, tc.w) })
	}
	// Host headers a URL cannot carry (a trailing dot after the port).
	for _, host := range []string{"WWW.Example.COM:8080.", "www.example.com.:8080"} {
		t.Run("Host: "+host, func(t *testing.T) {
			resp, err := r.Client.Do(http.MethodGet, "http://client.invalid/api", http.Header{"Host": {host}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != 200 || resp.Backend != "www" || receivedPath(resp) != "/api" {
				t.Errorf("GET /api with Host %q: got %d from %s (body %q), want 200 from backend www",
					host, resp.Status, who(resp.Backend), resp.Body)
			}
		})
	}
}

// TestUpperCaseRouteHost: a Route whose host has upper-case letters is rejected (InvalidHost), as
// OpenShift's router rejects it, so its host is not served in any case; the same host in lower case
// on another Route is, whatever the case of the request's Host.
func TestUpperCaseRouteHost(t *testing.T) {
	f := newFixture(t)
	be := testkit.StartHTTPBackend(t, "127.0.0.2", "app")
	f.m.Service("case", "app", be)
	f.m.Route("case", "upper", "WWW.Upper.example.com", "", "app")
	f.m.Route("case", "lower", "www.lower.example.com", "", "app")
	r := testbed.StartStaticHAProxy(t, f.m.Input(t), testbed.RouterOptions(t), f.ca.IssueBundle(t, defaultCertName), f.ca.Pool())
	var rejected []string
	for _, p := range r.Problems {
		if !p.Warning {
			rejected = append(rejected, p.Name+" "+p.Reason)
		}
	}
	if want := []string{"upper " + mapping.ReasonInvalidHost}; !slices.Equal(rejected, want) {
		t.Errorf("rejected Routes %q, want %q", rejected, want)
	}
	for _, tc := range []struct {
		url string
		w   want
	}{
		{"http://www.upper.example.com/", want{503, "", ""}},
		{"http://WWW.Upper.example.com/", want{503, "", ""}},
		{"http://www.lower.example.com/", want{200, "app", "/"}},
		{"http://WWW.Lower.EXAMPLE.com/", want{200, "app", "/"}},
	} {
		expect(t, r.Client, tc.url, tc.w)
	}
}

// TestTargetPort: spec.port.targetPort selects the endpoints' ports by name or number, as OpenShift's
// router selects them, and never through the Service: the Service's own port number (which the
// Service forwards to the endpoint port) selects no server, so its Route answers 503.
func TestTargetPort(t *testing.T) {
	f := newFixture(t)
	be := testkit.StartHTTPBackend(t, "127.0.0.2", "app")
	f.m.Service("tp", "app", be)
	in := f.m.Input(t)
	svcPort := in.Services[0].Spec.Ports[0].Port
	if svcPort == int32(be.Port) {
		t.Fatalf("the Service port %d is the backend's port: the test needs them apart", svcPort)
	}
	port := func(tp intstr.IntOrString) testbed.RouteOption {
		return func(r *routev1.Route) { r.Spec.Port = &routev1.RoutePort{TargetPort: tp} }
	}
	f.m.Route("tp", "by-name", "name.tp.example.com", "", "app", port(intstr.FromString(testbed.PortName)))
	f.m.Route("tp", "by-number", "number.tp.example.com", "", "app", port(intstr.FromInt32(int32(be.Port))))
	f.m.Route("tp", "by-string-number", "string.tp.example.com", "", "app", port(intstr.FromString(strconv.Itoa(be.Port))))
	f.m.Route("tp", "service-port", "service.tp.example.com", "", "app", port(intstr.FromInt32(svcPort)))
	r := f.start(t)
	for _, tc := range []struct {
		url string
		w   want
	}{
		{"http://name.tp.example.com/", want{200, "app", "/"}},
		{"http://number.tp.example.com/", want{200, "app", "/"}},
		{"http://string.tp.example.com/", want{200, "app", "/"}},
		{"http://service.tp.example.com/", want{503, "", ""}},
	} {
		expect(t, r.Client, tc.url, tc.w)
	}
}

// pathCase is one request against the overlapping-path Routes and the Route that must answer it.
type pathCase struct {
	path    string
	backend string
}

var overlappingPathCases = []pathCase{
	{"/api/v2/x", "v2"},
	{"/api/v2", "v2"},
	{"/api/v2/", "v2"},
	{"/api/v2x", "api"},
	{"/api/x", "api"},
	{"/api", "api"},
	{"/apix", "root"},
	{"/static/a", "static"},
	{"/static/", "static"},
	{"/static", "root"},
	{"/", "root"},
	{"/other/api/v2", "root"},
}

func TestOverlappingPaths(t *testing.T) {
	ca := testkit.NewCA(t, routerCAName)
	backends := map[string]*testkit.Backend{
		"root":   testkit.StartHTTPBackend(t, "127.0.0.2", "root"),
		"api":    testkit.StartHTTPBackend(t, "127.0.0.3", "api"),
		"v2":     testkit.StartHTTPBackend(t, "127.0.0.4", "v2"),
		"static": testkit.StartHTTPBackend(t, "127.0.0.5", "static"),
	}
	paths := map[string]string{"root": "/", "api": "/api", "v2": "/api/v2", "static": "/static/"}
	// The Routes in several orders: creation time follows the order too, so the oldest Route differs.
	orders := [][]string{
		{"root", "api", "v2", "static"},
		{"static", "v2", "api", "root"},
		{"api", "root", "static", "v2"},
		{"v2", "static", "root", "api"},
	}
	var firstMap []byte
	for i, order := range orders {
		t.Run(fmt.Sprintf("order=%s", strings.Join(order, ",")), func(t *testing.T) {
			f := &fixture{ca: ca}
			for _, name := range order {
				f.m.Service("paths", name, backends[name])
				f.m.Route("paths", name, "paths.example.com", paths[name], name)
			}
			r := f.start(t)
			for _, pc := range overlappingPathCases {
				expect(t, r.Client, "http://paths.example.com"+pc.path, want{200, pc.backend, pc.path})
			}
			m := r.File(layout.InConf(model.MapHTTP))
			if i == 0 {
				firstMap = m
				checkRuntimeReorder(t, r)
			} else if !bytes.Equal(m, firstMap) {
				t.Errorf("%s differs from the one rendered for order %v:\n%s\nvs\n%s", model.MapHTTP, orders[0], m, firstMap)
			}
		})
	}
}

// checkRuntimeReorder reloads os_http_be.map through the admin socket with its entries in other
// orders (what runtime updates would produce) and checks that HAProxy's answers do not change.
func checkRuntimeReorder(t *testing.T, r *testbed.StaticHAProxy) {
	t.Helper()
	mapPath := r.Dir + "/conf/" + model.MapHTTP
	entries := r.Config.Map(model.MapHTTP).Entries
	if len(entries) < 4 {
		t.Fatalf("%s has %d entries, want at least 4 (one per Route)", model.MapHTTP, len(entries))
	}
	reversed := make([]model.MapEntry, 0, len(entries))
	for i := len(entries) - 1; i >= 0; i-- {
		reversed = append(reversed, entries[i])
	}
	// Odd positions first, then even: neither sorted nor reverse sorted.
	var interleaved []model.MapEntry
	for start := 1; start >= 0; start-- {
		for i := start; i < len(entries); i += 2 {
			interleaved = append(interleaved, entries[i])
		}
	}
	for _, o := range []struct {
		name    string
		entries []model.MapEntry
	}{{"reversed", reversed}, {"interleaved", interleaved}} {
		name, order := o.name, o.entries
		if out, err := r.Cmd("clear map " + mapPath); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("clear map: %q, %v", out, err)
		}
		for _, e := range order {
			if out, err := r.Cmd(fmt.Sprintf("add map %s %s %s", mapPath, e.Key, e.Value)); err != nil || strings.TrimSpace(out) != "" {
				t.Fatalf("add map %s %s: %q, %v", e.Key, e.Value, out, err)
			}
		}
		shown, err := r.Cmd("show map " + mapPath)
		if err != nil || strings.Count(shown, "\n") < len(order) {
			t.Fatalf("show map after re-adding %d entries: %q, %v", len(order), shown, err)
		}
		failed := t.Failed()
		for _, pc := range overlappingPathCases {
			expect(t, r.Client, "http://paths.example.com"+pc.path, want{200, pc.backend, pc.path})
		}
		if !failed && t.Failed() {
			t.Logf("answers changed with the map entries in %s order:\n%s", name, shown)
		}
	}
}

func TestDefaultsAndHealth(t *testing.T) {
	f := newFixture(t)
	f.m.Service("misc", "empty") // a Service without endpoints
	f.m.Route("misc", "empty", "empty.example.com", "", "empty")
	f.m.Route("misc", "missing", "missing.example.com", "", "no-such-service")
	r := f.start(t)

	cases := []struct {
		name, url, counter string
	}{
		{"no endpoints", "http://empty.example.com/x", model.BackendName(model.KindHTTP, "misc", "empty")},
		{"missing service", "http://missing.example.com/x", model.BackendName(model.KindHTTP, "misc", "missing")},
		{"unknown host", "http://unknown.example.com/x", model.DefaultBackend},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string]int64{}
			for _, c := range cases {
				before[c.counter] = stat(t, r, c.counter, "hrsp_5xx")
			}
			expect(t, r.Client, tc.url, want{503, "", ""})
			// The 503 must come from the expected proxy: the Route's backend, or the default one.
			// HAProxy counts a response when the stream ends, which may be just after the client
			// has read it: wait (bounded) for the expected counter before comparing all of them.
			for i := 0; i < 100 && stat(t, r, tc.counter, "hrsp_5xx") == before[tc.counter]; i++ {
				time.Sleep(20 * time.Millisecond)
			}
			for _, c := range cases {
				got := stat(t, r, c.counter, "hrsp_5xx") - before[c.counter]
				wantN := int64(0)
				if c.counter == tc.counter {
					wantN = 1
				}
				if got != wantN {
					t.Errorf("GET %s: %s answered %d 5xx, want %d", tc.url, c.counter, got, wantN)
				}
			}
		})
	}
	t.Run("health", func(t *testing.T) {
		for _, url := range []string{
			"http://unknown.example.com/_______internal_router_healthz",
			"http://empty.example.com/_______internal_router_healthz",
		} {
			expect(t, r.Client, url, want{200, "", ""})
		}
	})
}

func TestWildcard(t *testing.T) {
	f := newFixture(t)
	wild := testkit.StartHTTPBackend(t, "127.0.0.2", "wild")
	exact := testkit.StartHTTPBackend(t, "127.0.0.3", "exact")
	f.m.Service("wild", "wild", wild).Service("wild", "exact", exact)
	f.m.Route("wild", "wild", "*.wild.example.com", "", "wild", testbed.Wildcard())
	f.m.Route("wild", "exact", "exact.wild.example.com", "", "exact")
	r := f.start(t)

	for _, tc := range []struct {
		url string
		w   want
	}{
		{"http://a.wild.example.com/x", want{200, "wild", "/x"}},
		{"http://B.Wild.Example.com:8080/", want{200, "wild", "/"}},
		{"http://c.wild.example.com./y", want{200, "wild", "/y"}},
		{"http://exact.wild.example.com/x", want{200, "exact", "/x"}},
		{"http://EXACT.wild.example.com./", want{200, "exact", "/"}},
		{"http://wild.example.com/", want{503, "", ""}},
		{"http://a.b.wild.example.com/", want{503, "", ""}},
		{"http://a.wild.example.org/", want{503, "", ""}},
	} {
		t.Run(tc.url, func(t *testing.T) { expect(t, r.Client, tc.url, tc.w) })
	}
}

// TestRewrite: rewrite-target rewrites the request path as OpenShift's router does: the Route's path
// as written is replaced by the target, a "/" after it too only when the target is "/" alone (so
// "/v4/" on "/v3" gives "/v4//x", as on the stock router), the annotation's quotes, escapes, '#'
// and '%' mean what they mean there, and a path or target with a single quote works.
func TestRewrite(t *testing.T) {
	f := newFixture(t)
	be := testkit.StartHTTPBackend(t, "127.0.0.2", "app")
	f.m.Service("ann", "app", be)
	rewrite := func(v string) testbed.RouteOption { return testbed.Annotate(mapping.AnnotationRewriteTarget, v) }
	f.m.Route("ann", "strip", "rw.example.com", "/app", "app", rewrite("/"))
	f.m.Route("ann", "move", "rw.example.com", "/v1", "app", rewrite("/v2/api"))
	f.m.Route("ann", "slash", "rw.example.com", "/v3", "app", rewrite("/v4/"))
	f.m.Route("ann", "slash-path", "rw.example.com", "/v5/", "app", rewrite("/v6"))
	f.m.Route("ann", "quote", "rw.example.com", "/q'uote", "app", rewrite(`/it\'s`))
	f.m.Route("ann", "unquoted", "rw.example.com", "/u", "app", rewrite(`/'plain'/"text"`))
	f.m.Route("ann", "comment", "rw.example.com", "/c", "app", rewrite("/only#the rest is dropped"))
	f.m.Route("ann", "percent", "rw.example.com", "/p", "app", rewrite("/%%41"))
	r := f.start(t)

	for _, tc := range []struct {
		name, url string
		w         want
	}{
		{"rewrite to root", "http://rw.example.com/app/x/y", want{200, "app", "/x/y"}},
		{"rewrite exact path", "http://rw.example.com/app", want{200, "app", "/"}},
		{"rewrite to other prefix", "http://rw.example.com/v1/x", want{200, "app", "/v2/api/x"}},
		{"rewrite other prefix exact", "http://rw.example.com/v1", want{200, "app", "/v2/api"}},
		{"target ending in a slash", "http://rw.example.com/v3/x", want{200, "app", "/v4//x"}},
		{"path ending in a slash", "http://rw.example.com/v5/x", want{200, "app", "/v6x"}},
		{"quotes in path and target", "http://rw.example.com/q'uote/x", want{200, "app", "/it's/x"}},
		{"unescaped quotes removed", "http://rw.example.com/u/x", want{200, "app", "/plain/text/x"}},
		{"a comment drops the rest", "http://rw.example.com/c/x/y", want{200, "app", "/only"}},
		{"%% is one percent sign", "http://rw.example.com/p/x", want{200, "app", "/%41/x"}},
		{"no route outside the paths", "http://rw.example.com/other", want{503, "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) { expect(t, r.Client, tc.url, tc.w) })
	}
}
