package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

const testDir = "/srv/haproxy"

func renderOK(t *testing.T, cfg *model.Config, opts Options) map[string]string {
	t.Helper()
	files, err := Render(cfg, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	out := map[string]string{}
	for i, f := range files {
		if i > 0 && files[i-1].Path >= f.Path {
			t.Errorf("files not sorted: %s before %s", files[i-1].Path, f.Path)
		}
		out[f.Path] = string(f.Data)
	}
	return out
}

// renderConfig renders cfg and returns the configuration HAProxy reads (Configuration).
func renderConfig(t *testing.T, cfg *model.Config, opts Options) string {
	t.Helper()
	files, err := Render(cfg, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return string(Configuration(files))
}

func defaultOpts(f *fixture, t *testing.T) Options {
	return Options{Dir: testDir, DefaultCertificatePEM: f.ca.IssueBundle(t, "default.invalid")}
}

// section returns the lines of the config section whose header line is header, or header followed
// by more words ("backend <name> from <profile>", "defaults <name>"), up to the next blank line.
func section(t *testing.T, cfg, header string) string {
	t.Helper()
	i := strings.Index(cfg, "\n"+header+"\n")
	if j := strings.Index(cfg, "\n"+header+" "); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		t.Fatalf("no section %q in\n%s", header, cfg)
	}
	s := cfg[i+1:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j+1]
	}
	return s
}

func hasLine(text, line string) bool {
	return strings.Contains("\n"+text, "\n"+line+"\n")
}

func TestRenderFiles(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	opts := defaultOpts(f, t)
	opts.DefaultCertificatePEM = append([]byte("\n  \r\n"), bytes.ReplaceAll(opts.DefaultCertificatePEM, []byte("\n-----END"), []byte("\n\n-----END"))...)
	out := renderOK(t, cfg, opts)

	var paths []string
	for p := range out {
		paths = append(paths, p)
	}
	want := []string{
		"conf/cert_config.map", "conf/default_pub_keys.pem", "conf/haproxy.cfg", layout.ErrorPage503, layout.ErrorPage404,
		"conf/os_edge_reencrypt_be.map", "conf/os_http_be.map", "conf/os_route_http_redirect.map",
		"conf/os_tcp_be.map", "conf/os_wildcard_domain.map", "conf/haroute_forwarded.map", "conf/haroute_cookie.map", "conf/haroute_cookie_names.map", "conf/haroute_header_values.map",
		"conf/haroute_timeout_server.map", "conf/haroute_timeout_tunnel.map", "conf/haroute_hsts.map",
		"router/cacerts/ns2:re.pem", "router/certs/ns1:edge.pem", "router/certs/ns1:wild.pem",
		DefaultBackendFile,
	}
	for _, b := range cfg.Backends {
		if !slices.Contains(want, ShardFile(b.Name)) {
			want = append(want, ShardFile(b.Name))
		}
	}
	if len(paths) != len(want) {
		t.Errorf("files %v, want %v", paths, want)
	}
	for _, p := range want {
		if _, ok := out[p]; !ok {
			t.Errorf("missing file %s", p)
		}
	}

	if got, want := out["conf/os_http_be.map"], "*.wild.example.com/ be_http:ns1:wild\n"+
		"=never.example.com/n be_http:ns1:never\n"+
		"never.example.com/n/ be_http:ns1:never\n"+
		"web.example.com/ be_http:ns1:web\n"; got != want {
		t.Errorf("os_http_be.map:\n%s\nwant\n%s", got, want)
	}
	if got, want := out["conf/os_route_http_redirect.map"], "*.wild.example.com/ 0\n"+
		"=edge.example.com/shop 1\n"+
		"=never.example.com/n 0\n"+
		"edge.example.com/shop/ 1\n"+
		"never.example.com/n/ 0\n"+
		"web.example.com/ 0\n"; got != want {
		t.Errorf("os_route_http_redirect.map: %q, want %q", got, want)
	}
	if got, want := out["conf/cert_config.map"], testDir+"/router/certs/ns1:edge.pem [alpn h2,http/1.1] edge.example.com\n"+
		testDir+"/router/certs/ns1:wild.pem *.wild.example.com\n"; got != want {
		t.Errorf("crt-list:\n%s\nwant\n%s", got, want)
	}
	def := out["conf/default_pub_keys.pem"]
	if model.HasBlankLine(def) || strings.Contains(def, "\r") || !strings.HasPrefix(def, "-----BEGIN CERTIFICATE-----\n") || !strings.HasSuffix(def, "-----\n") {
		t.Errorf("default certificate not cleaned:\n%q", def)
	}
	if got := out["router/certs/ns1:edge.pem"]; got != cfg.Certificates[0].PEM {
		t.Errorf("certificate file differs from the model's PEM")
	}
	if got := out["router/cacerts/ns2:re.pem"]; got != cfg.CAFiles[0].PEM {
		t.Errorf("CA file differs from the model's PEM")
	}
}

