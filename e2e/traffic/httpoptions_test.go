package traffic

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// optionsRoutes adds to f an echo server (on ip, with the response headers extra) behind two Routes
// of namespace opts: www.opts.example.com over plain HTTP and secure.opts.example.com with edge
// termination.
func optionsRoutes(t *testing.T, f *fixture, ip string, extra http.Header) {
	t.Helper()
	echo := startEcho(t, ip, "echo", extra)
	f.m.ServiceAt("opts", "echo", echo)
	f.m.Route("opts", "web", "www.opts.example.com", "", "echo")
	crt, key := f.ca.Issue(t, "secure.opts.example.com")
	f.m.Route("opts", "secure", "secure.opts.example.com", "", "echo", testbed.Edge(crt, key))
}

// optionsURLs are the two Routes of optionsRoutes.
var optionsURLs = []string{"http://www.opts.example.com/", "https://secure.opts.example.com/"}

// rawGet sends a raw GET for path to the Route of optionsRoutes that url names, through the router
// r, with the extra header lines, and returns the response bytes exactly as received.
func rawGet(t *testing.T, f *fixture, r *testbed.StaticHAProxy, rawURL string, lines ...string) []byte {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	port, cfg := r.Options.HTTPPort, f.tlsTo(u.Hostname())
	if u.Scheme == "http" {
		cfg = nil
	} else {
		port = r.Options.HTTPSPort
	}
	raw, err := rawExchange(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil, cfg, rawRequest(u.Host, u.Path, lines...))
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	return raw
}

// TestH1CaseAdjust: HAProxy keeps header names in lower case, so an HTTP/1.1 client receives the
// backend's "Cache-Control" as "cache-control"; with ROUTER_H1_CASE_ADJUST=Cache-Control,X-Custom-Header
// those two names reach it, over HTTP and through edge termination, in that case, and other names
// stay in lower case.
func TestH1CaseAdjust(t *testing.T) {
	extra := http.Header{"Cache-Control": {"no-store"}, "X-Custom-Header": {"yes"}, "X-Other-Header": {"no"}}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string // header names the client must see, exactly
	}{
		{"default", nil, []string{"cache-control", "x-custom-header", "x-other-header"}},
		{"adjusted", map[string]string{"ROUTER_H1_CASE_ADJUST": "Cache-Control,X-Custom-Header"},
			[]string{"Cache-Control", "X-Custom-Header", "x-other-header"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			optionsRoutes(t, f, "127.0.0.2", extra)
			r := f.startRouterOpts(t, envOptions(t, tc.env))
			for _, u := range optionsURLs {
				raw := rawGet(t, f, r, u)
				names := rawHeaderNames(raw)
				for _, w := range tc.want {
					if !slices.Contains(names, w) {
						t.Errorf("GET %s: no header named exactly %q among %q", u, w, names)
					}
				}
			}
		})
	}
}

// uniqueIDFormat is the ingress operator's default ROUTER_UNIQUE_ID_FORMAT, double quotes included.
const uniqueIDFormat = `"%{+X}o %ci:%cp_%fi:%fp_%Ts_%rt:%pid"`

// uniqueID is a request ID in uniqueIDFormat: client address and port, frontend address and port,
// the accept date, the request counter and the process id, all in upper-case hexadecimal.
var uniqueID = regexp.MustCompile(`^([0-9A-F]{8}):([0-9A-F]{4})_([0-9A-F]{8}):([0-9A-F]{4})_([0-9A-F]{8})_([0-9A-F]+):([0-9A-F]+)$`)

