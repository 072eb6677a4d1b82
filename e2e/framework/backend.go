//go:build e2e

package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
)

// Environment of a backend process: the test binary re-executed inside a network namespace. One
// process serves one or more addresses (comma-separated, with as many comma-separated names).
const (
	envBackendAddr = "HAROUTE_E2E_BACKEND_ADDR"
	envBackendName = "HAROUTE_E2E_BACKEND_NAME"
	// envBackendTLS is "certfile,keyfile": the backend serves TLS with that key pair.
	envBackendTLS     = "HAROUTE_E2E_BACKEND_TLS"
	backendReadHeader = 10 * time.Second
)

// ServeBackendIfAsked must be called first in TestMain: when the process was started as a backend it
// serves until SIGTERM and returns true with the exit code; otherwise it returns false at once.
func ServeBackendIfAsked() (bool, int) {
	addrs := os.Getenv(envBackendAddr)
	if addrs == "" {
		return false, 0
	}
	if err := serveBackends(strings.Split(addrs, ","), strings.Split(os.Getenv(envBackendName), ","), os.Getenv(envBackendTLS)); err != nil {
		fmt.Fprintln(os.Stderr, "backend:", err)
		return true, 1
	}
	return true, 0
}

// serveBackends serves every address until SIGTERM; each answers every request with 200,
// X-Backend: its name and the body "<name> <method> <path>\n".
func serveBackends(addrs, names []string, tlsFiles string) error {
	if len(addrs) != len(names) {
		return fmt.Errorf("%d addresses but %d names", len(addrs), len(names))
	}
	var tlsConfig *tls.Config
	if tlsFiles != "" {
		certFile, keyFile, _ := strings.Cut(tlsFiles, ",")
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("backend key pair: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	done := make(chan error, len(addrs))
	var servers []*http.Server
	for i, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen %s: %w", addr, err)
		}
		if tlsConfig != nil {
			l = tls.NewListener(l, tlsConfig)
		}
		name := names[i]
		srv := &http.Server{
			ReadHeaderTimeout: backendReadHeader,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(testbed.HeaderBackend, name)
				_, _ = fmt.Fprintf(w, "%s %s %s\n", name, r.Method, r.URL.Path)
			}),
		}
		servers = append(servers, srv)
		go func() { done <- srv.Serve(l) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-done:
		err = fmt.Errorf("serve: %w", err)
	}
	for _, srv := range servers {
		_ = srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
