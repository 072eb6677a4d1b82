package traffic

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// dualStackAttempts bounds the search for ports free on both address families.
const dualStackAttempts = 20

// requireIPv6Loopback skips the test when the machine has no IPv6 loopback address to test with.
func requireIPv6Loopback(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback on this machine (listen on [::1]: %v): the IPv6 listeners cannot be tested", err)
	}
	_ = l.Close()
}

// dualStackPorts returns two distinct ports that were free a moment ago on every IPv4 and every
// IPv6 address, as the router's wildcard listeners (":port", ":::port v6only") need them.
func dualStackPorts(t *testing.T) (int, int) {
	t.Helper()
	free := func(p int) bool {
		for _, a := range []struct{ network, addr string }{{"tcp4", "0.0.0.0"}, {"tcp6", "::"}} {
			l, err := net.Listen(a.network, net.JoinHostPort(a.addr, strconv.Itoa(p)))
			if err != nil {
				return false
			}
			_ = l.Close()
		}
		return true
	}
	for range dualStackAttempts {
		ps := testkit.ListenPorts(t, 2)
		if free(ps[0]) && free(ps[1]) {
			return ps[0], ps[1]
		}
	}
	t.Fatalf("no two ports free on both 0.0.0.0 and [::] after %d attempts", dualStackAttempts)
	return 0, 0
}

// TestIPv6Listeners: ROUTER_IP_V4_V6_MODE chooses the address family of the public listeners (with
// no ROUTER_BIND_ADDRESS, which would override it): v6 serves clients on [::1] only, v4v6 both
// families, v4 (OpenShift's default) IPv4 only; on both the HTTP port and the HTTPS port, where the
// IPv6 client address reaches the TLS-terminating frontend. The backend sees the IPv6 client in
// X-Forwarded-For and, bracketed and quoted, in Forwarded.
func TestIPv6Listeners(t *testing.T) {
	requireIPv6Loopback(t)
	f := newFixture(t)
	echo := startEcho(t, "127.0.0.2", "echo", nil)
	f.m.ServiceAt("v6", "echo", echo)
	f.m.Route("v6", "web", "www.v6.example.com", "", "echo")
	crt, key := f.ca.Issue(t, "secure.v6.example.com")
	f.m.Route("v6", "secure", "secure.v6.example.com", "", "echo", testbed.Edge(crt, key))

	for _, tc := range []struct {
		mode       string
		ipv4, ipv6 bool // served on 127.0.0.1, on [::1]
	}{
		{"v6", false, true},
		{"v4v6", true, true},
		{"v4", true, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			opts := envOptions(t, map[string]string{"ROUTER_IP_V4_V6_MODE": tc.mode})
			opts.BindAddress = ""
			opts.HTTPPort, opts.HTTPSPort = dualStackPorts(t)
			r := f.startRouterOpts(t, opts)
			for _, c := range []struct {
				ip     string
				served bool
			}{{"127.0.0.1", tc.ipv4}, {"::1", tc.ipv6}} {
				for _, https := range []bool{false, true} {
					host, port, proto := "www.v6.example.com", r.Options.HTTPPort, "http"
					if https {
						host, port, proto = "secure.v6.example.com", r.Options.HTTPSPort, "https"
					}
					addr := net.JoinHostPort(c.ip, strconv.Itoa(port))
					t.Run(proto+" "+c.ip, func(t *testing.T) {
						if !c.served {
							conn, err := net.DialTimeout("tcp", addr, rawTimeout)
							if err == nil {
								_ = conn.Close()
								t.Fatalf("mode %s: %s accepted a connection, want it refused", tc.mode, addr)
							}
							if !errors.Is(err, syscall.ECONNREFUSED) {
								t.Errorf("mode %s: connect to %s: %v, want connection refused", tc.mode, addr, err)
							}
							return
						}
						cfg := f.tlsTo(host)
						if !https {
							cfg = nil
						}
						raw, err := rawExchange(addr, nil, cfg, rawRequest(host, "/"))
						if err != nil {
							t.Fatalf("mode %s: %s: %v", tc.mode, addr, err)
						}
						resp, body, err := parseRaw(raw)
						if err != nil {
							t.Fatal(err)
						}
						if resp.StatusCode != http.StatusOK || resp.Header.Get(echoHeaderBackend) != "echo" {
							t.Fatalf("mode %s: %s: status %d from %s, want 200 from the echo server (body %q)",
								tc.mode, addr, resp.StatusCode, who(resp.Header.Get(echoHeaderBackend)), body)
						}
						e := decodeEcho(t, addr, body)
						forwarded := fmt.Sprintf(`for=%s;host=%s;proto=%s`, c.ip, host, proto)
						if c.ip == "::1" {
							forwarded = fmt.Sprintf(`for="[::1]";host=%s;proto=%s`, host, proto)
						}
						if got := e.Header.Get("X-Forwarded-For"); got != c.ip {
							t.Errorf("the backend received X-Forwarded-For %q, want %q", got, c.ip)
						}
						if got := e.Header.Get("Forwarded"); got != forwarded {
							t.Errorf("the backend received Forwarded %q, want %q", got, forwarded)
						}
					})
				}
			}
		})
	}
}

