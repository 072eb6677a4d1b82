package traffic

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
)

// proxyV1 is a PROXY protocol version 1 header for a TCP connection from src to dst (both IPv4 or
// both IPv6).
func proxyV1(src, dst netip.AddrPort) []byte {
	family := "TCP4"
	if src.Addr().Is6() {
		family = "TCP6"
	}
	return []byte(fmt.Sprintf("PROXY %s %s %s %d %d\r\n", family, src.Addr(), dst.Addr(), src.Port(), dst.Port()))
}

// proxyV2Signature starts every PROXY protocol version 2 header.
var proxyV2Signature = [12]byte{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A}

// proxyV2 is a PROXY protocol version 2 header, command PROXY, for a TCP connection from src to dst
// (both IPv4 or both IPv6), built as the specification lays it out: the signature, version 2 and
// command PROXY (0x21), the family and STREAM (0x11 for AF_INET, 0x21 for AF_INET6), the length of
// the addresses (12 or 36, big-endian), then the source and destination addresses and the source and
// destination ports.
func proxyV2(src, dst netip.AddrPort) []byte {
	b := append([]byte(nil), proxyV2Signature[:]...)
	if src.Addr().Is6() {
		b = append(b, 0x21, 0x21)
		b = binary.BigEndian.AppendUint16(b, 36)
	} else {
		b = append(b, 0x21, 0x11)
		b = binary.BigEndian.AppendUint16(b, 12)
	}
	b = append(b, src.Addr().AsSlice()...)
	b = append(b, dst.Addr().AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, src.Port())
	b = binary.BigEndian.AppendUint16(b, dst.Port())
	return b
}

// TestProxyProtocol: with ROUTER_USE_PROXY_PROTOCOL=true the public listeners take the client
// address from a PROXY protocol header (version 1 or 2) that precedes the connection's data, on the
// HTTP port and on the HTTPS port (where public_ssl hands the address on to the TLS-terminating
// frontend): the backend's X-Forwarded-For, Forwarded and X-Forwarded-Port carry the header's source
// address and destination port. A connection without the header is closed without an answer.
func TestProxyProtocol(t *testing.T) {
	f := newFixture(t)
	echo := startEcho(t, "127.0.0.2", "echo", nil)
	f.m.ServiceAt("proxy", "echo", echo)
	f.m.Route("proxy", "web", "www.proxy.example.com", "", "echo")
	crt, key := f.ca.Issue(t, "secure.proxy.example.com")
	f.m.Route("proxy", "secure", "secure.proxy.example.com", "", "echo", testbed.Edge(crt, key))
	r := f.startRouterOpts(t, envOptions(t, map[string]string{"ROUTER_USE_PROXY_PROTOCOL": "true"}))
	httpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPPort))
	httpsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPSPort))

	src := netip.MustParseAddrPort("192.0.2.10:56324")
	for _, tc := range []struct {
		name    string
		header  func(src, dst netip.AddrPort) []byte
		https   bool
		src     netip.AddrPort
		dstPort uint16
	}{
		{"v1 http", proxyV1, false, src, 8080},
		{"v2 http", proxyV2, false, netip.MustParseAddrPort("198.51.100.7:40000"), 8081},
		{"v1 https", proxyV1, true, netip.MustParseAddrPort("203.0.113.5:1234"), 8443},
		{"v2 https", proxyV2, true, netip.MustParseAddrPort("192.0.2.99:65000"), 9443},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), tc.dstPort)
			host, addr, proto := "www.proxy.example.com", httpAddr, "http"
			var tlsConfig *tls.Config
			if tc.https {
				host, addr, proto = "secure.proxy.example.com", httpsAddr, "https"
				tlsConfig = f.tlsTo(host)
			}
			raw, err := rawExchange(addr, tc.header(tc.src, dst), tlsConfig, rawRequest(host, "/p"))
			if err != nil {
				t.Fatalf("%s request after a PROXY header: %v", proto, err)
			}
			resp, body, err := parseRaw(raw)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get(echoHeaderBackend) != "echo" {
				t.Fatalf("%s request after a PROXY header: status %d from %s, want 200 from the echo server (body %q)",
					proto, resp.StatusCode, who(resp.Header.Get(echoHeaderBackend)), body)
			}
			e := decodeEcho(t, tc.name, body)
			ip := tc.src.Addr().String()
			want := map[string]string{
				"X-Forwarded-For":   ip,
				"Forwarded":         fmt.Sprintf(`for=%s;host=%s;proto=%s`, ip, host, proto),
				"X-Forwarded-Port":  strconv.Itoa(int(tc.dstPort)),
				"X-Forwarded-Proto": proto,
			}
			for name, w := range want {
				if got := e.Header.Values(name); len(got) != 1 || got[0] != w {
					t.Errorf("the backend received %s %q, want %q (the PROXY header's)", name, got, w)
				}
			}
		})
	}

	// Without a PROXY header HAProxy drops the connection as soon as the first bytes do not parse
	// as one: no answer, and no waiting for a timeout. On the HTTPS port those bytes are a TLS
	// ClientHello, and the handshake fails.
	t.Run("http without header", func(t *testing.T) {
		raw, err := rawExchange(httpAddr, nil, nil, rawRequest("www.proxy.example.com", "/"))
		if len(raw) != 0 {
			t.Errorf("HAProxy answered a connection without a PROXY header: %q", raw)
		}
		if err != nil && !isReset(err) {
			t.Errorf("a connection without a PROXY header: %v; want it closed at once", err)
		}
	})
	t.Run("https without header", func(t *testing.T) {
		raw, err := rawExchange(httpsAddr, nil, f.tlsTo("secure.proxy.example.com"), rawRequest("secure.proxy.example.com", "/"))
		if len(raw) != 0 || err == nil {
			t.Fatalf("a TLS connection without a PROXY header was served: %q", raw)
		}
		var ne net.Error
		if !strings.Contains(err.Error(), "TLS handshake") || (errors.As(err, &ne) && ne.Timeout()) {
			t.Errorf("a TLS connection without a PROXY header: %v; want the handshake to fail at once", err)
		}
	})

	// The real client address is never used: a PROXY header naming 127.0.0.1 would have matched it.
	t.Run("client address is the header's", func(t *testing.T) {
		src := netip.MustParseAddrPort("192.0.2.200:5555")
		raw, err := rawExchange(httpAddr, proxyV1(src, netip.MustParseAddrPort("10.0.0.1:80")), nil,
			rawRequest("www.proxy.example.com", "/", "X-Forwarded-For: 203.0.113.1"))
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
		// The default policy appends the client address to what the client sent.
		if got := decodeEcho(t, "append", body).Header.Values("X-Forwarded-For"); len(got) != 2 || got[0] != "203.0.113.1" || got[1] != "192.0.2.200" {
			t.Errorf("the backend received X-Forwarded-For %q, want [203.0.113.1 192.0.2.200]", got)
		}
	})
}
