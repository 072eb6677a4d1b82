//go:build e2e

package framework

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
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
	if resp.StatusCode != http.StatusOK || resp.Header.Get(testbed.HeaderBackend) != "pod-a" || string(body) != "pod-a GET /x\n" {
		t.Errorf("GET /x = %d from %q: %q", resp.StatusCode, resp.Header.Get(testbed.HeaderBackend), body)
	}

	start := time.Now()
	resp, err = hc.Get(srv.URL + StreamPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(testbed.HeaderBackend) != "pod-a" {
		t.Fatalf("GET %s = %d from %q", StreamPath, resp.StatusCode, resp.Header.Get(testbed.HeaderBackend))
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
