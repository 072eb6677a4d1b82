//go:build e2e

package framework

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// TestBackendHandler: a pod's backend answers a plain request with its name, and StreamPath with
// a response that keeps sending ticks (a long-lived connection) until the client goes away.
func TestBackendHandler(t *testing.T) {
	srv := httptest.NewServer(backendHandler("pod-a"))
	defer srv.Close()
	hc := &http.Client{Timeout: 10 * time.Second}

	resp, err := hc.Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get(testkit.HeaderBackend) != "pod-a" || string(body) != "pod-a GET /x\n" {
		t.Errorf("GET /x = %d from %q: %q", resp.StatusCode, resp.Header.Get(testkit.HeaderBackend), body)
	}

	start := time.Now()
	resp, err = hc.Get(srv.URL + StreamPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(testkit.HeaderBackend) != "pod-a" {
		t.Fatalf("GET %s = %d from %q", StreamPath, resp.StatusCode, resp.Header.Get(testkit.HeaderBackend))
	}
	lines := bufio.NewScanner(resp.Body)
	for i, want := range []string{"pod-a tick 0", "pod-a tick 1"} {
		if !lines.Scan() {
			t.Fatalf("stream ended before line %d: %v", i, lines.Err())
		}
		if lines.Text() != want {
			t.Errorf("stream line %d = %q, want %q", i, lines.Text(), want)
		}
	}
	if d := time.Since(start); d < StreamTick/2 {
		t.Errorf("two ticks within %v, want them %v apart", d, StreamTick)
	}
}

// TestBackendEcho: EchoPath answers with the request as received (method, Host, URI, headers) and
// the response headers and padding its query asks for.
func TestBackendEcho(t *testing.T) {
	srv := httptest.NewServer(backendHandler("pod-a"))
	defer srv.Close()
	hc := &http.Client{Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodGet, srv.URL+EchoPath+"?set=Content-Type:text/html&set=X-Origin:MiXeD&pad=5", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "shop.e2e.test"
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e Echo
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html" || resp.Header.Get("X-Origin") != "MiXeD" {
		t.Errorf("GET %s = %d with headers %v", EchoPath, resp.StatusCode, resp.Header)
	}
	if e.Backend != "pod-a" || e.Method != http.MethodGet || e.Host != "shop.e2e.test" || e.TLS ||
		e.Header.Get("X-Forwarded-For") != "203.0.113.9" || e.Pad != "aaaaa" || !strings.HasPrefix(e.URI, EchoPath+"?") {
		t.Errorf("echo %+v", e)
	}
	for _, bad := range []string{"?pad=-1", "?set=novalue"} {
		resp, err := hc.Get(srv.URL + EchoPath + bad)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s%s = %d, want 400", EchoPath, bad, resp.StatusCode)
		}
	}
}