// TestIPv6ProxyProtocol: with ROUTER_IP_V4_V6_MODE=v4v6 and ROUTER_USE_PROXY_PROTOCOL=true both
// listeners of each public port expect a PROXY header, and the client address it names — IPv6 or
// IPv4, whatever the family of the connection that carries it — is the one the backend sees, on the
// HTTP port and through public_ssl to the TLS-terminating frontend.
func TestIPv6ProxyProtocol(t *testing.T) {
	requireIPv6Loopback(t)
	f := newFixture(t)
	echo := startEcho(t, "127.0.0.2", "echo", nil)
	f.m.ServiceAt("v6", "echo", echo)
	f.m.Route("v6", "web", "www.v6.example.com", "", "echo")
	crt, key := f.ca.Issue(t, "secure.v6.example.com")
	f.m.Route("v6", "secure", "secure.v6.example.com", "", "echo", testbed.Edge(crt, key))
	opts := envOptions(t, map[string]string{"ROUTER_IP_V4_V6_MODE": "v4v6", "ROUTER_USE_PROXY_PROTOCOL": "true"})
	opts.BindAddress = ""
	opts.HTTPPort, opts.HTTPSPort = dualStackPorts(t)
	r := f.startRouterOpts(t, opts)

	v6src := netip.MustParseAddrPort("[2001:db8::7]:40000")
	v6dst := netip.MustParseAddrPort("[2001:db8::1]:8443")
	v4src := netip.MustParseAddrPort("192.0.2.44:40001")
	v4dst := netip.MustParseAddrPort("198.51.100.1:8080")
	for _, tc := range []struct {
		name     string
		via      string // the address the client connects from and to
		https    bool
		header   []byte
		src, dst netip.AddrPort
	}{
		{"v1 TCP6 over IPv6 http", "::1", false, proxyV1(v6src, v6dst), v6src, v6dst},
		{"v2 TCP6 over IPv6 https", "::1", true, proxyV2(v6src, v6dst), v6src, v6dst},
		{"v2 TCP6 over IPv4 http", "127.0.0.1", false, proxyV2(v6src, v6dst), v6src, v6dst},
		{"v1 TCP4 over IPv6 https", "::1", true, proxyV1(v4src, v4dst), v4src, v4dst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, port, proto := "www.v6.example.com", r.Options.HTTPPort, "http"
			var cfg *tls.Config
			if tc.https {
				host, port, proto = "secure.v6.example.com", r.Options.HTTPSPort, "https"
				cfg = f.tlsTo(host)
			}
			addr := net.JoinHostPort(tc.via, strconv.Itoa(port))
			raw, err := rawExchange(addr, tc.header, cfg, rawRequest(host, "/"))
			if err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			resp, body, err := parseRaw(raw)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d, want 200 (body %q)", addr, resp.StatusCode, body)
			}
			e := decodeEcho(t, tc.name, body)
			ip := tc.src.Addr().String()
			forwarded := fmt.Sprintf(`for=%s;host=%s;proto=%s`, ip, host, proto)
			if tc.src.Addr().Is6() {
				forwarded = fmt.Sprintf(`for="[%s]";host=%s;proto=%s`, ip, host, proto)
			}
			for name, want := range map[string]string{
				"X-Forwarded-For":  ip,
				"Forwarded":        forwarded,
				"X-Forwarded-Port": strconv.Itoa(int(tc.dst.Port())),
			} {
				if got := e.Header.Values(name); len(got) != 1 || got[0] != want {
					t.Errorf("the backend received %s %q, want %q", name, got, want)
				}
			}
		})
	}
	t.Run("no header over IPv6", func(t *testing.T) {
		addr := net.JoinHostPort("::1", strconv.Itoa(r.Options.HTTPPort))
		raw, err := rawExchange(addr, nil, nil, rawRequest("www.v6.example.com", "/"))
		if len(raw) != 0 {
			t.Errorf("HAProxy answered a connection without a PROXY header on %s: %q", addr, raw)
		}
		if err != nil && !isReset(err) {
			t.Errorf("%s without a PROXY header: %v; want the connection closed at once", addr, err)
		}
	})
}
