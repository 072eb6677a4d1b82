package testkit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DefaultClientTimeout bounds one request of a Client.
const DefaultClientTimeout = 5 * time.Second

const (
	maxBody        = 1 << 20
	maxIdlePerHost = 64 // enough for the parallel clients of a benchmark
)

// Client sends HTTP and HTTPS requests to one HAProxy on 127.0.0.1, whatever the host in the URL: the
// URL's host (with its port, case and trailing dot) goes into the Host header unchanged, and for https
// its host name is the SNI and the name the certificate is verified for. Redirects are not followed.
// Connections are kept alive and reused per URL host.
type Client struct {
	// HTTPPort and HTTPSPort are HAProxy's public ports on 127.0.0.1.
	HTTPPort, HTTPSPort int

	roots     *x509.CertPool
	transport *http.Transport
	hc        *http.Client
}

// Response is what a Client request returned.
type Response struct {
	Status int
	// Backend is the X-Backend header (the Backend that answered; "" when HAProxy answered).
	Backend string
	Body    string
	Header  http.Header
	// TLS is the connection state of an https request (nil over http).
	TLS *tls.ConnectionState
}

// Leaf returns the certificate the server presented, or nil.
func (r *Response) Leaf() *x509.Certificate {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil
	}
	return r.TLS.PeerCertificates[0]
}

// NewClient returns a client for HAProxy's ports that trusts roots for https (nil: the certificate
// is not verified, but it is still recorded in Response.TLS).
func NewClient(t testing.TB, httpPort, httpsPort int, roots *x509.CertPool) *Client {
	t.Helper()
	c := &Client{HTTPPort: httpPort, HTTPSPort: httpsPort, roots: roots}
	dialer := &net.Dialer{Timeout: DefaultClientTimeout}
	c.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.HTTPPort)))
		},
		DialTLSContext:      c.dialTLS(dialer),
		MaxIdleConnsPerHost: maxIdlePerHost,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	c.hc = &http.Client{
		Transport: c.transport,
		Timeout:   DefaultClientTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// dialTLS connects to the https port and handshakes with the URL's host name as SNI.
func (c *Client) dialTLS(dialer *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		host = strings.TrimSuffix(host, ".")
		raw, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.HTTPSPort)))
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, &tls.Config{
			ServerName:         host,
			RootCAs:            c.roots,
			InsecureSkipVerify: c.roots == nil,
			MinVersion:         tls.VersionTLS12,
			NextProtos:         []string{"http/1.1"},
		})
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS handshake with SNI %q: %w", host, err)
		}
		return conn, nil
	}
}

// CloseIdleConnections closes kept-alive connections.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// Do sends one request. header may be nil; a "Host" entry in it replaces the URL's host in the Host
// header only (connections are pooled per URL host, so many Host values can share one URL host and
// its kept-alive connections).
func (c *Client) Do(method, url string, header http.Header) (*Response, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	return &Response{
		Status:  resp.StatusCode,
		Backend: resp.Header.Get(HeaderBackend),
		Body:    string(body),
		Header:  resp.Header,
		TLS:     resp.TLS,
	}, nil
}

// Fetch sends a GET and fails the test when no response arrives.
func (c *Client) Fetch(t testing.TB, url string) *Response {
	t.Helper()
	r, err := c.Do(http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return r
}

// Get sends a GET and returns the status, the answering backend ("" for HAProxy itself) and the body.
func (c *Client) Get(t testing.TB, url string) (status int, backend string, body string) {
	t.Helper()
	r := c.Fetch(t, url)
	return r.Status, r.Backend, r.Body
}