// TestUniqueID: with ROUTER_UNIQUE_ID_HEADER_NAME=X-Unique-ID and the operator's default
// ROUTER_UNIQUE_ID_FORMAT, the backend receives an X-Unique-ID of that shape on every request, over
// HTTP and through edge termination, naming the client's address and port and the public listener;
// two requests get different IDs.
func TestUniqueID(t *testing.T) {
	f := newFixture(t)
	optionsRoutes(t, f, "127.0.0.2", nil)
	r := f.startRouterOpts(t, envOptions(t, map[string]string{
		"ROUTER_UNIQUE_ID_HEADER_NAME": "X-Unique-ID",
		"ROUTER_UNIQUE_ID_FORMAT":      uniqueIDFormat,
	}))

	seen := map[string]string{}
	for _, tc := range []struct {
		name, host string
		https      bool
	}{
		{"http 1", "www.opts.example.com", false},
		{"http 2", "www.opts.example.com", false},
		{"edge 1", "secure.opts.example.com", true},
		{"edge 2", "secure.opts.example.com", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, cfg := r.Options.HTTPPort, f.tlsTo(tc.host)
			if tc.https {
				port = r.Options.HTTPSPort
			} else {
				cfg = nil
			}
			conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), rawTimeout)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			clientPort := conn.LocalAddr().(*net.TCPAddr).Port
			raw, err := exchange(conn, nil, cfg, rawRequest(tc.host, "/"))
			if err != nil {
				t.Fatal(err)
			}
			resp, body, err := parseRaw(raw)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200 (body %q)", resp.StatusCode, body)
			}
			ids := decodeEcho(t, tc.name, body).Header.Values("X-Unique-ID")
			if len(ids) != 1 {
				t.Fatalf("the backend received X-Unique-ID %q, want one value", ids)
			}
			id := ids[0]
			m := uniqueID.FindStringSubmatch(id)
			if m == nil {
				t.Fatalf("X-Unique-ID %q does not match %s", id, uniqueID)
			}
			want := map[string]string{
				"client address": "7F000001",
				"client port":    fmt.Sprintf("%04X", clientPort),
				"frontend addr":  "7F000001",
				"frontend port":  fmt.Sprintf("%04X", port),
			}
			for i, what := range []string{"client address", "client port", "frontend addr", "frontend port"} {
				if m[i+1] != want[what] {
					t.Errorf("X-Unique-ID %q: %s %s, want %s", id, what, m[i+1], want[what])
				}
			}
			if prev, ok := seen[id]; ok {
				t.Errorf("requests %s and %s got the same X-Unique-ID %q", prev, tc.name, id)
			}
			seen[id] = tc.name
		})
	}

	// A client cannot choose its ID: HAProxy adds its own (unique-id-header adds, as in OpenShift's
	// router), after the one the client sent, which it leaves in place.
	t.Run("client-sent ID", func(t *testing.T) {
		raw := rawGet(t, f, r, "http://www.opts.example.com/", "X-Unique-ID: chosen-by-client")
		resp, body, err := parseRaw(raw)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d, want 200 (body %q)", resp.StatusCode, body)
		}
		ids := decodeEcho(t, "client-sent ID", body).Header.Values("X-Unique-ID")
		if len(ids) == 0 || !uniqueID.MatchString(ids[len(ids)-1]) {
			t.Errorf("the backend received X-Unique-ID %q, want HAProxy's ID last", ids)
		}
	})
}

