package traffic

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
)

// refusedBytes checks that a raw exchange ended the way OpenShift's router ends a refused
// connection: closed (or reset) without a byte of answer.
func refusedBytes(t *testing.T, what string, raw []byte, err error) {
	t.Helper()
	switch {
	case err != nil && !isReset(err):
		t.Errorf("%s: %v, want the connection closed without an answer", what, err)
	case len(raw) > 0:
		t.Errorf("%s: the router answered %q, want the connection closed without an answer", what, raw)
	}
}

// answered checks that a raw exchange got a 200 from the backend named backend.
func answered(t *testing.T, what string, raw []byte, err error, backend string) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	resp, _, err := parseRaw(raw)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if resp.StatusCode != 200 || resp.Header.Get(testkit.HeaderBackend) != backend {
		t.Errorf("%s: got %d from %s, want 200 from backend %s", what, resp.StatusCode, who(resp.Header.Get(testkit.HeaderBackend)), backend)
	}
}

// TestAllowlistRefusal: a client outside a Route's ip_allowlist gets no answer at all, over plain
// HTTP and through edge termination: the router closes its connection (OpenShift's
// "tcp-request content reject"), and the request never reaches the backend. Clients inside the
// list, by address or by network, are served; a connection kept alive from an allowed Route is
// closed at its first request for a Route that refuses it.
func TestAllowlistRefusal(t *testing.T) {
	f := newFixture(t)
	be := testkit.StartHTTPBackend(t, "127.0.0.2", "app")
	f.m.Service("acl", "app", be)
	f.m.Route("acl", "allow", "allow.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPAllowlist, "127.0.0.1"))
	f.m.Route("acl", "allow-cidr", "cidr.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPAllowlist, "192.168.0.0/16 127.0.0.0/8"))
	f.m.Route("acl", "legacy", "legacy.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPWhitelist, "10.0.0.1"))
	f.m.Route("acl", "deny", "deny.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPAllowlist, "10.0.0.1 2001:db8::/32"))
	crt, key := f.ca.Issue(t, "deny.secure.example.com")
	f.m.Route("acl", "deny-edge", "deny.secure.example.com", "", "app", testbed.Edge(crt, key), testbed.Annotate(mapping.AnnotationIPAllowlist, "10.0.0.1"))
	r := f.start(t)
	httpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPPort))
	httpsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPSPort))

	for _, host := range []string{"allow.example.com", "cidr.example.com"} {
		raw, err := rawExchange(httpAddr, nil, nil, rawRequest(host, "/x"))
		answered(t, "GET http://"+host+"/x", raw, err, "app")
	}
	before := be.Requests()
	for _, host := range []string{"deny.example.com", "legacy.example.com"} {
		raw, err := rawExchange(httpAddr, nil, nil, rawRequest(host, "/x"))
		refusedBytes(t, "GET http://"+host+"/x", raw, err)
	}
	raw, err := rawExchange(httpsAddr, nil, f.tlsTo("deny.secure.example.com"), rawRequest("deny.secure.example.com", "/x"))
	refusedBytes(t, "GET https://deny.secure.example.com/x", raw, err)

	// Two requests on one connection: the allowed Route answers, the refusing one closes.
	keepAlive := "GET /first HTTP/1.1\r\nHost: allow.example.com\r\n\r\n" + rawRequest("deny.example.com", "/second")
	raw, err = rawExchange(httpAddr, nil, nil, keepAlive)
	answered(t, "GET /first then /second on one connection", raw, err, "app")
	if n := bytes.Count(raw, []byte("HTTP/1.1 ")); n != 1 {
		t.Errorf("GET /first then /second on one connection: %d answers %q, want the first only", n, raw)
	}
	if n := be.Requests() - before; n != 1 {
		t.Errorf("the backend received %d requests since the refused ones, want 1 (the allowed /first)", n)
	}
}

