//go:build e2e

package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Clients of the operator-environment scenarios: they reach the router's public ports on 127.0.0.1
// or [::1], with a PROXY protocol header first when the router wants one, a client certificate when
// mutual TLS is required, and TLS settings of their own; each request has a connection of its own, so
// that every TLS check sees the certificate and protocol negotiated now.

// opClientTimeout bounds one exchange of these clients.
const opClientTimeout = 5 * time.Second

// endpoint is where and how clients reach one router.
type endpoint struct {
	// host is the address of the public listeners: "127.0.0.1" or "::1".
	host                string
	httpPort, httpsPort int
	// proxySrc, when set, makes every connection start with a PROXY protocol v1 header naming this
	// client address (ROUTER_USE_PROXY_PROTOCOL).
	proxySrc string
	// cert is the client certificate sent when HAProxy asks for one (nil: none).
	cert *tls.Certificate
}

// opRequest is one request: url's host is the Host header and, for https, the SNI.
type opRequest struct {
	url    string
	header http.Header
	// tls adjusts the client's TLS configuration (versions, suites, groups, ALPN, certificate).
	tls func(*tls.Config)
	// noProxy sends no PROXY header even when the router wants one.
	noProxy bool
}

// opReply is what a request got.
type opReply struct {
	status int
	header http.Header
	body   []byte
	tls    *tls.ConnectionState
}

// backend returns the X-Backend header: the pod that answered ("" for HAProxy itself).
func (r *opReply) backend() string { return r.header.Get(testkit.HeaderBackend) }

// leaf returns the certificate the server presented, or nil.
func (r *opReply) leaf() *x509.Certificate {
	if r.tls == nil || len(r.tls.PeerCertificates) == 0 {
		return nil
	}
	return r.tls.PeerCertificates[0]
}

// echo decodes the body as a backend's framework.Echo.
func (r *opReply) echo() (framework.Echo, error) {
	var e framework.Echo
	if err := json.Unmarshal(r.body, &e); err != nil {
		return e, fmt.Errorf("status %d from %q: the body is no echo (%v): %.300q", r.status, r.backend(), err, r.body)
	}
	return e, nil
}

// dial connects to port and sends the PROXY header unless noProxy.
func (e endpoint) dial(ctx context.Context, port int, noProxy bool) (net.Conn, error) {
	d := net.Dialer{Timeout: opClientTimeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(e.host, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	if e.proxySrc == "" || noProxy {
		return conn, nil
	}
	fam, dst := "TCP4", "127.0.0.1"
	if strings.Contains(e.proxySrc, ":") {
		fam, dst = "TCP6", "::1"
	}
	local := conn.LocalAddr().(*net.TCPAddr)
	hdr := fmt.Sprintf("PROXY %s %s %s %d %d\r\n", fam, e.proxySrc, dst, local.Port, port)
	if _, err := io.WriteString(conn, hdr); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("PROXY header: %w", err)
	}
	return conn, nil
}

// tlsConfig is the client's TLS configuration for serverName, adjusted by adjust: certificates are
// recorded, not verified (the checks verify what they need).
func (e endpoint) tlsConfig(serverName string, adjust func(*tls.Config)) *tls.Config {
	cfg := &tls.Config{ServerName: serverName, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"}}
	if e.cert != nil {
		cert := e.cert
		// Sent whatever CAs HAProxy names (Go would otherwise send none for a stranger's CA).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	if adjust != nil {
		adjust(cfg)
	}
	return cfg
}

// handshake opens a TLS connection to the HTTPS port with SNI serverName and returns what was
// negotiated.
func (e endpoint) handshake(serverName string, adjust func(*tls.Config)) (*tls.ConnectionState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opClientTimeout)
	defer cancel()
	raw, err := e.dial(ctx, e.httpsPort, false)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	conn := tls.Client(raw, e.tlsConfig(serverName, adjust))
	if err := conn.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	st := conn.ConnectionState()
	return &st, nil
}

// do sends one request on a new connection.
func (e endpoint) do(req opRequest) (*opReply, error) {
	u, err := url.Parse(req.url)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DisableKeepAlives:  true,
		DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return e.dial(ctx, e.httpPort, req.noProxy)
		},
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			raw, err := e.dial(ctx, e.httpsPort, req.noProxy)
			if err != nil {
				return nil, err
			}
			conn := tls.Client(raw, e.tlsConfig(u.Hostname(), req.tls))
			if err := conn.HandshakeContext(ctx); err != nil {
				_ = raw.Close()
				return nil, fmt.Errorf("TLS handshake with SNI %q: %w", u.Hostname(), err)
			}
			return conn, nil
		},
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: opClientTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	hreq, err := http.NewRequest(http.MethodGet, req.url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range req.header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read body: %w", req.url, err)
	}
	return &opReply{status: resp.StatusCode, header: resp.Header, body: body, tls: resp.TLS}, nil
}

