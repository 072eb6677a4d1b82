package render

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// testFuncs returns template functions bound to the fixture model rendered under /srv/haproxy.
func testFuncs(t *testing.T, env func(string) string) (*funcs, *model.Config) {
	t.Helper()
	cfg := newFixture(t).model(t)
	data, err := newData(cfg, "/srv/haproxy")
	if err != nil {
		t.Fatal(err)
	}
	return newFuncs(data, env), cfg
}

func TestEnv(t *testing.T) {
	f, _ := testFuncs(t, func(name string) string {
		return map[string]string{"SET": "value", "EMPTY": ""}[name]
	})
	for _, tc := range []struct {
		name     string
		defaults []string
		want     string
	}{
		{"SET", nil, "value"},
		{"SET", []string{"d"}, "value"},
		{"EMPTY", []string{"d"}, "d"},
		{"UNSET", []string{"d", "ignored"}, "d"},
		{"UNSET", nil, ""},
	} {
		if got := f.envFunc(tc.name, tc.defaults...); got != tc.want {
			t.Errorf("env %s %v = %q, want %q", tc.name, tc.defaults, got, tc.want)
		}
	}
	nilEnv, _ := testFuncs(t, nil)
	if got := nilEnv.envFunc("SET", "d"); got != "d" {
		t.Errorf("env with nil Options.Env = %q, want the default", got)
	}
}

func TestMatchPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{`a.c`, "abc", true},
		{`a.c`, "xabc", false},
		{`a.c`, "abcx", false},
		{`a|b`, "ab", false}, // alternation is anchored as a whole
		{`a|b`, "b", true},
		{`[0-9]+(ms|s)?`, "5000ms", true},
		{`[0-9]+(ms|s)?`, "5000 ms", false},
	} {
		got, err := matchPattern(tc.pattern, tc.s)
		if err != nil || got != tc.want {
			t.Errorf("matchPattern(%q, %q) = %v, %v; want %v", tc.pattern, tc.s, got, err, tc.want)
		}
	}
	if _, err := matchPattern(`(`, "x"); err == nil {
		t.Error("matchPattern with an invalid pattern: no error")
	}
}

func TestIsIntegerAndMatchValues(t *testing.T) {
	for s, want := range map[string]bool{"12": true, "-3": true, "0": true, "1.5": false, "": false, "x": false, "5s": false} {
		if got := isInteger(s); got != want {
			t.Errorf("isInteger(%q) = %v, want %v", s, got, want)
		}
	}
	if !matchValues("b", "a", "b") || matchValues("c", "a", "b") || matchValues("a") {
		t.Error("matchValues: wrong answer")
	}
}

func TestGenerateRouteRegexp(t *testing.T) {
	for _, tc := range []struct {
		host, path string
		wildcard   bool
		want       string
		match      []string
		noMatch    []string
	}{
		{"www.example.com", "", false, `^www\.example\.com\.?(:[0-9]+)?(/.*)?$`,
			[]string{"www.example.com", "www.example.com/", "www.example.com.:80/x"}, []string{"wwwxexample.com/", "a.www.example.com/"}},
		{"www.example.com", "/", false, `^www\.example\.com\.?(:[0-9]+)?(/.*)?$`, nil, nil},
		{"www.example.com", "/api", false, `^www\.example\.com\.?(:[0-9]+)?/api(/.*)?$`,
			[]string{"www.example.com/api", "www.example.com:8080/api/x"}, []string{"www.example.com/apix", "www.example.com/"}},
		{"www.example.com", "/api/", false, `^www\.example\.com\.?(:[0-9]+)?/api/(.*)?$`,
			[]string{"www.example.com/api/", "www.example.com/api/x"}, []string{"www.example.com/api"}},
		{"www.example.com", "/a.b", true, `^[^\.]*\.example\.com\.?(:[0-9]+)?/a\.b(/.*)?$`,
			[]string{"x.example.com/a.b", "www.example.com/a.b/c"}, []string{"example.com/a.b", "a.b.example.com/a.b", "x.example.com/axb"}},
		{"*.example.com", "", true, `^[^\.]*\.example\.com\.?(:[0-9]+)?(/.*)?$`, nil, nil},
	} {
		got := generateRouteRegexp(tc.host, tc.path, tc.wildcard)
		if got != tc.want {
			t.Errorf("generateRouteRegexp(%q, %q, %v) = %s, want %s", tc.host, tc.path, tc.wildcard, got, tc.want)
			continue
		}
		re := regexp.MustCompile(got)
		for _, s := range tc.match {
			if !re.MatchString(s) {
				t.Errorf("%s does not match %q", got, s)
			}
		}
		for _, s := range tc.noMatch {
			if re.MatchString(s) {
				t.Errorf("%s matches %q", got, s)
			}
		}
	}
}

