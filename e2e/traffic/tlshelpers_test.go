package traffic

import (
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
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/operatorenv"
	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// Bounds of the TLS tests' exchanges.
const (
	tlsTimeout     = 5 * time.Second  // one dial, handshake and request
	versionTimeout = 10 * time.Second // haproxy -vv
)

// operatorDir holds the router environments the ingress operator renders (see its README).
const operatorDir = "../cluster/testdata/operator"

// operatorEnv returns the plain env of one captured operator variant (e.g. "old-tls").
func operatorEnv(t *testing.T, variant string) map[string]string {
	t.Helper()
	all, err := operatorenv.Load(operatorDir)
	if err != nil {
		t.Fatalf("load operator variants: %v", err)
	}
	d, ok := all[variant]
	if !ok {
		t.Fatalf("operator variant %q not found in %s", variant, operatorDir)
	}
	return d.Env()
}

// haproxyBuild is what `haproxy -vv` says about the binary under test.
type haproxyBuild struct {
	Version socket.Version
	// OpenSSLMajor and OpenSSLMinor are the version of the TLS library HAProxy runs on.
	OpenSSLMajor, OpenSSLMinor int
	OpenSSL                    string // as HAProxy prints it, e.g. "OpenSSL 3.0.19 27 Jan 2026"
}

var (
	haproxyVersionRE = regexp.MustCompile(`HAProxy version (\S+)`)
	runningSSLRE     = regexp.MustCompile(`Running on (?:OpenSSL|SSL library) version : (OpenSSL (\d+)\.(\d+)\S*.*)`)
)

// buildOf runs `haproxy -vv` on the binary the tests run.
func buildOf(t *testing.T) haproxyBuild {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, testkit.HAProxyBinary(), "-vv").CombinedOutput()
	if err != nil {
		t.Fatalf("%s -vv: %v\n%s", testkit.HAProxyBinary(), err, out)
	}
	m := haproxyVersionRE.FindSubmatch(out)
	s := runningSSLRE.FindSubmatch(out)
	if m == nil || s == nil {
		t.Fatalf("%s -vv: no HAProxy version or no OpenSSL runtime version in:\n%s", testkit.HAProxyBinary(), out)
	}
	v, err := socket.ParseVersion(string(m[1]))
	if err != nil {
		t.Fatalf("%s -vv: %v", testkit.HAProxyBinary(), err)
	}
	major, _ := strconv.Atoi(string(s[2]))
	minor, _ := strconv.Atoi(string(s[3]))
	return haproxyBuild{Version: v, OpenSSLMajor: major, OpenSSLMinor: minor, OpenSSL: string(s[1])}
}

// openSSLAtLeast reports whether HAProxy runs on OpenSSL major.minor or newer.
func (b haproxyBuild) openSSLAtLeast(major, minor int) bool {
	return b.OpenSSLMajor > major || b.OpenSSLMajor == major && b.OpenSSLMinor >= minor
}

func (b haproxyBuild) String() string {
	return fmt.Sprintf("HAProxy %s on %s", b.Version, b.OpenSSL)
}

// startWith starts HAProxy on the fixture's manifests with opts, the router's TLS files listener
// and defaultCert (certificate and key, PEM) as the default certificate, and checks that every
// Route was admitted.
func (f *fixture) startWith(t *testing.T, opts mapping.Options, listener model.ListenerFiles, defaultCert []byte) *testbed.StaticHAProxy {
	t.Helper()
	in := f.m.Input(t)
	in.Listener = listener
	r := testbed.StartStaticHAProxy(t, in, opts, defaultCert, f.ca.Pool())
	r.RequireAdmitted(t)
	return r
}

// dialTLS connects to 127.0.0.1:port and handshakes with cfg.
func dialTLS(ctx context.Context, port int, cfg *tls.Config) (*tls.Conn, error) {
	d := net.Dialer{Timeout: tlsTimeout}
	raw, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}

// handshake dials 127.0.0.1:port, handshakes with cfg and closes the connection.
func handshake(port int, cfg *tls.Config) (tls.ConnectionState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tlsTimeout)
	defer cancel()
	conn, err := dialTLS(ctx, port, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.ConnectionState(), nil
}

// echoReply is what an echo backend answers: its name, the HTTP major version of the request it
// received and the request's headers.
type echoReply struct {
	Backend    string      `json:"backend"`
	ProtoMajor int         `json:"protoMajor"`
	Header     http.Header `json:"header"`
}

// startEchoBackend starts an HTTP server on ip:0 (a loopback address) that answers every request
// with an echoReply in JSON and the X-Backend header. With cert it serves TLS and offers h2 and
// http/1.1 (as Go's servers do by default). It is stopped on cleanup.
func startEchoBackend(t *testing.T, ip, name string, cert *tls.Certificate) netip.AddrPort {
	t.Helper()
	addr, err := netip.ParseAddr(ip)
	if err != nil || !addr.IsLoopback() {
		t.Fatalf("echo backend %s: %q is not a loopback address", name, ip)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("echo backend %s: %v", name, err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(testkit.HeaderBackend, name)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(echoReply{Backend: name, ProtoMajor: r.ProtoMajor, Header: r.Header})
		}),
		ReadHeaderTimeout: tlsTimeout,
		ErrorLog:          log.New(io.Discard, "", 0), // HAProxy's health checks connect and close
	}
	done := make(chan error, 1)
	go func() {
		if cert == nil {
			done <- srv.Serve(l)
			return
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
		done <- srv.ServeTLS(l, "", "")
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("echo backend %s: %v", name, err)
		}
	})
	return netip.AddrPortFrom(addr, uint16(l.Addr().(*net.TCPAddr).Port))
}

// echoResult is one request sent through HAProxy to an echo backend.
type echoResult struct {
	Status     int
	ProtoMajor int                  // of the response HAProxy sent the client
	TLS        *tls.ConnectionState // of the client's connection to HAProxy
	Reply      *echoReply           // nil when HAProxy answered itself
	Body       string
}

// getOver sends GET https://host/path to HAProxy's port over a new connection made with cfg (SNI,
// ALPN and client certificate are cfg's), speaking h2 when HAProxy selects it, and decodes the echo
// backend's reply.
func getOver(port int, cfg *tls.Config, host, path string, header http.Header) (*echoResult, error) {
	tr := &http.Transport{
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialTLS(ctx, port, cfg.Clone())
		},
		ForceAttemptHTTP2:  true,
		DisableKeepAlives:  true,
		DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: tlsTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	req, err := http.NewRequest(http.MethodGet, "https://"+host+path, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	res := &echoResult{Status: resp.StatusCode, ProtoMajor: resp.ProtoMajor, TLS: resp.TLS, Body: string(body)}
	if resp.Header.Get(testkit.HeaderBackend) != "" {
		var r echoReply
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("decode the echo backend's reply %q: %w", body, err)
		}
		res.Reply = &r
	}
	return res, nil
}
