package testkit

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// EchoReply is what an echo backend answers to every request, whatever its path: the request as the
// backend received it, so that a test sees what a router sent the pod (headers added, replaced or
// removed, the path after a rewrite, the TLS server name of a re-encrypted or passed-through
// connection).
type EchoReply struct {
	// Backend is the backend's name.
	Backend string `json:"backend"`
	// Method and URI are the request line's method and target; Host is the Host header.
	Method string `json:"method"`
	URI    string `json:"uri"`
	Host   string `json:"host"`
	// Header are the request headers (names in Go's canonical form, values in the order received).
	Header http.Header `json:"header"`
	// TLS reports whether the request came over TLS; SNI is the server name the client asked for.
	TLS bool   `json:"tls"`
	SNI string `json:"sni,omitempty"`
}

// The query parameters an echo backend acts on (all others are only echoed).
const (
	// EchoSetParam adds a response header: "Name:value"; it may be repeated.
	EchoSetParam = "_echo_set"
	// EchoSleepParam delays the answer by a Go duration (at most echoMaxSleep), so that a test can
	// hold a request open.
	EchoSleepParam = "_echo_sleep"
)

// echoMaxSleep bounds EchoSleepParam.
const echoMaxSleep = 10 * time.Second

// EchoHandler answers every request with status 200, X-Backend: name and an EchoReply as JSON, after
// the response headers and the delay its query asks for.
func EchoHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for _, kv := range q[EchoSetParam] {
			k, v, ok := strings.Cut(kv, ":")
			if !ok || k == "" {
				http.Error(w, fmt.Sprintf("%s=%q: want Name:value", EchoSetParam, kv), http.StatusBadRequest)
				return
			}
			w.Header().Add(k, v)
		}
		if v := q.Get(EchoSleepParam); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > echoMaxSleep {
				http.Error(w, fmt.Sprintf("%s=%q: want a duration up to %v", EchoSleepParam, v, echoMaxSleep), http.StatusBadRequest)
				return
			}
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		reply := EchoReply{Backend: name, Method: r.Method, URI: r.RequestURI, Host: r.Host, Header: r.Header, TLS: r.TLS != nil}
		if r.TLS != nil {
			reply.SNI = r.TLS.ServerName
		}
		body, err := json.Marshal(reply)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set(HeaderBackend, name)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

// StartEchoBackend starts an echo backend (EchoHandler) named name on ip:port, a loopback address and
// a port the test chooses (0: a free one), over TLS with certPEM and keyPEM when they are given. Its
// TLS offers no ALPN protocol, as the e2e pod network's backends (e2e/framework) do: a test that
// compares the two sees the same handshake.
func StartEchoBackend(t testing.TB, ip string, port int, name string, certPEM, keyPEM []byte) *Backend {
	t.Helper()
	var tlsConfig *tls.Config
	if len(certPEM) > 0 {
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{KeyPair(t, certPEM, keyPEM)}, MinVersion: tls.VersionTLS12}
	}
	return startBackend(t, ip, port, name, tlsConfig, EchoHandler(name))
}
