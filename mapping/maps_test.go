package mapping

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

func TestPathEntries(t *testing.T) {
	tests := map[string]string{
		"":         "h/",
		"/":        "h/",
		"/api":     "=h/api h/api/",
		"/api/":    "h/api/",
		"/a/b":     "=h/a/b h/a/b/",
		"/a/b/":    "h/a/b/",
		"/a;x=1":   "=h/a;x=1 h/a;x=1/",
		"/%41%2F/": "h/%41%2F/",
	}
	for path, want := range tests {
		var keys []string
		for _, e := range pathEntries("h", path) {
			keys = append(keys, e.key)
		}
		if got := strings.Join(keys, " "); got != want {
			t.Errorf("pathEntries(h, %q) = %q, want %q", path, got, want)
		}
	}
}

// lookup emulates the frontends' order-independent lookup in one map: exact key, longest prefix,
// then (when the wildcard domain is known) the same on the wildcard keys.
func lookup(cfg *model.Config, mapName, host, path string) string {
	m := mapEntries(cfg, mapName)
	wild := mapEntries(cfg, model.MapWildcardDomain)
	find := func(key string) string {
		if v, ok := m["="+key]; ok {
			return v
		}
		best, bestLen := "", -1
		for k, v := range m {
			if !strings.HasPrefix(k, "=") && strings.HasPrefix(key, k) && len(k) > bestLen {
				best, bestLen = v, len(k)
			}
		}
		return best
	}
	if v := find(host + path); v != "" {
		return v
	}
	if i := strings.IndexByte(host, '.'); i >= 0 {
		wd := "*" + host[i:]
		if _, ok := wild[wd]; ok {
			return find(wd + path)
		}
	}
	return ""
}

// TestMatchingSemantics checks that the map entries reproduce OpenShift's path semantics.
func TestMatchingSemantics(t *testing.T) {
	routes := []*routev1.Route{
		newRoute("ns", "root", "www.example.com", 1),
		newRoute("ns", "api", "www.example.com", 2, withPath("/api")),
		newRoute("ns", "api-slash", "www.example.com", 3, withPath("/api/")),
		newRoute("ns", "v2", "www.example.com", 4, withPath("/api/v2")),
		newRoute("ns", "static", "www.example.com", 5, withPath("/static/")),
		newRoute("ns", "wild", "x.apps.example.com", 6, withWildcard()),
		newRoute("ns", "exact", "a.apps.example.com", 7, withPath("/only")),
	}
	opts := testOptions()
	opts.AllowWildcardRoutes = true
	cfg, problems := translate(t, Input{Routes: routes}, opts)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	tests := []struct{ host, path, want string }{
		{"www.example.com", "/", "root"},
		{"www.example.com", "/other", "root"},
		{"www.example.com", "/api", "api"},
		{"www.example.com", "/api/", "api-slash"},
		{"www.example.com", "/api/x", "api-slash"},
		{"www.example.com", "/apix", "root"},
		{"www.example.com", "/api/v2", "v2"},
		{"www.example.com", "/api/v2/y", "v2"},
		{"www.example.com", "/api/v2x", "api-slash"},
		{"www.example.com", "/static", "root"},
		{"www.example.com", "/static/a.css", "static"},
		{"b.apps.example.com", "/anything", "wild"},
		{"a.apps.example.com", "/only", "exact"},
		{"a.apps.example.com", "/only/x", "exact"},
		{"a.apps.example.com", "/elsewhere", "wild"},
		{"apps.example.com", "/", ""},
		{"c.b.apps.example.com", "/", ""},
		{"other.example.com", "/", ""},
	}
	for _, tt := range tests {
		want := ""
		if tt.want != "" {
			want = "be_http:ns:" + tt.want
		}
		if got := lookup(cfg, model.MapHTTP, tt.host, tt.path); got != want {
			t.Errorf("%s%s → %q, want %q", tt.host, tt.path, got, want)
		}
	}
}

