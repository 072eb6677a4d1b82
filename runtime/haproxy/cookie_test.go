package haproxy_test

import (
	"context"
	"crypto/md5" //nolint:gosec // OpenShift's cookie names and values are MD5 hex.
	"encoding/hex"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// md5Hex is OpenShift's hash for cookie names (of " <namespace>:<route>") and values (of the
// endpoint id), computed here independently of the code under test.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s)) //nolint:gosec // see the import
	return hex.EncodeToString(sum[:])
}

// TestCookiesAsOpenShift drives a real HAProxy through runtime changes and checks the sticky cookie
// each answer sets against OpenShift's router: the name (MD5 of " <namespace>:<route>"), the value
// (MD5 of the endpoint id, also for a server added at runtime, on HAProxy 3.0 and later; a dynamic
// cookie before), and the attributes (Secure and SameSite=None on an edge Route, none with
// insecureEdgeTerminationPolicy Allow, the cookie-same-site value), while none of these changes
// reloads.
func TestCookiesAsOpenShift(t *testing.T) {
	ctx := context.Background()
	opts := testbed.RouterOptions(t)
	ca := testkit.NewCA(t, "router CA")
	crt, key := ca.Issue(t, "web.example.com")
	b1 := testkit.StartHTTPBackend(t, "127.0.0.2", "web-1")
	b2 := testkit.StartHTTPBackend(t, "127.0.0.3", "web-2")
	input := func(policy, sameSite string, backends ...*testkit.Backend) mapping.Input {
		ropts := []testbed.RouteOption{testbed.Edge(crt, key), testbed.Insecure(policy)}
		if sameSite != "" {
			ropts = append(ropts, testbed.Annotate(mapping.AnnotationCookieSameSite, sameSite))
		}
		m := (&testbed.Manifests{}).Service("shop", "web", backends...).Route("shop", "web", "web.example.com", "", "web", ropts...)
		return m.Input(t)
	}
	first, _ := mapping.Translate(input("None", "", b1), opts)
	dir := testkit.TempDir(t)
	u, h := startInstance(t, dir, render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}, first)
	caps, err := socket.DetectCapabilities(ctx, socket.NewAdmin(h.AdminSocket, socket.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	name := md5Hex(" shop:web")

	// cookieOf sends a request without cookie and returns the answering backend and its Set-Cookie.
	cookieOf := func(url string) (string, string) {
		t.Helper()
		resp, err := client.Do(http.MethodGet, url, nil)
		if err != nil || resp.Status != http.StatusOK {
			t.Fatalf("GET %s: %v %v", url, resp, err)
		}
		return resp.Backend, resp.Header.Get("Set-Cookie")
	}
	// check checks a Set-Cookie of backend b against OpenShift's, with the attributes attrs.
	check := func(what, backend, setCookie, attrs string, cfg *model.Config) {
		t.Helper()
		ip := map[string]string{b1.Name: b1.IP, b2.Name: b2.IP}[backend]
		var server string
		for _, s := range cfg.Backend(cfg.Routes[0].Backend).Servers {
			if s.Addr == ip {
				server = s.Name
			}
		}
		value := `[0-9a-f]{16}` // HAProxy's dynamic cookie before 3.0
		if caps.AddServerCookie {
			value = md5Hex(server)
		}
		want := "^" + name + "=" + value + regexp.QuoteMeta(attrs) + "$"
		if !regexp.MustCompile(want).MatchString(setCookie) {
			t.Errorf("%s: Set-Cookie %q from %s (server %s), want %s", what, setCookie, backend, server, want)
		}
	}
	update := func(what string, in mapping.Input) *model.Config {
		t.Helper()
		next, _ := mapping.Translate(in, opts)
		out, err := u.Update(ctx, next)
		if err != nil || out.Reloaded {
			t.Fatalf("%s: error %v, reloaded %v (%v): want a runtime change", what, err, out.Reloaded, out.Reason)
		}
		return next
	}

	secure := "; path=/; HttpOnly; Secure; SameSite=None"
	be, sc := cookieOf("https://web.example.com/")
	check("edge, policy None", be, sc, secure, first)

	// A second pod, added at runtime: its cookie is the one a reload would give it.
	cfg := update("second pod", input("None", "", b1, b2))
	seen := map[string]bool{}
	for i := 0; i < 40 && len(seen) < 2; i++ {
		be, sc := cookieOf("https://web.example.com/")
		if !seen[be] {
			seen[be] = true
			check("edge, pod "+be, be, sc, secure, cfg)
		}
	}
	if len(seen) < 2 {
		t.Fatalf("40 requests reached only %v", seen)
	}

	// Allow: the Route is served on plain HTTP too, and its cookie has neither Secure nor SameSite.
	cfg = update("policy Allow", input("Allow", "", b1, b2))
	be, sc = cookieOf("https://web.example.com/")
	check("edge, policy Allow, https", be, sc, "; path=/; HttpOnly", cfg)
	be, sc = cookieOf("http://web.example.com/")
	check("edge, policy Allow, http", be, sc, "; path=/; HttpOnly", cfg)

	// cookie-same-site, back to policy None.
	cfg = update("same-site Strict", input("None", "Strict", b1, b2))
	be, sc = cookieOf("https://web.example.com/")
	check("edge, SameSite Strict", be, sc, "; path=/; HttpOnly; Secure; SameSite=Strict", cfg)

	// A client with the cookie stays on its pod.
	resp, err := client.Do(http.MethodGet, "https://web.example.com/", http.Header{"Cookie": {strings.SplitN(sc, ";", 2)[0]}})
	if err != nil || resp.Backend != be || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("with the cookie of %s: answered by %q with Set-Cookie %q (%v), want %s and no new cookie", be, resp.Backend, resp.Header.Get("Set-Cookie"), err, be)
	}
}