// TestIgnoreProbes: a connection opened and closed without a request (a load balancer's probe) is
// logged by HAProxy as a bad request ("<BADREQ>", status 400, no server) and counted as a request
// error — on the HTTP port a TCP connection that sends nothing, on the HTTPS port a TLS handshake
// followed by nothing, which fe_sni sees; with ROUTER_HTTP_IGNORE_PROBES=true neither is logged nor
// counted, while requests are still logged.
func TestIgnoreProbes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ignore bool
	}{{"default", false}, {"ignore probes", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSyslog(t)
			env := map[string]string{"ROUTER_SYSLOG_ADDRESS": s.Addr(), "ROUTER_LOG_LEVEL": "info"}
			if tc.ignore {
				env["ROUTER_HTTP_IGNORE_PROBES"] = "true"
			}
			f := newFixture(t)
			web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
			f.m.Service("probes", "web", web)
			f.m.Route("probes", "web", "www.probes.example.com", "", "web")
			r := f.startRouterOpts(t, envOptions(t, env))

			for _, p := range []struct {
				name     string
				frontend string
				probe    func()
			}{
				{"tcp", "public", func() { nullConnection(t, r) }},
				{"tls", "fe_sni", func() { tlsProbe(t, f, r) }},
			} {
				before := frontendStat(t, r, p.frontend, "ereq")
				p.probe()
				counted := frontendStat(t, r, p.frontend, "ereq") - before
				// A request after the probe: its line comes after the probe's, if the probe has one.
				path := "/after-" + p.name + "-probe"
				get(t, r.Client, "http://www.probes.example.com"+path, "web", nil)
				s.await(t, path)
				var probeLines []string
				for _, l := range s.seen {
					if strings.Contains(l, "<NOSRV>") || strings.Contains(l, "<BADREQ>") {
						probeLines = append(probeLines, l)
					}
				}
				s.seen = nil
				if tc.ignore {
					if len(probeLines) > 0 || counted != 0 {
						t.Errorf("%s probe: with ROUTER_HTTP_IGNORE_PROBES it was logged (%q) or counted (%d request errors)",
							p.name, probeLines, counted)
					}
					continue
				}
				wantLine := " " + p.frontend + " " + p.frontend + "/<NOSRV> "
				if p.frontend == "fe_sni" {
					wantLine = " fe_sni~ fe_sni/<NOSRV> " // '~' marks a TLS frontend
				}
				if len(probeLines) != 1 || !strings.Contains(probeLines[0], wantLine) ||
					!strings.Contains(probeLines[0], " 400 ") || !strings.Contains(probeLines[0], `"<BADREQ>"`) {
					t.Errorf("%s probe: logged as %q, want one 400 <BADREQ> line with %q", p.name, probeLines, wantLine)
				}
				if counted != 1 {
					t.Errorf("%s probe: counted %d request errors by %s, want 1", p.name, counted, p.frontend)
				}
			}
		})
	}
}

// frontendStat reads one `show stat` counter of a frontend and fails the test when it cannot.
func frontendStat(t *testing.T, r *testbed.StaticHAProxy, frontend, field string) int64 {
	t.Helper()
	n, err := r.Stat(frontend, "FRONTEND", field)
	if err != nil {
		t.Fatalf("stat %s %s: %v", frontend, field, err)
	}
	return n
}

// tlsProbe opens a TLS connection to the HTTPS port (SNI the default certificate's name, so that
// fe_sni terminates it), completes the handshake, closes it without a request and waits until
// fe_sni has ended the session (and so logged it, if it logs it at all).
func tlsProbe(t *testing.T, f *fixture, r *testbed.StaticHAProxy) {
	t.Helper()
	before := frontendStat(t, r, "fe_sni", "stot")
	raw, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPSPort)), rawTimeout)
	if err != nil {
		t.Fatal(err)
	}
	conn := tls.Client(raw, f.tlsTo(defaultCertName))
	if err := conn.SetDeadline(time.Now().Add(rawTimeout)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Handshake(); err != nil {
		raw.Close()
		t.Fatalf("TLS probe: handshake: %v", err)
	}
	conn.Close()
	deadline := time.Now().Add(syslogWait)
	for frontendStat(t, r, "fe_sni", "stot") == before || frontendStat(t, r, "fe_sni", "scur") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("fe_sni did not end the TLS probe's session")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// spoofedSSLHeaders are X-SSL* headers a client sends to pose as the holder of a client certificate:
// the twelve OpenShift's router removes (haproxy-config.template, "Strip off X-SSL* headers").
var spoofedSSLHeaders = http.Header{
	"X-Ssl":                  {"1"},
	"X-Ssl-Client-Cn":        {"admin"},
	"X-Ssl-Client-Der":       {"MIIB"},
	"X-Ssl-Client-Dn":        {"/CN=admin"},
	"X-Ssl-Client-Notafter":  {"991231235959Z"},
	"X-Ssl-Client-Notbefore": {"200101000000Z"},
	"X-Ssl-Client-Sha1":      {"00112233"},
	"X-Ssl-Client-Serial":    {"01"},
	"X-Ssl-Client-Subject":   {"CN=admin"},
	"X-Ssl-Client-Verify":    {"0"},
	"X-Ssl-Client-Version":   {"3"},
	"X-Ssl-Issuer":           {"/CN=trusted CA"},
}

// noSNIGet sends a GET for / with Host host and the header h over TLS without SNI (so through
// fe_no_sni), and returns what the echo server received.
func noSNIGet(t *testing.T, r *testbed.StaticHAProxy, host string, h http.Header) echoed {
	t.Helper()
	var lines []string
	for name, vs := range h {
		for _, v := range vs {
			lines = append(lines, name+": "+v)
		}
	}
	cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}} //nolint:gosec // no SNI: the default certificate answers
	raw, err := rawExchange(net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPSPort)), nil, cfg, rawRequest(host, "/", lines...))
	if err != nil {
		t.Fatalf("GET / without SNI: %v", err)
	}
	resp, body, err := parseRaw(raw)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / without SNI: status %d, want 200 (body %q)", resp.StatusCode, body)
	}
	return decodeEcho(t, "GET / without SNI", body)
}