// TestMapsByTermination checks which maps each kind of Route lands in. Every Route has its keys in
// the redirect map, with "1" only where it redirects; only those that serve plain HTTP are in the
// HTTP map (a redirecting Route never serves plain HTTP).
func TestMapsByTermination(t *testing.T) {
	type want struct{ http, redirect, edge, tcp bool }
	tests := []struct {
		name string
		opt  routeOpt
		want want
	}{
		{"http", nil, want{http: true}},
		{"edge", withTLS(routev1.TLSTerminationEdge, ""), want{edge: true}},
		{"edge-none", withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyNone), want{edge: true}},
		{"edge-allow", withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyAllow), want{http: true, edge: true}},
		{"edge-redirect", withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect), want{redirect: true, edge: true}},
		{"reencrypt-allow", withTLS(routev1.TLSTerminationReencrypt, routev1.InsecureEdgeTerminationPolicyAllow), want{http: true, edge: true}},
		{"passthrough", withTLS(routev1.TLSTerminationPassthrough, ""), want{tcp: true}},
		{"passthrough-redirect", withTLS(routev1.TLSTerminationPassthrough, routev1.InsecureEdgeTerminationPolicyRedirect), want{redirect: true, tcp: true}},
	}
	opts := testOptions()
	opts.DefaultDestinationCAFile = "/ca.pem"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRoute("ns", "r", "www.example.com", 0)
			if tt.opt != nil {
				tt.opt(r)
			}
			cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, opts)
			if len(problems) != 0 {
				t.Fatal(problems)
			}
			be := cfg.Routes[0].Backend
			got := want{
				http:     mapEntries(cfg, model.MapHTTP)["www.example.com/"] == be,
				redirect: mapEntries(cfg, model.MapHTTPRedirect)["www.example.com/"] == "1",
				edge:     mapEntries(cfg, model.MapEdgeReencrypt)["www.example.com/"] == be,
				tcp:      mapEntries(cfg, model.MapTCP)["www.example.com"] == be,
			}
			if got != tt.want {
				t.Fatalf("in maps %+v, want %+v", got, tt.want)
			}
			if v, ok := mapEntries(cfg, model.MapHTTPRedirect)["www.example.com/"]; !ok || (v == "1") != tt.want.redirect {
				t.Fatalf("redirect map entry %q (present %v), want 1 or 0 as the Route redirects or not", v, ok)
			}
		})
	}
}

func TestWildcardPassthroughWithTerminatedExactHost(t *testing.T) {
	opts := testOptions()
	opts.AllowWildcardRoutes = true
	routes := []*routev1.Route{
		newRoute("ns", "wild", "*.example.com", 1, withWildcard(), withTLS(routev1.TLSTerminationPassthrough, "")),
		newRoute("ns", "edge", "a.example.com", 2, withTLS(routev1.TLSTerminationEdge, "")),
		newRoute("ns", "edge-path", "b.example.com", 3, withPath("/x"), withTLS(routev1.TLSTerminationEdge, "")),
		newRoute("ns", "pass", "b.example.com", 4, withTLS(routev1.TLSTerminationPassthrough, "")),
		newRoute("ns", "plain", "c.example.com", 5),
		newRoute("ns", "other-domain", "a.example.org", 6, withTLS(routev1.TLSTerminationEdge, "")),
	}
	cfg, problems := translate(t, Input{Routes: routes}, opts)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	got := mapEntries(cfg, model.MapTCP)
	want := map[string]string{
		"*.example.com": "be_tcp:ns:wild",
		"a.example.com": model.SNIBackend,
		"b.example.com": "be_tcp:ns:pass", // an exact passthrough Route keeps its host
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("os_tcp_be.map %v, want %v", got, want)
	}
}

func TestAllMapsAlwaysPresentAndSorted(t *testing.T) {
	cfg, _ := translate(t, Input{}, testOptions())
	var names []string
	for _, m := range cfg.Maps {
		names = append(names, m.Name)
		if m.Entries == nil {
			t.Errorf("map %s has nil entries", m.Name)
		}
	}
	want := []string{model.MapHTTP, model.MapEdgeReencrypt, model.MapHTTPRedirect, model.MapTCP, model.MapWildcardDomain, model.MapForwardedHeaders, model.MapCookieSameSite, model.MapCookieNames, model.MapHeaderValues, model.MapTimeoutServer, model.MapTimeoutTunnel, model.MapHSTS}
	sort.Strings(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("maps %v, want %v", names, want)
	}
}