func TestRenderMissingStandardMapsAreEmpty(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	cfg.Maps = []model.MapFile{{Name: model.MapHTTP, Entries: entries("web.example.com/", "be_http:ns1:web")}, {Name: "other.map"}}
	out := renderOK(t, cfg, defaultOpts(f, t))
	for _, name := range []string{model.MapEdgeReencrypt, model.MapHTTPRedirect, model.MapTCP, model.MapWildcardDomain, model.MapHeaderValues, "other.map"} {
		if got, ok := out["conf/"+name]; !ok || got != "" {
			t.Errorf("%s: present %v, content %q; want an empty file", name, ok, got)
		}
	}
}

func TestRenderDefaultTemplate(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	out := renderConfig(t, cfg, defaultOpts(f, t))

	global := section(t, out, "global")
	for _, line := range []string{
		"  maxconn 2000", "  nbthread 2",
		"  stats socket /srv/haproxy/run/haproxy.sock mode 600 level admin expose-fd listeners",
		"  stats timeout 2m", "  tune.bufsize 32768", "  tune.maxrewrite 8192",
		"  ssl-default-bind-options ssl-min-ver TLSv1.2", "  hard-stop-after 1h", "  tune.ssl.default-dh-param 2048",
		"  ssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
	} {
		if !hasLine(global, line) {
			t.Errorf("global lacks %q:\n%s", line, global)
		}
	}
	defaults := section(t, out, "defaults")
	for _, line := range []string{
		"  mode http", "  maxconn 2000", "  timeout connect 5s", "  timeout client 30s", "  timeout client-fin 1s",
		"  timeout server 30s", "  timeout server-fin 1s", "  timeout http-request 10s",
		"  timeout http-keep-alive 300s", "  timeout tunnel 1h", "  option redispatch", "  retries 3",
	} {
		if !hasLine(defaults, line) {
			t.Errorf("defaults lacks %q:\n%s", line, defaults)
		}
	}
	for _, bad := range []string{"default-server", "daemon", "<no value>", " \n", "\n\n\n"} {
		if strings.Contains(out, bad) {
			t.Errorf("config contains %q", bad)
		}
	}
	for _, m := range standardMaps {
		if !strings.Contains(out, "("+testDir+"/conf/"+m+")") && !strings.Contains(out, "("+testDir+"/conf/"+m+",") {
			t.Errorf("config does not reference %s", m)
		}
	}

	public := section(t, out, "frontend public")
	redirect := strings.Index(public, "http-request redirect location https://%[req.hdr(host),regsub(:[0-9]+$,,)]%[pathq] code 302 if { var(txn.redir) -m str 1 }")
	use := strings.Index(public, "use_backend %[var(txn.be)] if { var(txn.be) -m found }")
	if redirect < 0 || use < 0 || redirect > use {
		t.Errorf("public: want the redirect before use_backend:\n%s", public)
	}
	for _, line := range []string{
		"  bind 127.0.0.1:8080",
		"  monitor-uri /_______internal_router_healthz",
		"  http-request del-header Proxy",
		"  http-request set-var(txn.be) var(txn.xkey),map_str(/srv/haproxy/conf/os_http_be.map)",
		"  http-request set-var(txn.be) var(txn.key),map_beg(/srv/haproxy/conf/os_http_be.map) if !{ var(txn.be) -m found }",
		"  default_backend openshift_default",
	} {
		if !hasLine(public, line) {
			t.Errorf("public lacks %q:\n%s", line, public)
		}
	}
	for header, lines := range map[string][]string{
		"frontend public_ssl": {
			"  bind 127.0.0.1:8443", "  tcp-request inspect-delay 5s",
			"  tcp-request content accept if { req_ssl_hello_type 1 }",
			"  use_backend be_sni if { var(txn.sni) -m found }", "  default_backend be_no_sni",
		},
		"frontend fe_sni": {
			"  bind unix@/srv/haproxy/run/haproxy-sni.sock mode 600 ssl crt /srv/haproxy/conf/default_pub_keys.pem crt-list /srv/haproxy/conf/cert_config.map accept-proxy no-alpn",
			"  bind unix@/srv/haproxy/run/haproxy-sni.sock mode 600 ssl crt /srv/haproxy/conf/default_pub_keys.pem crt-list /srv/haproxy/conf/cert_config.map accept-proxy",
			"  http-request set-var(txn.be) var(txn.xkey),map_str(/srv/haproxy/conf/os_edge_reencrypt_be.map)",
		},
		"frontend fe_no_sni": {
			"  bind unix@/srv/haproxy/run/haproxy-no-sni.sock mode 600 ssl crt /srv/haproxy/conf/default_pub_keys.pem accept-proxy no-alpn",
			"  bind unix@/srv/haproxy/run/haproxy-no-sni.sock mode 600 ssl crt /srv/haproxy/conf/default_pub_keys.pem accept-proxy",
		},
		"backend be_sni":    {"  mode tcp", "  server fe_sni unix@/srv/haproxy/run/haproxy-sni.sock weight 1 send-proxy"},
		"backend be_no_sni": {"  mode tcp", "  server fe_no_sni unix@/srv/haproxy/run/haproxy-no-sni.sock weight 1 send-proxy"},
		"backend be_edge_http:ns1:edge": {
			"backend be_edge_http:ns1:edge from haroute_http_roundrobin_cookie",
			"  acl allowlist src 10.1.41.0/24 10.1.42.0/24 10.1.43.0/24 10.1.44.0/24 127.0.0.1 ::1 fd00::/8",
			"  tcp-request content reject if !allowlist",
			"  stick-table type ipv6 size 100k expire 30s store conn_cur,conn_rate(3s),http_req_rate(10s)",
			"  tcp-request content track-sc2 src",
			"  tcp-request content reject if { src_conn_cur ge 1000 }",
			"  tcp-request content reject if { src_conn_rate ge 1000 }",
			"  tcp-request content reject if { src_http_req_rate ge 1000 }",
			`  http-request replace-path '^/shop(.*)$' '/it'\''s%%41\1'`,
			".if version_atleast(3.0)", ".else", "  dynamic-cookie-key 0123456789abcdef",
			".endif",
			// echo -n pod:edge-2:svc:http:fd00::2:8080 | md5sum
			"  server pod:edge-2:svc:http:fd00::2:8080 [fd00::2]:8080 id 670168 weight 0 maxconn 100 check inter 2s disabled cookie efefcf308258895dbf383aa6dcce756b",
			"  server pod:edge-2:svc:http:fd00::2:8080 [fd00::2]:8080 id 670168 weight 0 maxconn 100 check inter 2s disabled",
		},
		"backend be_http:ns1:wild":  {"backend be_http:ns1:wild from haroute_http_source"},
		"backend be_http:ns1:never": {`  http-request replace-path '^/n(.*)$' '/m\1'`},
		"backend be_secure:ns2:re-default": {
			"  server pod:rd-1:svc:https:127.0.0.9:2 127.0.0.9:2 id 734883 weight 256 check inter 5000ms ssl verify required ca-file /etc/haroute/default-ca.pem verifyhost svc.ns2.svc alpn h2,http/1.1",
		},
		"backend be_tcp:ns3:pass": {
			"backend be_tcp:ns3:pass from haroute_tcp_source", "  timeout tunnel 30m",
			"  acl allowlist src 127.0.0.0/8", "  tcp-request content reject if !allowlist",
			"  tcp-request content reject if { src_http_req_rate ge 30 }",
		},
		"backend be_tcp:ns3:pass6":  {"  server pod:pass6-1:svc:https:::1:5 [::1]:5 id 775271 weight 128 check inter 5000ms"},
		"backend openshift_default": {"  mode http"},
		// The backend profiles, after the frontends.
		"defaults haroute_http_roundrobin_cookie": {
			"defaults haroute_http_roundrobin_cookie from haroute", "  mode http", "  balance roundrobin", "  timeout check 5000ms",
			"  http-request set-timeout server be_name,map_str_int(/srv/haproxy/conf/haroute_timeout_server.map) if { be_name,map_str_int(/srv/haproxy/conf/haroute_timeout_server.map) -m found }",
			".if version_atleast(3.0)", "  cookie haroute_sticky insert indirect nocache httponly",
			".else", "  cookie haroute_sticky insert indirect nocache httponly dynamic", ".endif",
		},
		"defaults haroute_tcp_source": {"  mode tcp", "  balance source", "  hash-type consistent", "  timeout check 5000ms"},
		"defaults": {
			"  errorfile 503 /srv/haproxy/conf/error-page-503.http", "  errorfile 404 /srv/haproxy/conf/error-page-404.http",
		},
	} {
		sec := section(t, out, header)
		for _, line := range lines {
			if !hasLine(sec, line) {
				t.Errorf("%s lacks %q:\n%s", header, line, sec)
			}
		}
	}
	if n := strings.Count(section(t, out, "backend be_edge_http:ns1:edge"), "acl allowlist src "); n != 2 {
		t.Errorf("edge: %d allowlist lines, want 2 (47 entries, 40 per line)", n)
	}
	// The forwarded-headers policies are applied once, in the HTTP frontends, after the lookup and
	// before use_backend; no backend carries header rules of its own.
	for _, b := range cfg.Backends {
		if s := section(t, out, "backend "+b.Name); strings.Contains(s, "orward") {
			t.Errorf("backend %s sets forwarded headers itself:\n%s", b.Name, s)
		}
	}
	for _, fe := range []string{"frontend public", "frontend fe_sni", "frontend fe_no_sni"} {
		// The sticky cookie's name, once per frontend (not in every backend).
		s := section(t, out, fe)
		for _, line := range []string{
			"  http-request set-var(txn.ck_name) var(txn.be),map_str(/srv/haproxy/conf/haroute_cookie_names.map) if { var(txn.be) -m found }",
			`  http-request set-var(txn.ck_out) 'var(txn.ck_in),regsub("^([^|]+)[|]((.*;[ ]*)?)\\1=","\\2haroute_sticky=")' if { var(txn.ck_in) -m found }`,
			`  http-after-response replace-header Set-Cookie '^haroute_sticky=([^;]*(; Expires=[^;]*)?; path=/; HttpOnly)$' '%[var(txn.ck_name)]=\1; Secure; SameSite=%[var(txn.be),map_str(/srv/haproxy/conf/haroute_cookie.map)]' if { var(txn.ck_name) -m found } { var(txn.be),map_str(/srv/haproxy/conf/haroute_cookie.map) -m found }`,
			`  http-after-response replace-header Set-Cookie '^haroute_sticky=(.*)$' '%[var(txn.ck_name)]=\1' if { var(txn.ck_name) -m found }`,
		} {
			if !strings.Contains(s, line+"\n") {
				t.Errorf("%s lacks %q", fe, line)
			}
		}
		lookup := strings.Index(s, "  http-request set-var(txn.fwd) var(txn.be),map_str("+testDir+"/conf/haroute_forwarded.map,append)")
		xff := strings.Index(s, "  http-request add-header X-Forwarded-For %[src] if fwd_append")
		use := strings.Index(s, "  use_backend %[var(txn.be)]")
		if lookup < 0 || xff < lookup || use < xff {
			t.Errorf("%s: forwarded-headers rules missing or out of place (lookup %d, X-Forwarded-For %d, use_backend %d):\n%s", fe, lookup, xff, use, s)
		}
	}
	for _, tcp := range []string{"backend be_tcp:ns3:pass", "backend be_tcp:ns3:pass6", "backend be_sni"} {
		if s := section(t, out, tcp); strings.Contains(s, "http-") || strings.Contains(s, "forwardfor") {
			t.Errorf("%s has http rules:\n%s", tcp, s)
		}
	}
	if s := section(t, out, "backend openshift_default"); strings.Contains(s, "server ") {
		t.Errorf("openshift_default has servers:\n%s", s)
	}
	// Every backend is in its backend file, once, after the fixed sections of haproxy.cfg.
	files := renderOK(t, cfg, defaultOpts(f, t))
	if strings.Contains(files["conf/haproxy.cfg"], "\nbackend openshift_default ") {
		t.Error("openshift_default is in haproxy.cfg, not in " + DefaultBackendFile)
	}
	for _, b := range cfg.Backends {
		if n := strings.Count(out, "\nbackend "+b.Name+" from "+b.Profile()+"\n"); n != 1 {
			t.Errorf("backend %s is in the configuration %d times", b.Name, n)
		}
		if !strings.Contains("\n"+files[ShardFile(b.Name)], "\nbackend "+b.Name+" from "+b.Profile()+"\n") {
			t.Errorf("backend %s is not in %s", b.Name, ShardFile(b.Name))
		}
	}
}

