package parity

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of one request.
const (
	requestTimeout = 5 * time.Second
	maxBody        = 1 << 20
	// holdSleep is how long a held request keeps its connection busy; holdSettle how long the
	// request waits after opening them, for the router to count them.
	holdSleep  = "2s"
	holdSettle = 500 * time.Millisecond
	// pause is the time between two requests to a rate-limited Route: a connection the client has
	// closed leaves the router's concurrent-connection count only once the router has seen it close.
	pause = 30 * time.Millisecond
)

// observation is what one request brought back, before normalisation.
type observation struct {
	// err is set when no HTTP response came (a refused or closed connection, a failed handshake).
	err    error
	status int
	header http.Header
	// echo is the pod's echo of the request, nil when the pod did not answer (or the body is no echo).
	echo *testkit.EchoReply
	tls  *tls.ConnectionState
}

// Target is one router under test: its listeners on 127.0.0.1.
type Target struct {
	// Name is "stock" or "haroute".
	Name string
	// HTTPPort and HTTPSPort are its public ports.
	HTTPPort, HTTPSPort int
}

// port returns the target's port for the request's scheme.
func (t Target) port(https bool) int {
	if https {
		return t.HTTPSPort
	}
	return t.HTTPPort
}

// send sends one request with cookie (a Cookie header value, or "") and reads the whole answer.
func send(ctx context.Context, target Target, r Request, cookie, pathSuffix string) observation {
	return sendWrote(ctx, target, r, cookie, pathSuffix, func() {})
}

// sendWrote is send, calling wrote once the request is written to the router, or has failed
// before that.
func sendWrote(ctx context.Context, target Target, r Request, cookie, pathSuffix string, wrote func()) observation {
	once := sync.OnceFunc(wrote)
	defer once()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	conn, state, err := dial(ctx, target, r)
	if err != nil {
		return observation{err: err}
	}
	defer conn.Close()
	if r.HandshakeOnly {
		return observation{tls: state}
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline) // a closed connection fails the write below
	}
	req := newRequest(r, cookie, pathSuffix)
	if err := req.Write(conn); err != nil {
		return observation{err: fmt.Errorf("write request: %w", err), tls: state}
	}
	once()
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return observation{err: fmt.Errorf("read response: %w", err), tls: state}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return observation{err: fmt.Errorf("read body: %w", err), tls: state}
	}
	o := observation{status: resp.StatusCode, header: resp.Header, tls: state}
	var echo testkit.EchoReply
	if resp.Header.Get("Content-Type") == "application/json" && json.Unmarshal(body, &echo) == nil && echo.Backend != "" {
		o.echo = &echo
	}
	return o
}

// dial connects to the target's port for the request from its source address and, for https,
// completes the TLS handshake (the certificate is recorded, not verified).
func dial(ctx context.Context, target Target, r Request) (net.Conn, *tls.ConnectionState, error) {
	d := net.Dialer{}
	if r.Source != "" {
		ip := net.ParseIP(r.Source)
		if ip == nil {
			return nil, nil, fmt.Errorf("source %q is no IP address", r.Source)
		}
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	raw, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(target.port(r.HTTPS))))
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	if !r.HTTPS {
		return raw, nil, nil
	}
	alpn := r.ALPN
	if len(alpn) == 0 {
		alpn = []string{"http/1.1"}
	}
	conn := tls.Client(raw, &tls.Config{
		ServerName: r.sni(),
		// The certificate is what is compared (Answer.Cert); verifying it would only turn a
		// certificate difference into a handshake error.
		InsecureSkipVerify: true, //nolint:gosec // recorded and compared, not trusted
		NextProtos:         alpn,
		MinVersion:         tls.VersionTLS12,
	})
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, nil, fmt.Errorf("TLS handshake: %w", err)
	}
	state := conn.ConnectionState()
	return conn, &state, nil
}

// newRequest builds the HTTP/1.1 request: the target as written in the corpus (nothing is
// re-encoded), the Host header as written, the extra headers and the cookie.
func newRequest(r Request, cookie, pathSuffix string) *http.Request {
	target := r.path()
	if pathSuffix != "" {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + pathSuffix
	}
	req := &http.Request{
		Method:     http.MethodGet,
		URL:        &url.URL{Scheme: r.scheme(), Host: hostOnly(r.Host), Opaque: target},
		Proto:      "HTTP/1.1",
		ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{},
		Host:   r.Host,
	}
	for _, kv := range r.Header {
		req.Header.Add(kv[0], kv[1])
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	// Go's client sends its own User-Agent otherwise; a fixed one reads better in the echoes.
	req.Header.Set("User-Agent", "haroute-parity")
	return req
}

// Outcomes of a request that got no HTTP response.
const (
	// OutcomeClosed: the router closed the connection without an answer. Whether it did so with a
	// FIN or a reset depends on timing (did the request reach it before it closed?), so both are one.
	OutcomeClosed = "closed"
	// OutcomeTimeout: no answer within requestTimeout.
	OutcomeTimeout = "timeout"
	// OutcomeRefused: the connection was refused.
	OutcomeRefused = "refused"
	// OutcomeTLSFailed: the TLS handshake failed (for another reason than a closed connection).
	OutcomeTLSFailed = "tls-failed"
)

// outcome classifies an error of send.
func outcome(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return OutcomeRefused
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return OutcomeClosed
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return OutcomeTimeout
	case strings.Contains(err.Error(), "TLS handshake"):
		return OutcomeTLSFailed
	}
	return "error: " + err.Error()
}
