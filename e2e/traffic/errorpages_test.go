package traffic

import (
	"net/http"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/render"
)

// Custom error pages as an administrator would mount them for ROUTER_ERRORFILE_503 and
// ROUTER_ERRORFILE_404: raw HTTP responses, here with CRLF line ends and a header of their own.
const (
	custom503 = "HTTP/1.0 503 Service Unavailable\r\nCache-Control: no-cache\r\nConnection: close\r\n" +
		"Content-Type: text/html\r\nX-Error-Page: custom-503\r\n\r\n<html><body>custom 503: we are down</body></html>\n"
	custom404 = "HTTP/1.0 404 Not Found\r\nCache-Control: no-cache\r\nConnection: close\r\n" +
		"Content-Type: text/html\r\nX-Error-Page: custom-404\r\n\r\n<html><body>custom 404: nothing here</body></html>\n"
)

// errorPageRouter starts HAProxy with the options FromEnv reads from env and the given error pages
// (nil: haroute's), for four Routes of namespace errors: web (served), app (served on path /app
// only), empty (a Service without endpoints) and secure-empty (an edge Route to it).
func errorPageRouter(t *testing.T, env map[string]string, page503, page404 []byte) *testbed.StaticHAProxy {
	t.Helper()
	f := newFixture(t)
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	f.m.Service("errors", "web", web).Service("errors", "empty")
	f.m.Route("errors", "web", "www.errors.example.com", "", "web")
	f.m.Route("errors", "empty", "empty.errors.example.com", "", "empty")
	f.m.Route("errors", "app", "app.errors.example.com", "/app", "web")
	crt, key := f.ca.Issue(t, "secure-empty.errors.example.com")
	f.m.Route("errors", "secure-empty", "secure-empty.errors.example.com", "", "empty", testbed.Edge(crt, key))
	ro := render.Options{
		DefaultCertificatePEM: f.ca.IssueBundle(t, defaultCertName),
		ErrorPage503:          page503,
		ErrorPage404:          page404,
	}
	r := testbed.StartStaticHAProxyRender(t, f.m.Input(t), envOptions(t, env), ro, f.ca.Pool())
	r.RequireAdmitted(t)
	if problems := haproxyCheck(t, r); len(problems) > 0 {
		t.Errorf("haproxy -c with custom error pages:\n%s", strings.Join(problems, "\n"))
	}
	return r
}

// errorPage is the answer HAProxy gives itself: a status, a text the body must hold and, for a
// custom page, its X-Error-Page header.
type errorPage struct {
	status int
	text   string
	header string
}

func expectPage(t *testing.T, c *testkit.Client, url string, w errorPage) {
	t.Helper()
	r, err := c.Do(http.MethodGet, url, nil)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return
	}
	if r.Status != w.status || r.Backend != "" {
		t.Errorf("GET %s: got %d from %s, want %d from HAProxy itself (body %q)", url, r.Status, who(r.Backend), w.status, r.Body)
		return
	}
	if !strings.Contains(r.Body, w.text) {
		t.Errorf("GET %s: %d page without %q:\n%s", url, r.Status, w.text, r.Body)
	}
	if got := r.Header.Get("X-Error-Page"); got != w.header {
		t.Errorf("GET %s: X-Error-Page %q, want %q", url, got, w.header)
	}
}

// TestErrorPagesDefault: without ROUTER_ERRORFILE_* a request for an unknown host, or for a Route
// without endpoints, gets haroute's "Application is not available" 503 page, over HTTP and HTTPS.
func TestErrorPagesDefault(t *testing.T) {
	r := errorPageRouter(t, nil, nil, nil)
	page := errorPage{status: 503, text: "<title>Application is not available</title>"}
	expectPage(t, r.Client, "http://unknown.errors.example.com/", page)
	expectPage(t, r.Client, "http://empty.errors.example.com/", page)
	expectPage(t, r.Client, "https://secure-empty.errors.example.com/", page)
	// No Route for the default certificate's name: fe_sni's default backend answers.
	expectPage(t, r.Client, "https://"+defaultCertName+"/", page)
	expect(t, r.Client, "http://www.errors.example.com/", want{200, "web", "/"})
}

// TestErrorPage503Custom: a custom 503 page (ROUTER_ERRORFILE_503) replaces haroute's, for unknown
// hosts as for Routes without endpoints; HAProxy sends it as it is, header included.
func TestErrorPage503Custom(t *testing.T) {
	r := errorPageRouter(t, nil, []byte(custom503), nil)
	page := errorPage{status: 503, text: "custom 503: we are down", header: "custom-503"}
	expectPage(t, r.Client, "http://unknown.errors.example.com/", page)
	expectPage(t, r.Client, "http://empty.errors.example.com/x", page)
	expectPage(t, r.Client, "https://secure-empty.errors.example.com/", page)
	expectPage(t, r.Client, "https://"+defaultCertName+"/", page)
}

// TestErrorPage404: with ROUTER_ERRORFILE_404 set, a request that matches no Route is answered 404
// with the custom page (over HTTP and HTTPS), while a Route without endpoints still gets the 503
// page (custom or haroute's).
func TestErrorPage404(t *testing.T) {
	env := map[string]string{"ROUTER_ERRORFILE_404": "/var/lib/haproxy/conf/error-page-404.http"}
	if o, err := mapping.FromEnv(func(n string) string { return env[n] }); err != nil || !o.HTTP.NotFound {
		t.Fatalf("FromEnv with ROUTER_ERRORFILE_404: NotFound %v, %v; want true", o.HTTP.NotFound, err)
	}
	t.Run("custom pages", func(t *testing.T) {
		r := errorPageRouter(t, env, []byte(custom503), []byte(custom404))
		notFound := errorPage{status: 404, text: "custom 404: nothing here", header: "custom-404"}
		expectPage(t, r.Client, "http://unknown.errors.example.com/", notFound)
		expectPage(t, r.Client, "https://"+defaultCertName+"/", notFound)
		// A known host on a path none of its Routes serves is unmatched too.
		expectPage(t, r.Client, "http://app.errors.example.com/other", notFound)
		expect(t, r.Client, "http://app.errors.example.com/app/x", want{200, "web", "/app/x"})
		unavailable := errorPage{status: 503, text: "custom 503: we are down", header: "custom-503"}
		expectPage(t, r.Client, "http://empty.errors.example.com/", unavailable)
		expectPage(t, r.Client, "https://secure-empty.errors.example.com/", unavailable)
		expect(t, r.Client, "http://www.errors.example.com/", want{200, "web", "/"})
	})
	t.Run("default 503 page", func(t *testing.T) {
		r := errorPageRouter(t, env, nil, []byte(custom404))
		expectPage(t, r.Client, "http://unknown.errors.example.com/", errorPage{status: 404, text: "custom 404: nothing here", header: "custom-404"})
		expectPage(t, r.Client, "http://empty.errors.example.com/", errorPage{status: 503, text: "<title>Application is not available</title>"})
	})
	t.Run("default 404 page", func(t *testing.T) {
		// ROUTER_ERRORFILE_404 names a file, but none reached the renderer: haroute's own 404 page.
		r := errorPageRouter(t, env, nil, nil)
		expectPage(t, r.Client, "http://unknown.errors.example.com/", errorPage{status: 404, text: "<title>Not found</title>"})
	})
}