func TestRenderOptionalSettingsOmitted(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	cfg.Settings.Threads, cfg.Settings.HardStopAfter, cfg.Settings.BufSize, cfg.Settings.MaxConnections = 0, "", 0, 0
	cfg.Settings.Timeouts.Tunnel = ""
	out := renderConfig(t, cfg, defaultOpts(f, t))
	for _, bad := range []string{"nbthread", "hard-stop-after", "tune.bufsize", "maxconn 2000", "timeout tunnel 1h"} {
		if strings.Contains(out, bad) {
			t.Errorf("config contains %q although unset", bad)
		}
	}
}

func snapshot(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRenderDeterministic(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	opts := defaultOpts(f, t)
	before := snapshot(t, cfg)
	a, err := Render(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if snapshot(t, cfg) != before {
		t.Error("Render modified the model")
	}
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("file %s differs between two renders", a[i].Path)
		}
	}
}

const customTemplate = `{{- $b := index .Config.Backends 0 -}}
{{- $s := index $b.Servers 0 -}}
env: {{ env "ROUTER_X" }} {{ env "UNSET" "dflt" }}
matchPattern: {{ matchPattern "edge\\..*" "edge.example.com" }} {{ matchPattern "edge" "edge.example.com" }}
isInteger: {{ isInteger "42" }} {{ isInteger "4x" }}
matchValues: {{ matchValues "b" "a" "b" }} {{ matchValues "c" "a" "b" }}
generateRouteRegexp: {{ generateRouteRegexp "www.example.com" "/api" false }}
genSubdomainWildcardRegexp: {{ genSubdomainWildcardRegexp "www.example.com" "/p" true }}
genCertificateHostName: {{ genCertificateHostName "www.example.com" true }}
mapPath: {{ mapPath "os_tcp_be.map" }}
certPath: {{ certPath "ns1:edge.pem" }}
caPath: {{ caPath "ns2:re.pem" }}
bindAddr: {{ bindAddr "unix@run/a.sock" }} {{ isUnixBind "unix@run/a.sock" }}
serverAddress: {{ serverAddress $s }}
serverLine: {{ serverLine $b $s }}
checkInterval: {{ checkInterval $b }}
forwardedHeaders: {{ forwardedHeaders $b }}
allowlistChunks: {{ len (allowlistChunks $b.Allowlist) }}
rewrite: {{ rewriteRegexp $b.Rewrite }} {{ rewriteReplacement $b.Rewrite }}
word: {{ word $b.Name }}
paths: {{ .Dir }} {{ .Paths.Config }} {{ .Paths.ConfDir }} {{ .Paths.AdminSocket }} {{ .Paths.RunDir }}
tls: {{ .Paths.DefaultCertificate }} {{ .Paths.CertList }} {{ .Paths.CertDir }} {{ .Paths.CADir }}
sockets: {{ .Paths.SNISocket }} {{ .Paths.NoSNISocket }}
maps: {{ .Paths.HTTPMap }} {{ .Paths.EdgeReencryptMap }} {{ .Paths.RedirectMap }} {{ .Paths.TCPMap }} {{ .Paths.WildcardDomainMap }} {{ index .Paths.Maps "os_http_be.map" }}
frontend: {{ (.Frontend "fe_sni").Bind }} {{ if .Frontend "nope" }}found{{ else }}none{{ end }}
`

