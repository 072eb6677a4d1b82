//go:build e2e

package framework

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// Environment of a backend process: the test binary re-executed inside a network namespace. One
// process serves one or more addresses (comma-separated, with as many comma-separated names).
const (
	envBackendAddr = "HAROUTE_E2E_BACKEND_ADDR"
	envBackendName = "HAROUTE_E2E_BACKEND_NAME"
	// envBackendTLS is "certfile,keyfile": the backend serves TLS with that key pair.
	envBackendTLS = "HAROUTE_E2E_BACKEND_TLS"
	// envBackendEcho set to 1 makes the backend answer every path with testbed's echo
	// (testkit.EchoHandler) instead of backendHandler.
	envBackendEcho    = "HAROUTE_E2E_BACKEND_ECHO"
	backendReadHeader = 10 * time.Second
)

// ServeBackendIfAsked must be called first in TestMain: when the process was started as a backend it
// serves until SIGTERM and returns true with the exit code; otherwise it returns false at once.
func ServeBackendIfAsked() (bool, int) {
	addrs := os.Getenv(envBackendAddr)
	if addrs == "" {
		return false, 0
	}
	handler := backendHandler
	if os.Getenv(envBackendEcho) == "1" {
		handler = testkit.EchoHandler
	}
	if err := serveBackends(strings.Split(addrs, ","), strings.Split(os.Getenv(envBackendName), ","), os.Getenv(envBackendTLS), handler); err != nil {
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

// EchoPath is the path on which a backend answers with the request as it received it (an Echo, as
// JSON), so that a test sees what the router sent the pod: headers added, replaced or removed, the
// client's TLS identity in X-SSL-* headers. Its query chooses the response: every "set" parameter,
// "Name:value", adds that response header (Content-Type included, application/json otherwise), and
// "pad" adds that many bytes of padding to the body (for compression).
const EchoPath = "/_e2e/echo"

// echoMaxPad bounds the pad parameter of EchoPath.
const echoMaxPad = 1 << 20

// Echo is what a backend answers on EchoPath.
type Echo struct {
	// Backend is the backend's name.
	Backend string `json:"backend"`
	// Method, Host and URI are the request line's method and target, and the Host header.
	Method string `json:"method"`
	Host   string `json:"host"`
	URI    string `json:"uri"`
	// Header are the request headers (names in Go's canonical form).
	Header http.Header `json:"header"`
	// TLS reports whether the request came over TLS (a reencrypt Route's connection).
	TLS bool `json:"tls"`
	// Pad is the padding asked for.
	Pad string `json:"pad,omitempty"`
}

// backendHandler answers every request with 200, X-Backend: name and the body
// "<name> <method> <path>\n", StreamPath with a stream of ticks and EchoPath with an Echo.
func backendHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(testkit.HeaderBackend, name)
		switch r.URL.Path {
		case StreamPath:
			stream(w, r, name)
			return
		case EchoPath:
			echo(w, r, name)
			return
		}
		_, _ = fmt.Fprintf(w, "%s %s %s\n", name, r.Method, r.URL.Path)
	})
}

// echo answers r with an Echo of it, with the response headers and padding its query asks for.
func echo(w http.ResponseWriter, r *http.Request, name string) {
	q := r.URL.Query()
	pad := 0
	if v := q.Get("pad"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > echoMaxPad {
			http.Error(w, fmt.Sprintf("pad=%q: want 0-%d", v, echoMaxPad), http.StatusBadRequest)
			return
		}
		pad = n
	}
	w.Header().Set("Content-Type", "application/json")
	for _, kv := range q["set"] {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			http.Error(w, fmt.Sprintf("set=%q: want Name:value", kv), http.StatusBadRequest)
			return
		}
		w.Header().Set(k, v)
	}
	body, err := json.Marshal(Echo{Backend: name, Method: r.Method, Host: r.Host, URI: r.RequestURI,
		Header: r.Header, TLS: r.TLS != nil, Pad: strings.Repeat("a", pad)})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(body)
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

// serveBackends serves every address until SIGTERM with handler.
func serveBackends(addrs, names []string, tlsFiles string, handler func(name string) http.Handler) error {
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
		srv := &http.Server{ReadHeaderTimeout: backendReadHeader, Handler: handler(names[i])}
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