func TestGenSubdomainWildcardRegexp(t *testing.T) {
	exact := genSubdomainWildcardRegexp("www.example.com", "/p", true)
	if want := `^[^\.]*\.example\.com/p$`; exact != want {
		t.Errorf("exact: %s, want %s", exact, want)
	}
	sub := genSubdomainWildcardRegexp("*.example.com", "/p", false)
	if want := `^[^\.]*\.example\.com/p(|/.*)$`; sub != want {
		t.Errorf("sub-paths: %s, want %s", sub, want)
	}
	if re := regexp.MustCompile(sub); !re.MatchString("a.example.com/p/x") || re.MatchString("a.example.com/px") || re.MatchString("a.b.example.com/p") {
		t.Errorf("%s matches wrongly", sub)
	}
}

func TestGenCertificateHostName(t *testing.T) {
	if got := genCertificateHostName("www.example.com", false); got != "www.example.com" {
		t.Errorf("exact: %q", got)
	}
	if got := genCertificateHostName("www.example.com", true); got != "*.example.com" {
		t.Errorf("wildcard: %q", got)
	}
}

func TestPathFuncs(t *testing.T) {
	f, _ := testFuncs(t, nil)
	ok := func(got string, err error, want string) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
	}
	bad := func(_ string, err error) {
		t.Helper()
		if err == nil {
			t.Error("want an error")
		}
	}
	got, err := f.mapPath(model.MapHTTP)
	ok(got, err, "/srv/haproxy/conf/os_http_be.map")
	bad(f.mapPath("other.map"))
	got, err = f.certPath("ns1:edge.pem")
	ok(got, err, "/srv/haproxy/router/certs/ns1:edge.pem")
	bad(f.certPath("ns1:none.pem"))
	got, err = f.caPath("ns2:re.pem")
	ok(got, err, "/srv/haproxy/router/cacerts/ns2:re.pem")
	got, err = f.caPath("/etc/pki/ca.pem")
	ok(got, err, "/etc/pki/ca.pem")
	bad(f.caPath("/etc/pki/../ca.pem"))
	bad(f.caPath("/etc/${HOME}/ca.pem"))
	bad(f.caPath("unknown.pem"))

	got, err = f.bindAddr("unix@run/x.sock")
	ok(got, err, "unix@/srv/haproxy/run/x.sock")
	got, err = f.bindAddr("unix@/var/run/y.sock")
	ok(got, err, "unix@/var/run/y.sock")
	got, err = f.bindAddr(":::443")
	ok(got, err, ":::443")
	bad(f.bindAddr("unix@../escape.sock"))
	bad(f.bindAddr("unix@run/"))
	bad(f.bindAddr("127.0.0.1:80 ssl"))
	bad(f.bindAddr("${ADDR}:80"))
	bad(f.bindAddr("unix@run/" + strings.Repeat("s", 120)))
	if !isUnixBind("unix@run/x") || isUnixBind(":80") {
		t.Error("isUnixBind: wrong answer")
	}

	var zero funcs
	if _, err := zero.mapPath(model.MapHTTP); !errors.Is(err, errNoRender) {
		t.Errorf("mapPath outside Render: %v", err)
	}
}

func TestServerAddress(t *testing.T) {
	for _, tc := range []struct {
		addr string
		port int32
		want string
	}{
		{"10.0.0.1", 8080, "10.0.0.1:8080"},
		{"fd00::1", 443, "[fd00::1]:443"},
		{"::ffff:10.0.0.1", 80, "[::ffff:10.0.0.1]:80"},
	} {
		got, err := serverAddress(model.Server{Name: "s", Addr: tc.addr, Port: tc.port})
		if err != nil || got != tc.want {
			t.Errorf("serverAddress(%s, %d) = %q, %v; want %q", tc.addr, tc.port, got, err, tc.want)
		}
	}
	for _, s := range []model.Server{
		{Name: "zone", Addr: "fe80::1%eth0", Port: 80},
		{Name: "name", Addr: "host.example.com", Port: 80},
		{Name: "port", Addr: "10.0.0.1", Port: 0},
	} {
		if _, err := serverAddress(s); err == nil {
			t.Errorf("serverAddress(%+v): no error", s)
		}
	}
}