const customWant = `env: x-value dflt
matchPattern: true false
isInteger: true false
matchValues: true false
generateRouteRegexp: ^www\.example\.com\.?(:[0-9]+)?/api(/.*)?$
genSubdomainWildcardRegexp: ^[^\.]*\.example\.com/p$
genCertificateHostName: *.example.com
mapPath: /srv/haproxy/conf/os_tcp_be.map
certPath: /srv/haproxy/router/certs/ns1:edge.pem
caPath: /srv/haproxy/router/cacerts/ns2:re.pem
bindAddr: unix@/srv/haproxy/run/a.sock true
serverAddress: 127.0.0.2:8000
serverLine: server pod:edge-1:svc:http:127.0.0.2:8000 127.0.0.2:8000 id 341987 weight 256 maxconn 100 check inter 2s
checkInterval: 2s
forwardedHeaders: replace
allowlistChunks: 2
rewrite: ^/shop(.*)$ /it'\''s%%41\1
word: be_edge_http:ns1:edge
paths: /srv/haproxy /srv/haproxy/conf/haproxy.cfg /srv/haproxy/conf /srv/haproxy/run/haproxy.sock /srv/haproxy/run
tls: /srv/haproxy/conf/default_pub_keys.pem /srv/haproxy/conf/cert_config.map /srv/haproxy/router/certs /srv/haproxy/router/cacerts
sockets: /srv/haproxy/run/haproxy-sni.sock /srv/haproxy/run/haproxy-no-sni.sock
maps: /srv/haproxy/conf/os_http_be.map /srv/haproxy/conf/os_edge_reencrypt_be.map /srv/haproxy/conf/os_route_http_redirect.map /srv/haproxy/conf/os_tcp_be.map /srv/haproxy/conf/os_wildcard_domain.map /srv/haproxy/conf/os_http_be.map
frontend: unix@run/haproxy-sni.sock none
`

