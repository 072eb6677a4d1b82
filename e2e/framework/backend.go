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

// StreamPath is the path on which a backend answers with a response that does not end by itself:
// a line "<name> tick <n>" at once and then every StreamTick, until the client goes away, the
// backend stops or streamMax has passed. It holds a long-lived connection through the router, as a
// WebSocket or an event stream does.
const (
	StreamPath = "/stream"
	StreamTick = time.Second
	streamMax  = 30 * time.Minute
)

// backendHandler answers every request with 200, X-Backend: name and the body
// "<name> <method> <path>\n", and StreamPath with a stream of ticks.
func backendHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(testbed.HeaderBackend, name)
		if r.URL.Path == StreamPath {
			stream(w, r, name)
			return
		}
		_, _ = fmt.Fprintf(w, "%s %s %s\n", name, r.Method, r.URL.Path)
	})
}

// stream writes a tick line every StreamTick (bounded by streamMax) until the request's context ends
// or a write fails.
func stream(w http.ResponseWriter, r *http.Request, name string) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	tick := time.NewTicker(StreamTick)
	defer tick.Stop()
	end := time.After(streamMax)
	for n := 0; ; n++ {
		if _, err := fmt.Fprintf(w, "%s tick %d\n", name, n); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-end:
			return
		case <-tick.C:
		}
	}
}

// serveBackends serves every address until SIGTERM with backendHandler.
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
		srv := &http.Server{ReadHeaderTimeout: backendReadHeader, Handler: backendHandler(names[i])}
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