// TestClientSSLHeaderFilter: by default (ROUTER_MUTUAL_TLS_HEADER_FILTER unset, i.e. true) the
// twelve X-SSL* headers a client sends never reach the backend, over HTTP, through edge termination
// with SNI and without (the three HTTP frontends); with ROUTER_MUTUAL_TLS_HEADER_FILTER=false they do.
func TestClientSSLHeaderFilter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    map[string]string
		passed bool
	}{
		{"default", nil, false},
		{"filter true", map[string]string{"ROUTER_MUTUAL_TLS_HEADER_FILTER": "true"}, false},
		{"filter false", map[string]string{"ROUTER_MUTUAL_TLS_HEADER_FILTER": "false"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			optionsRoutes(t, f, "127.0.0.2", nil)
			r := f.startRouterOpts(t, envOptions(t, tc.env))
			h := spoofedSSLHeaders.Clone()
			h.Set("X-Innocent", "kept")
			for _, u := range append(slices.Clone(optionsURLs), "https (no SNI)") {
				var got http.Header
				if u == "https (no SNI)" {
					got = noSNIGet(t, r, "secure.opts.example.com", h).Header
				} else {
					resp, err := r.Client.Do(http.MethodGet, u, h)
					if err != nil {
						t.Fatal(err)
					}
					if resp.Status != http.StatusOK {
						t.Fatalf("GET %s: status %d, want 200 (body %q)", u, resp.Status, resp.Body)
					}
					got = decodeEcho(t, u, resp.Body).Header
				}
				if got.Get("X-Innocent") != "kept" {
					t.Errorf("GET %s: the backend did not receive X-Innocent", u)
				}
				for name, vs := range spoofedSSLHeaders {
					switch g := got.Values(name); {
					case tc.passed && !slices.Equal(g, vs):
						t.Errorf("GET %s: the backend received %s %q, want the client's %q", u, name, g, vs)
					case !tc.passed && len(g) > 0:
						t.Errorf("GET %s: the backend received the client's %s %q", u, name, g)
					}
				}
			}
		})
	}
}