func TestServerLine(t *testing.T) {
	f, cfg := testFuncs(t, nil)
	edge := *cfg.Backend("be_edge_http:ns1:edge")
	re := *cfg.Backend("be_secure:ns2:re")
	wild := *cfg.Backend("be_http:ns1:wild")
	for _, tc := range []struct {
		b    model.Backend
		s    model.Server
		want string
	}{
		{edge, edge.Servers[0], "server pod:edge-1:svc:http:127.0.0.2:8000 127.0.0.2:8000 id 341987 weight 256 maxconn 100 check inter 2s"},
		{edge, edge.Servers[1], "server pod:edge-2:svc:http:fd00::2:8080 [fd00::2]:8080 id 670168 weight 0 maxconn 100 check inter 2s disabled"},
		{re, re.Servers[0], "server pod:re-1:svc:https:127.0.0.9:3 127.0.0.9:3 id 842504 weight 256 check inter 5000ms ssl verify required " +
			"ca-file /srv/haproxy/router/cacerts/ns2:re.pem verifyhost svc.ns2.svc alpn h2,http/1.1"},
		// No backend interval: the settings' default.
		{wild, wild.Servers[0], "server pod:wild-1:svc:http:127.0.0.2:8000 127.0.0.2:8000 id 539651 weight 256 check inter 5000ms"},
	} {
		got, err := f.serverLine(tc.b, tc.s)
		if err != nil || got != tc.want {
			t.Errorf("serverLine:\n got %q, %v\nwant %q", got, err, tc.want)
		}
	}
	noInterval, _ := testFuncs(t, nil)
	noInterval.data.Config.Settings.CheckInterval = ""
	if got, err := noInterval.serverLine(wild, wild.Servers[0]); err != nil || !strings.HasSuffix(got, " check") {
		t.Errorf("serverLine without any interval = %q, %v; want it to end in check", got, err)
	}

	s := edge.Servers[0]
	for name, mutate := range map[string]func(*model.Backend, *model.Server){
		"drain":         func(_ *model.Backend, s *model.Server) { s.State = model.StateDrain },
		"unknown state": func(_ *model.Backend, s *model.Server) { s.State = "up" },
		"bad name":      func(_ *model.Backend, s *model.Server) { s.Name = "a b" },
		"bad weight":    func(_ *model.Backend, s *model.Server) { s.Weight = 300 },
		"bad interval":  func(b *model.Backend, _ *model.Server) { b.CheckInterval = "5 s" },
		"bad verifyhost": func(b *model.Backend, s *model.Server) {
			b.TLS = &model.BackendTLS{CAFile: "ns2:re.pem"}
			s.VerifyHost = "a)b"
		},
		"unknown CA": func(b *model.Backend, s *model.Server) {
			b.TLS = &model.BackendTLS{CAFile: "nope.pem"}
			s.VerifyHost = "svc.ns.svc"
		},
	} {
		b, s := edge, s
		mutate(&b, &s)
		if got, err := f.serverLine(b, s); err == nil {
			t.Errorf("serverLine with %s = %q, want an error", name, got)
		}
	}
}

func TestDefaults(t *testing.T) {
	f, _ := testFuncs(t, nil)
	if got := f.checkInterval(model.Backend{CheckInterval: "1s"}); got != "1s" {
		t.Errorf("checkInterval of the backend: %q", got)
	}
	if got := f.checkInterval(model.Backend{}); got != "5000ms" {
		t.Errorf("checkInterval default: %q", got)
	}
	if got := f.forwardedHeaders(model.Backend{ForwardedHeaders: "never"}); got != "never" {
		t.Errorf("forwardedHeaders of the backend: %q", got)
	}
	f.data.Config.Settings.ForwardedHeaders = "replace"
	if got := f.forwardedHeaders(model.Backend{}); got != "replace" {
		t.Errorf("forwardedHeaders from settings: %q", got)
	}
	f.data.Config.Settings.ForwardedHeaders = ""
	if got := f.forwardedHeaders(model.Backend{}); got != "append" {
		t.Errorf("forwardedHeaders fallback: %q", got)
	}
}