func TestRenderCustomTemplate(t *testing.T) {
	tmpl, err := ParseTemplate("custom", customTemplate)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	opts := defaultOpts(f, t)
	opts.Template = tmpl
	opts.Env = func(name string) string {
		if name == "ROUTER_X" {
			return "x-value"
		}
		return ""
	}
	if got := renderConfig(t, f.model(t), opts); got != customWant {
		t.Errorf("custom template:\n%s\nwant\n%s", got, customWant)
	}

	// A custom template does not need the default layout, and one Template serves concurrent Renders.
	cfg := f.model(t)
	cfg.Frontends = cfg.Frontends[:1]
	minimal, err := ParseTemplate("minimal", "{{ range .Config.Backends }}{{ .Name }}\n{{ end }}")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			files, err := Render(cfg, Options{Dir: testDir, Template: minimal, DefaultCertificatePEM: opts.DefaultCertificatePEM})
			if err != nil {
				errs <- err
				return
			}
			for _, fl := range files {
				if fl.Path == "conf/haproxy.cfg" && !strings.HasPrefix(string(fl.Data), "be_edge_http:ns1:edge\n") {
					errs <- fmt.Errorf("unexpected output %q", fl.Data)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestParseTemplateErrors(t *testing.T) {
	if _, err := ParseTemplate("bad", "{{ if }}"); err == nil {
		t.Error("syntax error: no error")
	}
	if _, err := ParseTemplate("bad", "{{ noSuchFunc }}"); err == nil {
		t.Error("unknown function: no error")
	}
	f := newFixture(t)
	for name, text := range map[string]string{
		"fail":        `{{ fail "custom stop" }}`,
		"unknown map": `{{ mapPath "nope.map" }}`,
		"missing key": `{{ .NoSuchField }}`,
		"unsafe word": `{{ word "a b" }}`,
	} {
		tmpl, err := ParseTemplate(name, text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		opts := defaultOpts(f, t)
		opts.Template = tmpl
		if _, err := Render(f.model(t), opts); err == nil {
			t.Errorf("%s: Render succeeded", name)
		}
	}
	if _, err := Render(newFixture(t).model(t), Options{Dir: testDir, Template: &Template{}, DefaultCertificatePEM: []byte("-----BEGIN X-----\n")}); err == nil {
		t.Error("unparsed Template: no error")
	}
}

func TestRenderRefusesBadOptions(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	pem := defaultOpts(f, t).DefaultCertificatePEM
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"relative dir", Options{Dir: "srv/haproxy", DefaultCertificatePEM: pem}},
		{"empty dir", Options{Dir: "", DefaultCertificatePEM: pem}},
		{"dir with space", Options{Dir: "/srv/ha proxy", DefaultCertificatePEM: pem}},
		{"dir with quote", Options{Dir: `/srv/"x`, DefaultCertificatePEM: pem}},
		{"dir with hash", Options{Dir: "/srv/#x", DefaultCertificatePEM: pem}},
		{"dir with dollar", Options{Dir: "/srv/${HOME}", DefaultCertificatePEM: pem}},
		{"dir with comma", Options{Dir: "/srv/a,b", DefaultCertificatePEM: pem}},
		{"dir with newline", Options{Dir: "/srv/a\nb", DefaultCertificatePEM: pem}},
		{"long socket path", Options{Dir: "/" + strings.Repeat("d", 100), DefaultCertificatePEM: pem}},
		{"no default certificate", Options{Dir: testDir}},
		{"blank default certificate", Options{Dir: testDir, DefaultCertificatePEM: []byte("\n \n")}},
		{"default certificate not PEM", Options{Dir: testDir, DefaultCertificatePEM: []byte("hello")}},
	} {
		if _, err := Render(cfg, tc.opts); err == nil {
			t.Errorf("%s: Render succeeded", tc.name)
		}
	}
	if _, err := Render(nil, defaultOpts(f, t)); err == nil {
		t.Error("nil config: Render succeeded")
	}
	if files, err := Render(cfg, Options{Dir: "/srv/haproxy/", DefaultCertificatePEM: pem}); err != nil || !strings.Contains(string(Configuration(files)), "stats socket /srv/haproxy/run/haproxy.sock ") {
		t.Errorf("trailing slash in Dir: %v", err)
	}
}

func TestRenderRefusesBadModels(t *testing.T) {
	f := newFixture(t)
	opts := defaultOpts(f, t)
	backend := func(cfg *model.Config, name string) *model.Backend {
		b := cfg.Backend(name)
		if b == nil {
			t.Fatalf("no backend %s", name)
		}
		return b
	}
	const edge, pass, re = "be_edge_http:ns1:edge", "be_tcp:ns3:pass", "be_secure:ns2:re"
	for name, mutate := range map[string]func(*model.Config){
		"invalid model (unsorted backends)": func(c *model.Config) { c.Backends[0], c.Backends[1] = c.Backends[1], c.Backends[0] },
		"invalid model (map key with space)": func(c *model.Config) {
			c.Maps[1].Entries[0].Key = "a b"
		},
		"drain server":            func(c *model.Config) { backend(c, edge).Servers[0].State = model.StateDrain },
		"HSTS sample expression":  func(c *model.Config) { backend(c, edge).HSTS = "max-age=1;%[env(HOME)]" },
		"HSTS percent":            func(c *model.Config) { backend(c, edge).HSTS = "max-age=%ci" },
		"cookie key with space":   func(c *model.Config) { backend(c, edge).Cookie.Key = "a b" },
		"cookie key with env":     func(c *model.Config) { backend(c, edge).Cookie.Key = "${HOME}" },
		"cookie name with quote":  func(c *model.Config) { backend(c, edge).Cookie.Name = `a"b` },
		"cookie name with dot":    func(c *model.Config) { backend(c, edge).Cookie.Name = "a.b" },
		"cookie in tcp mode":      func(c *model.Config) { backend(c, pass).Cookie = &model.Cookie{Name: "c", Key: "k"} },
		"rewrite in tcp mode":     func(c *model.Config) { backend(c, pass).Rewrite = &model.Rewrite{Prefix: "/a", Target: "/"} },
		"timeout with space":      func(c *model.Config) { backend(c, edge).TimeoutServer = "5 s" },
		"timeout unit":            func(c *model.Config) { backend(c, edge).TimeoutTunnel = "5w" },
		"settings timeout":        func(c *model.Config) { c.Settings.Timeouts.Client = "30s #x" },
		"hard stop after":         func(c *model.Config) { c.Settings.HardStopAfter = "${X}" },
		"settings check interval": func(c *model.Config) { c.Settings.CheckInterval = "fast" },
		"settings forwarded":      func(c *model.Config) { c.Settings.ForwardedHeaders = "sometimes" },
		"settings default cert":   func(c *model.Config) { c.Settings.DefaultCertificate = "../x.pem" },
		"negative maxconn":        func(c *model.Config) { c.Settings.MaxConnections = -1 },
		"small bufsize":           func(c *model.Config) { c.Settings.BufSize = 8192 },
		"no inspect delay":        func(c *model.Config) { c.Settings.Timeouts.InspectDelay = "" },
		"allowlist word":          func(c *model.Config) { backend(c, edge).Allowlist[0] = "any" },
		"allowlist zone":          func(c *model.Config) { backend(c, edge).Allowlist[0] = "fe80::1%lo" },
		"negative rate limit":     func(c *model.Config) { backend(c, edge).RateLimit.RateHTTP = -1 },
		"negative maxconn server": func(c *model.Config) { backend(c, edge).ServerMaxConn = -1 },
		"backend forwarded":       func(c *model.Config) { backend(c, edge).ForwardedHeaders = "all" },
		"rewrite target quote":    func(c *model.Config) { backend(c, edge).Rewrite.Target = `/x"y` },
		"rewrite target newline":  func(c *model.Config) { backend(c, edge).Rewrite.Target = "/x\ny" },
		"rewrite target empty":    func(c *model.Config) { backend(c, edge).Rewrite.Target = "" },
		"rewrite prefix relative": func(c *model.Config) { backend(c, edge).Rewrite.Prefix = "shop" },
		"rewrite prefix hash":     func(c *model.Config) { backend(c, edge).Rewrite.Prefix = "/a#b" },
		"verifyhost expression":   func(c *model.Config) { backend(c, re).Servers[0].VerifyHost = "x),env(HOME" },
		"verifyhost with slash":   func(c *model.Config) { backend(c, re).Servers[0].VerifyHost = "a/b" },
		"reencrypt without TLS":   func(c *model.Config) { backend(c, re).TLS = nil },
		"unknown CA name":         func(c *model.Config) { backend(c, re).TLS.CAFile = "ns9:x.pem" },
		"CA path with space":      func(c *model.Config) { backend(c, re).TLS.CAFile = "/etc/a b.pem" },
		"empty CA PEM":            func(c *model.Config) { c.CAFiles[0].PEM = "" },
		"server zone":             func(c *model.Config) { backend(c, edge).Servers[1].Addr = "fe80::1%eth0" },
		"unknown kind":            func(c *model.Config) { backend(c, edge).Kind = "ingress" },
		"kind and mode differ":    func(c *model.Config) { backend(c, pass).Mode = model.ModeHTTP },
		"reserved backend name": func(c *model.Config) {
			c.Backends = append(c.Backends, &model.Backend{Name: model.NoSNIBackend, Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random"})
			sort.Slice(c.Backends, func(i, j int) bool { return c.Backends[i].Name < c.Backends[j].Name })
		},
		"bind with env":     func(c *model.Config) { c.Frontends[0].Bind = "${ADDR}:80" },
		"bind escaping Dir": func(c *model.Config) { c.Frontends[2].Bind = "unix@../x.sock" },
		"unknown frontend": func(c *model.Config) {
			c.Frontends = append(c.Frontends, model.Frontend{Name: "extra", Mode: model.ModeHTTP, Bind: ":81"})
		},
		"missing frontend":      func(c *model.Config) { c.Frontends = c.Frontends[:3] },
		"frontend mode":         func(c *model.Config) { c.Frontends[1].Mode = model.ModeHTTP },
		"certificate no SNI":    func(c *model.Config) { c.Certificates[0].SNI = nil },
		"certificate bad SNI":   func(c *model.Config) { c.Certificates[0].SNI = []string{"!a.example.com"} },
		"certificate ALPN":      func(c *model.Config) { c.Certificates[0].ALPN = "h2]x" },
		"certificate empty PEM": func(c *model.Config) { c.Certificates[0].PEM = "" },
		"certificate blank line": func(c *model.Config) {
			c.Certificates[0].PEM = strings.Replace(c.Certificates[0].PEM, "\n", "\n\n", 1)
		},
		"file name collision": func(c *model.Config) {
			c.Maps = append([]model.MapFile{{Name: "haproxy.cfg"}}, c.Maps...)
		},
	} {
		cfg := f.model(t)
		mutate(cfg)
		if _, err := Render(cfg, opts); err == nil {
			t.Errorf("%s: Render succeeded", name)
		} else if !strings.HasPrefix(err.Error(), "render: ") {
			t.Errorf("%s: error without context: %v", name, err)
		}
	}
}