// TestHeaderActions: ROUTER_HTTP_REQUEST_HEADERS and ROUTER_HTTP_RESPONSE_HEADERS, in the ingress
// operator's encoding (query-escaped parts), set and delete headers on every request and response,
// over HTTP and through edge termination: a plain value with a space, a comma, a colon and a single
// quote arrives as it is, replacing the client's; dynamic values take the request's (or response's)
// headers through the lower converter; a deleted request header never reaches the backend, a
// deleted response header never reaches the client.
func TestHeaderActions(t *testing.T) {
	set := func(name, value string) string {
		return url.QueryEscape(name) + ":" + url.QueryEscape(value) + ":Set"
	}
	del := func(name string) string { return url.QueryEscape(name) + ":Delete" }
	const greeting = `it's a "test", really: yes`
	env := map[string]string{
		"ROUTER_HTTP_REQUEST_HEADERS": strings.Join([]string{
			set("X-Greeting", greeting),
			set("X-Host", "%[req.hdr(host),lower]"),
			set("X-Trace-Lower", "id=%[req.hdr(X-Trace),lower] 100%% sure"),
			del("X-Drop"),
		}, ","),
		"ROUTER_HTTP_RESPONSE_HEADERS": strings.Join([]string{
			set("X-Served-By", "haroute 'edge'"),
			set("X-Tag-Lower", "%[res.hdr(X-Tag),lower]"),
			del("X-Backend-Secret"),
		}, ","),
	}
	f := newFixture(t)
	optionsRoutes(t, f, "127.0.0.2", http.Header{"X-Backend-Secret": {"s3cr3t"}, "X-Tag": {"MiXeD-Tag"}})
	r := f.startRouterOpts(t, envOptions(t, env))

	for _, tc := range []struct{ url, host string }{
		{"http://www.opts.example.com/", "WWW.Opts.Example.COM"},
		{"https://secure.opts.example.com/", "Secure.OPTS.example.com"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			resp, err := r.Client.Do(http.MethodGet, tc.url, http.Header{
				"Host":       {tc.host},
				"X-Greeting": {"spoofed"},
				"X-Drop":     {"client secret"},
				"X-Trace":    {"AbC-42"},
				"X-Kept":     {"Client Value"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != http.StatusOK || resp.Backend != "echo" {
				t.Fatalf("status %d from %s, want 200 from the echo server (body %q)", resp.Status, who(resp.Backend), resp.Body)
			}
			got := decodeEcho(t, tc.url, resp.Body).Header
			for name, want := range map[string][]string{
				"X-Greeting":    {greeting},
				"X-Host":        {strings.ToLower(tc.host)},
				"X-Trace-Lower": {"id=abc-42 100% sure"},
				"X-Kept":        {"Client Value"},
				"X-Drop":        nil,
			} {
				if g := got.Values(name); !slices.Equal(g, want) {
					t.Errorf("the backend received %s %q, want %q", name, g, want)
				}
			}
			for name, want := range map[string][]string{
				"X-Served-By":      {"haroute 'edge'"},
				"X-Tag-Lower":      {"mixed-tag"},
				"X-Tag":            {"MiXeD-Tag"},
				"X-Backend-Secret": nil,
			} {
				if g := resp.Header.Values(name); !slices.Equal(g, want) {
					t.Errorf("the client received %s %q, want %q", name, g, want)
				}
			}
		})
	}
}

// routerOptionEnvs are the HTTP and listener options of the IngressController, one set of variables
// each, as the ingress operator writes them.
var routerOptionEnvs = map[string]map[string]string{
	"proxy protocol": {"ROUTER_USE_PROXY_PROTOCOL": "true"},
	"compression":    {"ROUTER_ENABLE_COMPRESSION": "true", "ROUTER_COMPRESSION_MIME": `text/html application/json "text/css; charset=utf-8"`},
	"unique id":      {"ROUTER_UNIQUE_ID_HEADER_NAME": "X-Unique-ID", "ROUTER_UNIQUE_ID_FORMAT": uniqueIDFormat},
	"case adjust":    {"ROUTER_H1_CASE_ADJUST": "Cache-Control,X-Custom-Header"},
	"header actions": {
		"ROUTER_HTTP_REQUEST_HEADERS":  "X-Frame:DENY:Set,X-Dyn:%25%5Breq.hdr%28host%29%2Clower%5D:Set,X-Drop:Delete",
		"ROUTER_HTTP_RESPONSE_HEADERS": "X-Served-By:haroute:Set,Server:Delete",
	},
	"no header filter":       {"ROUTER_MUTUAL_TLS_HEADER_FILTER": "false"},
	"ignore probes":          {"ROUTER_HTTP_IGNORE_PROBES": "true"},
	"errorfile 404":          {"ROUTER_ERRORFILE_404": "/var/lib/haproxy/conf/error-page-404.http"},
	"idle close on response": {"ROUTER_IDLE_CLOSE_ON_RESPONSE": "true"},
	"abort on close":         {"ROUTER_ABORT_ON_CLOSE": "true"},
	"max rewrite size":       {"ROUTER_MAX_REWRITE_SIZE": "4096"},
	"contstats":              {"ROUTER_HAPROXY_CONTSTATS": "true"},
}

// TestRouterOptionsHAProxyCheck: each HTTP and listener option, and all of them together, gives a
// configuration that haproxy -c accepts without a warning (the project's standard for its
// template: haroute logs every warning of every reload), on which a plain HTTP and an edge Route
// are served.
func TestRouterOptionsHAProxyCheck(t *testing.T) {
	all := map[string]string{}
	names := make([]string, 0, len(routerOptionEnvs))
	for name, env := range routerOptionEnvs {
		names = append(names, name)
		for k, v := range env {
			all[k] = v
		}
	}
	slices.Sort(names)
	cases := append(names, "all")
	for _, name := range cases {
		env := routerOptionEnvs[name]
		if name == "all" {
			env = all
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			optionsRoutes(t, f, "127.0.0.2", nil)
			r := f.startRouterOpts(t, envOptions(t, env))
			if problems := haproxyCheck(t, r); len(problems) > 0 {
				t.Errorf("haproxy -c with %v:\n%s", env, strings.Join(problems, "\n"))
			}
			if env["ROUTER_USE_PROXY_PROTOCOL"] == "true" {
				return // TestProxyProtocol sends the traffic
			}
			for _, u := range optionsURLs {
				resp, err := r.Client.Do(http.MethodGet, u, nil)
				if err != nil {
					t.Errorf("GET %s: %v", u, err)
					continue
				}
				if resp.Status != http.StatusOK || resp.Backend != "echo" {
					t.Errorf("GET %s: status %d from %s, want 200 from the echo server", u, resp.Status, who(resp.Backend))
				}
			}
		})
	}
}

// TestMaxRewriteSize: ROUTER_MAX_REWRITE_SIZE is the part of HAProxy's 32 KiB buffer kept for
// header rewrites, so it bounds the request headers a client may send: 20 KB of headers pass with
// OpenShift's default (8192) and are refused with 16384 (400 from HAProxy 2.6, 431 from 3.x).
func TestMaxRewriteSize(t *testing.T) {
	big := strings.Repeat("x", 20000)
	for _, tc := range []struct {
		name   string
		env    map[string]string
		served bool
	}{
		{"default", nil, true},
		{"16384", map[string]string{"ROUTER_MAX_REWRITE_SIZE": "16384"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			optionsRoutes(t, f, "127.0.0.2", nil)
			r := f.startRouterOpts(t, envOptions(t, tc.env))
			for _, u := range optionsURLs {
				resp, err := r.Client.Do(http.MethodGet, u, http.Header{"X-Big": {big}})
				if err != nil {
					t.Errorf("GET %s with %d bytes of headers: %v", u, len(big), err)
					continue
				}
				switch {
				case tc.served && (resp.Status != http.StatusOK || resp.Backend != "echo"):
					t.Errorf("GET %s with %d bytes of headers: status %d from %s, want 200 from the echo server",
						u, len(big), resp.Status, who(resp.Backend))
				case !tc.served && (resp.Status < 400 || resp.Status > 499 || resp.Backend != ""):
					t.Errorf("GET %s with %d bytes of headers: status %d from %s, want a 4xx from HAProxy itself",
						u, len(big), resp.Status, who(resp.Backend))
				}
			}
		})
	}
}