// raw sends a GET of rawURL as bytes written by hand (Connection: close) and returns the response's
// bytes as they came, so that a check sees header names in the case HAProxy wrote them.
func (e endpoint) raw(rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opClientTimeout)
	defer cancel()
	port := e.httpPort
	if u.Scheme == "https" {
		port = e.httpsPort
	}
	conn, err := e.dial(ctx, port, false)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if u.Scheme == "https" {
		tc := tls.Client(conn, e.tlsConfig(u.Hostname(), nil))
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		conn = tc
	}
	if err := conn.SetDeadline(time.Now().Add(opClientTimeout)); err != nil {
		return nil, err
	}
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return nil, err
	}
	return io.ReadAll(conn)
}

// rawHeaderNames returns the header names of a raw HTTP response, as written.
func rawHeaderNames(raw []byte) []string {
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	var names []string
	s := bufio.NewScanner(bytes.NewReader(head))
	s.Scan() // the status line
	for s.Scan() {
		if name, _, ok := strings.Cut(s.Text(), ":"); ok {
			names = append(names, name)
		}
	}
	return names
}

// statsClient asks the stats port over HTTPS, trusting roots for serverName.
type statsClient struct {
	port       int
	serverName string
	roots      *x509.CertPool
}

// get sends GET path with basic credentials (user "" sends none) and returns the status, the body
// and the certificate the port presented.
func (s statsClient) get(path, user, password string) (int, string, *x509.Certificate, error) {
	tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{
		RootCAs: s.roots, ServerName: s.serverName, MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: opClientTimeout}
	req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(s.port)+path, nil)
	if err != nil {
		return 0, "", nil, err
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, "", nil, err
	}
	var leaf *x509.Certificate
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		leaf = resp.TLS.PeerCertificates[0]
	}
	return resp.StatusCode, string(body), leaf, nil
}

// metricSum returns the sum of every sample of metric in a Prometheus text exposition.
func metricSum(exposition, metric string) (float64, error) {
	sum := 0.0
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		sum += v
	}
	return sum, nil
}

// logReceiver collects the datagrams a syslog client sends it (UDP on loopback or a unix datagram
// socket, as HAProxy's `log` sends).
type logReceiver struct {
	conn net.PacketConn
	mu   sync.Mutex
	logs []string
}

// listenSyslog listens on network ("udp" or "unixgram") at addr until the test ends.
func listenSyslog(t *testing.T, network, addr string) *logReceiver {
	t.Helper()
	conn, err := net.ListenPacket(network, addr)
	if err != nil {
		t.Fatalf("syslog receiver on %s %s: %v", network, addr, err)
	}
	l := &logReceiver{conn: conn}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			l.mu.Lock()
			l.logs = append(l.logs, string(buf[:n]))
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = conn.Close()
		<-done
	})
	return l
}

// wait waits (bounded) until a datagram holds every one of parts, and returns it.
func (l *logReceiver) wait(parts ...string) (string, error) {
	var found string
	err := framework.Eventually(func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
	next:
		for _, line := range l.logs {
			for _, p := range parts {
				if !strings.Contains(line, p) {
					continue next
				}
			}
			found = line
			return nil
		}
		return fmt.Errorf("%d datagrams, none with all of %q", len(l.logs), parts)
	})
	return found, err
}
