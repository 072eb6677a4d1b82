package traffic

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
)

// startSilentTLS starts a TLS server on ip:0 that completes the handshake with the certificate and
// then neither writes nor closes until its client does; it is stopped on cleanup.
func startSilentTLS(t *testing.T, ip string, certPEM, keyPEM []byte) netip.AddrPort {
	t.Helper()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", net.JoinHostPort(ip, "0"), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	return testkit.ServeConns(t, l, func(c net.Conn) {
		defer c.Close()
		_ = c.(*tls.Conn).Handshake()
		_, _ = io.Copy(io.Discard, c) // until the client (HAProxy) closes
	})
}

// TestPassthroughTimeout: on a passthrough Route the timeout annotation is the tunnel timeout, as
// in OpenShift (when timeout-tunnel is not set): a connection idle in both directions is closed
// after it, where a Route without the annotation keeps the router's tunnel timeout (1h here).
func TestPassthroughTimeout(t *testing.T) {
	f := newFixture(t)
	const idle = time.Second
	for _, name := range []string{"short", "default"} {
		host := name + ".pass.example.com"
		crt, key := f.ca.Issue(t, host)
		f.m.ServiceAt("pt", name, startSilentTLS(t, "127.0.0.2", crt, key))
		opts := []testbed.RouteOption{testbed.Passthrough()}
		if name == "short" {
			opts = append(opts, testbed.Annotate(mapping.AnnotationTimeout, idle.String()))
		}
		f.m.Route("pt", name, host, "", name, opts...)
	}
	r := f.start(t)

	idleFor := func(host string, limit time.Duration) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), tlsTimeout)
		defer cancel()
		conn, err := dialTLS(ctx, r.Options.HTTPSPort, f.tlsTo(host))
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		start := time.Now()
		if err := conn.SetReadDeadline(start.Add(limit)); err != nil {
			return 0, err
		}
		_, err = conn.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return limit, nil
		}
		return time.Since(start), nil
	}
	// The router closes the idle connection after the annotation's timeout...
	if got, err := idleFor("short.pass.example.com", 10*idle); err != nil {
		t.Fatal(err)
	} else if got < idle/2 || got >= 10*idle {
		t.Errorf("with timeout %v the idle passthrough connection lasted %v, want it closed after about %v", idle, got, idle)
	}
	// ... and keeps the other one open for far longer.
	if got, err := idleFor("default.pass.example.com", 3*idle); err != nil {
		t.Fatal(err)
	} else if got < 3*idle {
		t.Errorf("without the annotation the idle passthrough connection was closed after %v, want it open for the router's tunnel timeout", got)
	}
}
