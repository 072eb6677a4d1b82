package testkit

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Response headers every backend sets.
const (
	// HeaderBackend carries the backend's name.
	HeaderBackend = "X-Backend"
	// HeaderSNI carries the TLS server name a TLS backend was asked for ("" over plain HTTP).
	HeaderSNI = "X-Backend-SNI"
	// HeaderForwarded carries the forwarded headers the backend received (see ForwardedSummary).
	HeaderForwarded = "X-Backend-Forwarded"
	// HeaderReceived carries the request headers named X-Hdr-* the backend received (see
	// HeaderSummary): what header actions left of them.
	HeaderReceived = "X-Backend-Headers"
	// HeaderOrigin is a response header every backend sets (to "Origin"), for response header
	// actions to delete, replace or read.
	HeaderOrigin = "X-Hdr-Origin"
)

// backendReadHeaderTimeout bounds how long a backend waits for a request's headers.
const backendReadHeaderTimeout = 5 * time.Second

// HeaderPrefix starts the names of the headers HeaderSummary describes.
const HeaderPrefix = "X-Hdr-"

const backendIdleTimeout = 30 * time.Second

// Backend is an HTTP (or HTTPS) server on a loopback address that answers every request with status
// 200, header X-Backend: <name> (and HeaderSNI, HeaderForwarded, HeaderReceived, HeaderOrigin), and
// the body
//
//	<name> <method> <path>
//	<X-Forwarded-Proto received>
//
// where path is the request path exactly as received (so a rewrite is visible).
type Backend struct {
	Name string
	IP   string
	Port int
	// TLS is true for a backend started with StartTLSBackend.
	TLS bool

	srv      *http.Server
	served   chan struct{} // closed when Serve has returned
	serveErr error         // Serve's unexpected error, valid once served is closed
	requests atomic.Int64
	conns    atomic.Int64
	once     sync.Once
}

// Addr returns "ip:port" (IPv6 in brackets).
func (b *Backend) Addr() string { return net.JoinHostPort(b.IP, strconv.Itoa(b.Port)) }

// AddrPort returns the backend's address and port.
func (b *Backend) AddrPort() netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr(b.IP), uint16(b.Port))
}

// Requests returns how many requests the backend has answered.
func (b *Backend) Requests() int64 { return b.requests.Load() }

// Conns returns how many connections the backend has accepted (HAProxy's TCP health checks included).
func (b *Backend) Conns() int64 { return b.conns.Load() }

// Close stops the backend (idempotent; also done on cleanup).
func (b *Backend) Close() {
	b.once.Do(func() {
		_ = b.srv.Close()
		<-b.served
	})
}

// StartHTTPBackend starts a plain HTTP backend named name on ip:0; ip must be a loopback address.
func StartHTTPBackend(t testing.TB, ip, name string) *Backend {
	t.Helper()
	return startBackend(t, ip, 0, name, nil, nil)
}

// StartTLSBackend starts the same backend over TLS with the given certificate and key.
func StartTLSBackend(t testing.TB, ip, name string, certPEM, keyPEM []byte) *Backend {
	t.Helper()
	kp := KeyPair(t, certPEM, keyPEM)
	return startBackend(t, ip, 0, name, backendTLS(kp), nil)
}

// backendTLS is the TLS configuration of a backend serving kp: HTTP/1.1 only.
func backendTLS(kp tls.Certificate) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{kp},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}
}

// startBackend starts a backend named name on ip:port (0: a free port), over TLS when tlsConfig is
// set, answering with handler (nil: the backend's own answer, serveHTTP).
func startBackend(t testing.TB, ip string, port int, name string, tlsConfig *tls.Config, handler http.Handler) *Backend {
	t.Helper()
	addr, err := netip.ParseAddr(ip)
	if err != nil || !addr.IsLoopback() {
		t.Fatalf("testkit: backend %s: %q is not a loopback address", name, ip)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(addr.String(), strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("testkit: backend %s: listen on %s: %v", name, net.JoinHostPort(ip, strconv.Itoa(port)), err)
	}
	b := &Backend{
		Name:   name,
		IP:     addr.String(),
		Port:   l.Addr().(*net.TCPAddr).Port,
		TLS:    tlsConfig != nil,
		served: make(chan struct{}),
	}
	serve := http.Handler(http.HandlerFunc(b.serveHTTP))
	if handler != nil {
		serve = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b.requests.Add(1)
			handler.ServeHTTP(w, r)
		})
	}
	b.srv = &http.Server{
		Handler:           serve,
		ReadHeaderTimeout: backendReadHeaderTimeout,
		IdleTimeout:       backendIdleTimeout,
		// HAProxy's TCP health checks connect and close without a request or a handshake; the
		// server would log each one.
		ErrorLog: log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, state http.ConnState) {
			if state == http.StateNew {
				b.conns.Add(1)
			}
		},
	}
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
	}
	go func() {
		defer close(b.served)
		if err := b.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.serveErr = err
		}
	}()
	t.Cleanup(func() {
		b.Close()
		if b.serveErr != nil {
			t.Errorf("testkit: backend %s: serve: %v", name, b.serveErr)
		}
	})
	return b
}

func (b *Backend) serveHTTP(w http.ResponseWriter, r *http.Request) {
	b.requests.Add(1)
	path, _, _ := strings.Cut(r.RequestURI, "?")
	w.Header().Set(HeaderBackend, b.Name)
	if r.TLS != nil {
		w.Header().Set(HeaderSNI, r.TLS.ServerName)
	}
	w.Header().Set(HeaderForwarded, ForwardedSummary(r.Header))
	w.Header().Set(HeaderReceived, HeaderSummary(r.Header))
	w.Header().Set(HeaderOrigin, "Origin")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%s %s %s\n%s\n", b.Name, r.Method, path, r.Header.Get("X-Forwarded-Proto"))
}

// forwardedNames are the request headers a router's forwarded-headers policy writes.
var forwardedNames = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Port", "X-Forwarded-Proto", "X-Forwarded-Proto-Version"}

// ForwardedSummary describes the forwarded headers of a request, in a form that is the same for
// two routers listening on different ports: "Name=value|value;..." in forwardedNames order, every
// header line as received, X-Forwarded-Port values written as "port".
func ForwardedSummary(h http.Header) string {
	var b strings.Builder
	for _, name := range forwardedNames {
		vs := h.Values(name)
		if len(vs) == 0 {
			continue
		}
		if name == "X-Forwarded-Port" {
			vs = slices.Repeat([]string{"port"}, len(vs))
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(name + "=" + strings.Join(vs, "|"))
	}
	return b.String()
}

// HeaderSummary describes the headers of h named HeaderPrefix*: "Name=value|value;..." in name order,
// every header line as received (query-escaped, so that a value's own separators stay apart).
func HeaderSummary(h http.Header) string {
	var names []string
	for name := range h {
		if strings.HasPrefix(name, HeaderPrefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		vs := make([]string, len(h[name]))
		for i, v := range h[name] {
			vs[i] = url.QueryEscape(v)
		}
		b.WriteString(name + "=" + strings.Join(vs, "|"))
	}
	return b.String()
}

// Addrs returns the backends' "ip:port", in order.
func Addrs(bs ...*Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Addr()
	}
	return out
}

// Names returns the backends' names, in order.
func Names(bs ...*Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}
