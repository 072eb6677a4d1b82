package traffic

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/render"
)

// Bounds of the raw exchanges of the router-option tests.
const (
	rawTimeout      = 5 * time.Second // one raw connection, from dial to the server's close
	maxRawResponse  = 1 << 20
	serverReadLimit = 5 * time.Second
	checkTimeout    = 60 * time.Second // haproxy -c
)

// envOptions returns the options FromEnv reads from env (so the real parsing of the OpenShift
// variables runs), with the test router's ports, bind address and limits of testbed.RouterOptions.
func envOptions(t *testing.T, env map[string]string) mapping.Options {
	t.Helper()
	o, err := mapping.FromEnv(func(name string) string { return env[name] })
	if err != nil {
		t.Fatalf("FromEnv(%v): %v", env, err)
	}
	base := testbed.RouterOptions(t)
	o.HTTPPort, o.HTTPSPort = base.HTTPPort, base.HTTPSPort
	o.BindAddress = base.BindAddress
	o.AllowLoopbackEndpoints = base.AllowLoopbackEndpoints
	o.AllowWildcardRoutes = base.AllowWildcardRoutes
	o.MaxConnections = base.MaxConnections
	return o
}

// startRouterOpts starts HAProxy for the fixture's manifests with opts and checks that every Route
// was admitted. (TestRouterOptionsHAProxyCheck checks the configurations for warnings.)
func (f *fixture) startRouterOpts(t *testing.T, opts mapping.Options) *testbed.StaticHAProxy {
	t.Helper()
	r := testbed.StartStaticHAProxy(t, f.m.Input(t), opts, f.ca.IssueBundle(t, defaultCertName), f.ca.Pool())
	r.RequireAdmitted(t)
	return r
}

// haproxyCheck runs haproxy -c on the running configuration of r and returns its warnings and
// alerts; it fails the test when HAProxy refuses the configuration.
func haproxyCheck(t *testing.T, r *testbed.StaticHAProxy) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, testkit.HAProxyBinary(), append([]string{"-c"}, render.ConfigArgs(r.Dir)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	var problems []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "[WARNING]") || strings.Contains(l, "[ALERT]") {
			problems = append(problems, strings.TrimSpace(l))
		}
	}
	return problems
}

// startServer serves handler over plain HTTP on ip:0 (a loopback address) until the test ends, and
// returns its address for Manifests.ServiceAt.
func startServer(t *testing.T, ip string, handler http.Handler) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("server on %s: %v", ip, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: serverReadLimit,
		// HAProxy's health checks connect and close without a request.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("server on %s: %v", ip, err)
		}
	})
	return l.Addr().(*net.TCPAddr).AddrPort()
}

// echoed is what an echo server answers: the request as it received it.
type echoed struct {
	Host   string      `json:"host"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
}

// echoHeaderBackend is the response header an echo server sets to its name.
const echoHeaderBackend = testkit.HeaderBackend

// startEcho starts an echo server named name on ip: it answers every request with 200, the
// response headers extra and X-Backend: name, and the JSON of an echoed request as body.
func startEcho(t *testing.T, ip, name string, extra http.Header) netip.AddrPort {
	t.Helper()
	return startServer(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range extra {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.Header().Set(echoHeaderBackend, name)
		w.Header().Set("Content-Type", "application/octet-stream")
		_ = json.NewEncoder(w).Encode(echoed{Host: r.Host, Path: r.URL.Path, Header: r.Header})
	}))
}

// decodeEcho parses an echo server's body, failing the test when it is not one.
func decodeEcho(t *testing.T, what, body string) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("%s: the answer is not an echo server's (%v): %q", what, err, body)
	}
	return e
}

// rawRequest is an HTTP/1.1 GET for path with Host host, extra header lines ("Name: value") and
// Connection: close, so that the server closes after its response.
func rawRequest(host, path string, lines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", path, host)
	for _, l := range lines {
		b.WriteString(l + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	return b.String()
}

// rawExchange dials addr over TCP and runs exchange on the connection.
func rawExchange(addr string, prefix []byte, tlsConfig *tls.Config, request string) ([]byte, error) {
	raw, err := net.DialTimeout("tcp", addr, rawTimeout)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	return exchange(raw, prefix, tlsConfig, request)
}

// exchange writes prefix (e.g. a PROXY protocol header) on raw, then — over TLS when tlsConfig is
// set — request, and returns every byte the server sends until it closes the connection. A reset
// after some bytes counts as a close; the whole exchange is bounded by rawTimeout, after which an
// error says the server kept the connection open.
func exchange(raw net.Conn, prefix []byte, tlsConfig *tls.Config, request string) ([]byte, error) {
	if err := raw.SetDeadline(time.Now().Add(rawTimeout)); err != nil {
		return nil, err
	}
	if len(prefix) > 0 {
		if _, err := raw.Write(prefix); err != nil {
			return nil, fmt.Errorf("write the prefix: %w", err)
		}
	}
	conn := raw
	if tlsConfig != nil {
		tc := tls.Client(raw, tlsConfig)
		if err := tc.Handshake(); err != nil {
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		conn = tc
	}
	if _, err := io.WriteString(conn, request); err != nil {
		return nil, fmt.Errorf("write the request: %w", err)
	}
	got, err := io.ReadAll(io.LimitReader(conn, maxRawResponse))
	var ne net.Error
	switch {
	case err == nil:
		return got, nil
	case errors.As(err, &ne) && ne.Timeout():
		return got, fmt.Errorf("the server did not close the connection within %v (%d bytes read)", rawTimeout, len(got))
	case len(got) > 0:
		return got, nil
	default:
		return got, err
	}
}

// parseRaw parses a raw HTTP/1.1 response (its body read whole).
func parseRaw(raw []byte) (*http.Response, string, error) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		return nil, "", fmt.Errorf("parse the response %q: %w", raw, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", fmt.Errorf("read the body of %q: %w", raw, err)
	}
	return resp, string(body), nil
}

// rawHeaderNames returns the header names of a raw HTTP/1.1 response exactly as sent on the wire.
func rawHeaderNames(raw []byte) []string {
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	lines := strings.Split(string(head), "\r\n")
	var names []string
	for _, l := range lines[1:] {
		if name, _, ok := strings.Cut(l, ":"); ok {
			names = append(names, name)
		}
	}
	return names
}

// tlsTo is the client TLS configuration for an https request to host through the test router.
func (f *fixture) tlsTo(host string) *tls.Config {
	return &tls.Config{ServerName: host, RootCAs: f.ca.Pool(), MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
}

// isReset reports whether err is a connection reset by the peer.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
