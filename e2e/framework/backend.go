//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Environment of a backend process: the test binary re-executed inside a network namespace.
const (
	envBackendAddr = "HAROUTE_E2E_BACKEND_ADDR"
	envBackendName = "HAROUTE_E2E_BACKEND_NAME"
	// HeaderBackend names the backend that answered (the same header as e2e/testbed's backends).
	HeaderBackend     = "X-Backend"
	backendReadHeader = 10 * time.Second
)

// ServeBackendIfAsked must be called first in TestMain: when the process was started as a backend it
// serves until SIGTERM and returns true with the exit code; otherwise it returns false at once.
func ServeBackendIfAsked() (bool, int) {
	addr := os.Getenv(envBackendAddr)
	if addr == "" {
		return false, 0
	}
	if err := serveBackend(addr, os.Getenv(envBackendName)); err != nil {
		fmt.Fprintln(os.Stderr, "backend:", err)
		return true, 1
	}
	return true, 0
}

// serveBackend answers every request with 200, X-Backend: name and the body "<name> <method> <path>\n".
func serveBackend(addr, name string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{
		ReadHeaderTimeout: backendReadHeader,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(HeaderBackend, name)
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s %s\n", name, r.Method, r.URL.Path)
			_, _ = w.Write([]byte(b.String()))
		}),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
		_ = srv.Close()
		<-done
		return nil
	case err := <-done:
		return fmt.Errorf("serve %s: %w", addr, err)
	}
}
