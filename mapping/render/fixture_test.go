package render

import (
	"fmt"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
)

// fixture says where the feature-complete model points.
type fixture struct {
	httpPort, httpsPort int
	// backendAddr and backendPort receive the web, wildcard and edge Routes' traffic.
	backendAddr string
	backendPort int32
	// defaultCA is the absolute path of the configured default destination CA.
	defaultCA string
	ca        *testkit.CA
}

func newFixture(t testing.TB) *fixture {
	return &fixture{
		httpPort: 8080, httpsPort: 8443,
		backendAddr: "127.0.0.2", backendPort: 8000,
		defaultCA: "/etc/haroute/default-ca.pem",
		ca:        testkit.NewCA(t, "render test CA"),
	}
}

func entries(kv ...string) []model.MapEntry {
	var out []model.MapEntry
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, model.MapEntry{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

// model returns a hand-built model that uses every feature the default template renders.
func (f *fixture) model(t testing.TB) *model.Config {
	const (
		web    = "be_http:ns1:web"
		wild   = "be_http:ns1:wild"
		never  = "be_http:ns1:never"
		edge   = "be_edge_http:ns1:edge"
		re     = "be_secure:ns2:re"
		reDef  = "be_secure:ns2:re-default"
		pass   = "be_tcp:ns3:pass"
		passV6 = "be_tcp:ns3:pass6"
	)
	var allow []string
	for i := 1; i <= 44; i++ {
		allow = append(allow, fmt.Sprintf("10.1.%d.0/24", i))
	}
	allow = append(allow, "127.0.0.1", "::1", "fd00::/8")
	target := func(name string) model.Server {
		return model.Server{Name: name, Addr: f.backendAddr, Port: f.backendPort, Weight: 256, State: model.StateReady, Service: "ns1/svc"}
	}
	cfg := &model.Config{
		Settings: model.Settings{
			RouterName: "default", HTTPPort: f.httpPort, HTTPSPort: f.httpsPort, BindAddress: "127.0.0.1",
			MaxConnections: 2000, Threads: 2, LoadBalanceAlgorithm: "random", TCPBalanceScheme: "source",
			Timeouts: model.Timeouts{
				Connect: "5s", Client: "30s", ClientFin: "1s", Server: "30s", ServerFin: "1s",
				HTTPRequest: "10s", HTTPKeepAlive: "300s", Tunnel: "1h", InspectDelay: "5s",
			},
			CheckInterval: "5000ms", ForwardedHeaders: "append", DefaultCertificate: "default_pub_keys.pem",
			BufSize: 32768, HardStopAfter: "1h",
			TLS:  model.TLSProfile{MinVersion: "TLSv1.2", Ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256", DHParamBits: 2048},
			HTTP: model.HTTPOptions{MaxRewrite: 8192, StripClientSSLHeaders: true, IPMode: model.IPModeV4},
		},
		Frontends: []model.Frontend{
			{Name: model.FrontendPublic, Mode: model.ModeHTTP, Bind: fmt.Sprintf("127.0.0.1:%d", f.httpPort)},
			{Name: model.FrontendPublicSSL, Mode: model.ModeTCP, Bind: fmt.Sprintf("127.0.0.1:%d", f.httpsPort)},
			{Name: model.FrontendSNI, Mode: model.ModeHTTP, Bind: "unix@run/haproxy-sni.sock"},
			{Name: model.FrontendNoSNI, Mode: model.ModeHTTP, Bind: "unix@run/haproxy-no-sni.sock"},
		},
		Maps: []model.MapFile{
			{Name: model.MapCookieSameSite, Entries: entries(edge, "Lax")},
			{Name: model.MapCookieNames, Entries: entries(edge, "edge_cookie")},
			{Name: model.MapForwardedHeaders, Entries: entries(
				edge, "replace",
				never, "never",
				web, "if-none",
			)},
			{Name: model.MapHSTS, Entries: entries(edge, mappedHSTS("max-age=31536000;includeSubDomains;preload"))},
			{Name: model.MapEdgeReencrypt, Entries: entries(
				"=edge.example.com/shop", edge,
				"edge.example.com/shop/", edge,
				"re.example.com/", re,
				"redef.example.com/", reDef,
			)},
			{Name: model.MapHTTP, Entries: entries(
				"*.wild.example.com/", wild,
				"=never.example.com/n", never,
				"never.example.com/n/", never,
				"web.example.com/", web,
			)},
			{Name: model.MapHTTPRedirect, Entries: entries(
				"*.wild.example.com/", "0",
				"=edge.example.com/shop", "1",
				"=never.example.com/n", "0",
				"edge.example.com/shop/", "1",
				"never.example.com/n/", "0",
				"web.example.com/", "0",
			)},
			{Name: model.MapTCP, Entries: entries(
				"pass.example.com", pass,
				"pass6.example.com", passV6,
			)},
			{Name: model.MapWildcardDomain, Entries: entries("*.wild.example.com", "1")},
		},
		Backends: []*model.Backend{
			{
				Name: edge, Kind: model.KindEdge, Mode: model.ModeHTTP, Route: "ns1/edge", Balance: "roundrobin",
				Cookie:        &model.Cookie{Name: "edge_cookie", Key: "0123456789abcdef"},
				TimeoutServer: "2m", TimeoutTunnel: "2h", CheckInterval: "2s",
				Allowlist:        allow,
				RateLimit:        &model.RateLimit{ConcurrentTCP: 1000, RateTCP: 1000, RateHTTP: 1000},
				ForwardedHeaders: "replace",
				HSTS:             "max-age=31536000;includeSubDomains;preload",
				Rewrite:          &model.Rewrite{Prefix: "/shop", Target: "/it's%41"},
				ServerMaxConn:    100,
				Servers: []model.Server{
					target("pod:edge-1:svc:http:" + f.backendAddr + ":" + fmt.Sprint(f.backendPort)),
					{Name: "pod:edge-2:svc:http:fd00::2:8080", Addr: "fd00::2", Port: 8080, Weight: 0, State: model.StateMaint, Service: "ns1/svc"},
				},
			},
			{
				Name: never, Kind: model.KindHTTP, Mode: model.ModeHTTP, Route: "ns1/never", Balance: "leastconn",
				ForwardedHeaders: "never", CheckInterval: "5000ms",
				Rewrite: &model.Rewrite{Prefix: "/n", Target: "/m"},
				Servers: []model.Server{{Name: "pod:never-1:svc::127.0.0.9:1", Addr: "127.0.0.9", Port: 1, Weight: 1, State: model.StateReady}},
			},
			{
				Name: web, Kind: model.KindHTTP, Mode: model.ModeHTTP, Route: "ns1/web", Balance: "random",
				ForwardedHeaders: "if-none", CheckInterval: "5000ms",
				Servers: []model.Server{target("pod:web-1:svc:http:" + f.backendAddr + ":" + fmt.Sprint(f.backendPort))},
			},
			{
				Name: wild, Kind: model.KindHTTP, Mode: model.ModeHTTP, Route: "ns1/wild", Balance: "source",
				Servers: []model.Server{target("pod:wild-1:svc:http:" + f.backendAddr + ":" + fmt.Sprint(f.backendPort))},
			},
			{
				Name: re, Kind: model.KindReencrypt, Mode: model.ModeHTTP, Route: "ns2/re", Balance: "leastconn",
				CheckInterval: "5000ms", TLS: &model.BackendTLS{CAFile: "ns2:re.pem"}, ForwardedHeaders: "append",
				Servers: []model.Server{{Name: "pod:re-1:svc:https:127.0.0.9:3", Addr: "127.0.0.9", Port: 3, Weight: 256, State: model.StateReady, VerifyHost: "svc.ns2.svc"}},
			},
			{
				Name: reDef, Kind: model.KindReencrypt, Mode: model.ModeHTTP, Route: "ns2/re-default", Balance: "random",
				CheckInterval: "5000ms", TLS: &model.BackendTLS{CAFile: f.defaultCA},
				Servers: []model.Server{{Name: "pod:rd-1:svc:https:127.0.0.9:2", Addr: "127.0.0.9", Port: 2, Weight: 256, State: model.StateReady, VerifyHost: "svc.ns2.svc"}},
			},
			{
				Name: pass, Kind: model.KindPassthrough, Mode: model.ModeTCP, Route: "ns3/pass", Balance: "source",
				CheckInterval: "5000ms", TimeoutTunnel: "30m",
				Allowlist: []string{"127.0.0.0/8"},
				RateLimit: &model.RateLimit{ConcurrentTCP: 10, RateTCP: 20, RateHTTP: 30},
				HSTS:      "max-age=1", ForwardedHeaders: "append", // ignored in tcp mode
				Servers: []model.Server{{Name: "pod:pass-1:svc:https:127.0.0.9:4", Addr: "127.0.0.9", Port: 4, Weight: 256, State: model.StateReady}},
			},
			{
				Name: passV6, Kind: model.KindPassthrough, Mode: model.ModeTCP, Route: "ns3/pass6", Balance: "roundrobin",
				CheckInterval: "5000ms",
				Servers:       []model.Server{{Name: "pod:pass6-1:svc:https:::1:5", Addr: "::1", Port: 5, Weight: 128, State: model.StateReady}},
			},
		},
		Certificates: []model.Certificate{
			{Name: "ns1:edge.pem", PEM: string(f.ca.IssueBundle(t, "edge.example.com")), SNI: []string{"edge.example.com"}, ALPN: "h2,http/1.1"},
			{Name: "ns1:wild.pem", PEM: string(f.ca.IssueBundle(t, "*.wild.example.com")), SNI: []string{"*.wild.example.com"}},
		},
		CAFiles: []model.CAFile{{Name: "ns2:re.pem", PEM: string(f.ca.PEM())}},
		Routes: []model.RouteInfo{
			{Namespace: "ns1", Name: "edge", Host: "edge.example.com", Path: "/shop", Termination: "edge", InsecurePolicy: "Redirect", Backend: edge, Certificate: "ns1:edge.pem"},
			{Namespace: "ns1", Name: "web", Host: "web.example.com", Backend: web},
		},
	}
	withServerIDs(cfg)
	return cfg
}

// withServerIDs gives the servers of a hand-built config the ids Translate would give them.
func withServerIDs(cfg *model.Config) {
	for i := range cfg.Backends {
		model.AssignServerIDs(cfg.Backends[i].Servers)
	}
}

// mappedHSTS is an HSTS value as model.MapHSTS holds it.
func mappedHSTS(v string) string {
	m, _ := model.MappedHeaderValue(v)
	return m
}
