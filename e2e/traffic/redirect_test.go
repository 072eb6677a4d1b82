package traffic

import (
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// TestRedirect: a plain-HTTP request is redirected to https when the most specific Route of its host
// and path, of any kind, has insecureEdgeTerminationPolicy Redirect, before and whatever the
// backend lookup, as OpenShift's router decides it (os_route_http_redirect.map); a more specific
// Route that does not redirect is not, and is served when it serves plain HTTP. The redirect is
// OpenShift's: 302 to https://<Host without its port><path>?<query>.
func TestRedirect(t *testing.T) {
	f := newFixture(t)
	names := []string{"edge", "plain", "allow", "none", "pass", "wild", "exact"}
	backends := map[string]*testkit.Backend{}
	for i, name := range names {
		backends[name] = testkit.StartHTTPBackend(t, "127.0.0."+strconv.Itoa(2+i), name)
		f.m.Service("redir", name, backends[name])
	}
	crt, key := f.ca.Issue(t, "r.example.com")
	edge := func(policy string) []testbed.RouteOption {
		return []testbed.RouteOption{testbed.Edge(crt, key), testbed.Insecure(policy)}
	}
	f.m.Route("redir", "edge", "r.example.com", "", "edge", edge("Redirect")...)
	f.m.Route("redir", "plain", "r.example.com", "/api", "plain")
	f.m.Route("redir", "allow", "r.example.com", "/allow", "allow", edge("Allow")...)
	f.m.Route("redir", "none", "r.example.com", "/none", "none", edge("None")...)
	f.m.Route("redir", "pass", "pass.example.com", "", "pass", testbed.Passthrough(), testbed.Insecure("Redirect"))
	f.m.Route("redir", "wild", "x.w.example.com", "", "wild", append(edge("Redirect"), testbed.Wildcard())...)
	f.m.Route("redir", "exact", "exact.w.example.com", "", "exact")
	r := f.start(t)

	redirected := func(host, path, location string) {
		t.Helper()
		resp, err := r.Client.Do(http.MethodGet, "http://client.invalid"+path, http.Header{"Host": {host}})
		if err != nil {
			t.Errorf("GET %s (Host %s): %v", path, host, err)
			return
		}
		if resp.Status != http.StatusFound || resp.Header.Get("Location") != location {
			t.Errorf("GET %s (Host %s): %d Location %q, want 302 to %s", path, host, resp.Status, resp.Header.Get("Location"), location)
		}
	}
	redirected("r.example.com", "/", "https://r.example.com/")
	redirected("r.example.com:80", "/a/b?q=1&x=%2F", "https://r.example.com/a/b?q=1&x=%2F")
	redirected("R.Example.COM:8080", "/apix", "https://r.example.com/apix")
	redirected("r.example.com.", "/", "https://r.example.com./")
	redirected("pass.example.com:80", "/p?q", "https://pass.example.com/p?q")
	redirected("y.w.example.com", "/w", "https://y.w.example.com/w")
	for _, name := range []string{"edge", "pass", "wild"} {
		if n := backends[name].Requests(); n != 0 {
			t.Errorf("backend %s answered %d plain-HTTP requests, want every one redirected", name, n)
		}
	}

	// More specific Routes that do not redirect decide for their paths.
	for _, tc := range []struct {
		url string
		w   want
	}{
		{"http://r.example.com/api", want{200, "plain", "/api"}},
		{"http://r.example.com/api/x?q=1", want{200, "plain", "/api/x"}},
		{"http://r.example.com/allow/x", want{200, "allow", "/allow/x"}},
		{"http://r.example.com/none/x", want{503, "", ""}}, // None: no plain-HTTP service, no redirect
		{"http://exact.w.example.com/", want{200, "exact", "/"}},
		{"https://r.example.com/x", want{200, "edge", "/x"}},
	} {
		expect(t, r.Client, tc.url, tc.w)
	}

	// An absolute-form request line: the Location is the same (OpenShift's %[url] would give
	// "https://r.example.comhttp://r.example.com/a?q=1").
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPPort))
	raw, err := rawExchange(addr, nil, nil, "GET http://r.example.com/a?q=1 HTTP/1.1\r\nHost: r.example.com\r\nConnection: close\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := parseRaw(raw)
	if err != nil {
		t.Fatal(err)
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != "https://r.example.com/a?q=1" {
		t.Errorf("absolute-form GET: %d Location %q, want 302 to https://r.example.com/a?q=1", resp.StatusCode, loc)
	}
}