// TestRateLimits: the rate-limit-connections annotations refuse as OpenShift's router does — the
// connection closed without an answer — once a counter reaches the limit ("ge"), not above it. The
// connection counters include the connection being checked and the request rate does not count the
// request being checked, so a limit of N serves N-1 requests in flight (concurrent-tcp), N-1 new
// connections in 3 s (rate-tcp) and N requests in 10 s (rate-http); each one more than that is
// refused. The client addresses come from PROXY protocol headers, one address per check, so that
// the checks count apart; an IPv6 client is limited like an IPv4 one (the stick table is of type
// ipv6, where OpenShift's "ip" table cannot hold one).
func TestRateLimits(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	held := make(chan struct{}, 1)
	app := startServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			held <- struct{}{}
			<-release
		}
		w.Header().Set(testkit.HeaderBackend, "app")
	}))
	f.m.ServiceAt("rl", "app", app)
	const limit = 3
	on := testbed.Annotate(mapping.AnnotationRateLimit, "true")
	n := strconv.Itoa(limit)
	f.m.Route("rl", "concurrent", "concurrent.example.com", "", "app", on, testbed.Annotate(mapping.AnnotationRateLimitConcurrent, n))
	f.m.Route("rl", "tcp", "tcp.example.com", "", "app", on, testbed.Annotate(mapping.AnnotationRateLimitTCP, n))
	f.m.Route("rl", "http", "http.example.com", "", "app", on, testbed.Annotate(mapping.AnnotationRateLimitHTTP, n))
	r := f.startRouterOpts(t, envOptions(t, map[string]string{"ROUTER_USE_PROXY_PROTOCOL": "true"}))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPPort))
	get := func(src, host, path string) ([]byte, error) {
		from := netip.MustParseAddrPort(src)
		dst := netip.MustParseAddrPort("192.0.2.1:80")
		if from.Addr().Is6() {
			dst = netip.MustParseAddrPort("[2001:db8::1]:80")
		}
		return rawExchange(addr, proxyV1(from, dst), nil, rawRequest(host, path))
	}

	for _, tc := range []struct {
		name, host, src string
		served          int
	}{
		{"rate-tcp", "tcp.example.com", "198.51.100.1:1000", limit - 1},
		{"rate-tcp from IPv6", "tcp.example.com", "[2001:db8::7]:1000", limit - 1},
		{"rate-http", "http.example.com", "198.51.100.2:1000", limit},
		{"rate-http from IPv6", "http.example.com", "[2001:db8::8]:1000", limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 1; i <= tc.served+1; i++ {
				what := fmt.Sprintf("request %d from %s (limit %d)", i, tc.src, limit)
				raw, err := get(tc.src, tc.host, "/")
				if i <= tc.served {
					answered(t, what, raw, err, "app")
				} else {
					refusedBytes(t, what, raw, err)
				}
			}
		})
	}

	t.Run("concurrent-tcp", func(t *testing.T) {
		const src = "198.51.100.3:1000"
		// limit-1 requests held in flight, then one more.
		results := make(chan error, limit-1)
		for i := 1; i < limit; i++ {
			go func() {
				raw, err := get(src, "concurrent.example.com", "/hold")
				if err == nil && !bytes.HasPrefix(raw, []byte("HTTP/1.1 200 ")) {
					err = fmt.Errorf("answer %q, want 200", raw)
				}
				results <- err
			}()
			select {
			case <-held:
			case <-time.After(rawTimeout):
				t.Fatalf("held request %d did not reach the backend", i)
			}
		}
		raw, err := get(src, "concurrent.example.com", "/")
		refusedBytes(t, fmt.Sprintf("request %d in flight", limit), raw, err)
		releaseOnce.Do(func() { close(release) })
		for i := 1; i < limit; i++ {
			if err := <-results; err != nil {
				t.Errorf("held request: %v", err)
			}
		}
		raw, err = get(src, "concurrent.example.com", "/")
		answered(t, "a request once the others are done", raw, err, "app")
	})
}