func TestAllowlistChunks(t *testing.T) {
	addrs := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, "10.0.0."+strings.Repeat("1", 1+i%3))
		}
		return out
	}
	for _, tc := range []struct{ n, lines, last int }{{0, 0, 0}, {1, 1, 1}, {40, 1, 40}, {41, 2, 1}, {85, 3, 5}} {
		got, err := allowlistChunks(addrs(tc.n))
		if err != nil || len(got) != tc.lines {
			t.Errorf("%d addresses: %d lines, %v; want %d", tc.n, len(got), err, tc.lines)
			continue
		}
		if tc.lines > 0 {
			if n := len(strings.Fields(got[len(got)-1])); n != tc.last {
				t.Errorf("%d addresses: last line has %d, want %d", tc.n, n, tc.last)
			}
			if n := len(strings.Fields(got[0])); n > allowlistChunkSize {
				t.Errorf("%d addresses: first line has %d", tc.n, n)
			}
		}
	}
	if _, err := allowlistChunks([]string{"10.0.0.1", "10.0.0.0/33"}); err == nil {
		t.Error("allowlistChunks with a bad prefix: no error")
	}
	if _, err := allowlistChunks([]string{"fe80::1%eth0"}); err == nil {
		t.Error("allowlistChunks with a zone: no error")
	}
}

func TestRewrite(t *testing.T) {
	for _, tc := range []struct {
		r        model.Rewrite
		re, repl string
	}{
		{model.Rewrite{Prefix: "/shop", Target: "/store/"}, `^/shop(.*)$`, `/store/\1`},
		{model.Rewrite{Prefix: "/shop", Target: "/", SlashOptional: true}, `^/shop/?(.*)$`, `/\1`},
		{model.Rewrite{Prefix: "/shop/", Target: "/store"}, `^/shop/(.*)$`, `/store\1`},
		{model.Rewrite{Prefix: "", Target: "/", SlashOptional: true}, `^/?(.*)$`, `/\1`},
		{model.Rewrite{Prefix: "/a", Target: "/only", DropRest: true}, `^/a(.*)$`, `/only`},
		// Metacharacters of the path match themselves; '%' is literal; a quote is written '\''.
		{model.Rewrite{Prefix: "/a.b+c$", Target: "/x%20y/"}, `^/a\.b\+c\$(.*)$`, `/x%%20y/\1`},
		{model.Rewrite{Prefix: "/it's", Target: "/a'b"}, `^/it'\''s(.*)$`, `/a'\''b\1`},
	} {
		re, err := rewriteRegexp(&tc.r)
		if err != nil || re != tc.re {
			t.Errorf("rewriteRegexp(%+v) = %q, %v; want %q", tc.r, re, err, tc.re)
		}
		repl, err := rewriteReplacement(&tc.r)
		if err != nil || repl != tc.repl {
			t.Errorf("rewriteReplacement(%+v) = %q, %v; want %q", tc.r, repl, err, tc.repl)
		}
	}
	if _, err := rewriteRegexp(&model.Rewrite{Prefix: `/a"b`, Target: "/"}); err == nil {
		t.Error("rewriteRegexp with a double quote: no error")
	}
	if _, err := rewriteReplacement(&model.Rewrite{Prefix: "/a", Target: `/\2`}); err == nil {
		t.Error("rewriteReplacement with a backslash: no error")
	}
	if _, err := rewriteRegexp(nil); err == nil {
		t.Error("rewriteRegexp(nil): no error")
	}
	if _, err := rewriteReplacement(nil); err == nil {
		t.Error("rewriteReplacement(nil): no error")
	}
}

func TestWordAndFail(t *testing.T) {
	if got, err := word("be_http:ns:name"); err != nil || got != "be_http:ns:name" {
		t.Errorf("word: %q, %v", got, err)
	}
	for _, s := range []string{"", "a b", "a\tb", "a\nb", `a"b`, "a'b", "a#b", `a\b`, "${HOME}", "%[env(HOME)]", "caf\u00e9"} {
		if _, err := word(s); err == nil {
			t.Errorf("word(%q): no error", s)
		}
	}
	if _, err := fail("stop here"); err == nil || err.Error() != "stop here" {
		t.Errorf("fail: %v", err)
	}
}
