package testkit

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestEchoBackend: an echo backend on the address and port the test chose answers any path with the
// request as it arrived, adds the response headers its query asks for, holds the answer for the
// delay asked, and refuses a malformed parameter.
func TestEchoBackend(t *testing.T) {
	port := FreePort(t)
	b := StartEchoBackend(t, "127.0.0.3", port, "pod-x", nil, nil)
	if b.Addr() != net.JoinHostPort("127.0.0.3", strconv.Itoa(port)) {
		t.Fatalf("backend on %s, want 127.0.0.3:%d", b.Addr(), port)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	get := func(target string, header http.Header) (*http.Response, EchoReply) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+b.Addr()+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "Echo.Test:81"
		for k, vs := range header {
			req.Header[k] = vs
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var e EchoReply
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("GET %s: not an echo: %v: %s", target, err, body)
			}
		}
		return resp, e
	}

	resp, e := get("/any/path?x=1&"+EchoSetParam+"=X-One:1&"+EchoSetParam+"=X-Two:2", http.Header{"X-In": {"a", "b"}})
	if e.Backend != "pod-x" || e.Method != http.MethodGet || e.Host != "Echo.Test:81" || e.TLS ||
		e.URI != "/any/path?x=1&"+EchoSetParam+"=X-One:1&"+EchoSetParam+"=X-Two:2" || len(e.Header["X-In"]) != 2 {
		t.Errorf("echo: %+v", e)
	}
	if resp.Header.Get("X-One") != "1" || resp.Header.Get("X-Two") != "2" || resp.Header.Get(HeaderBackend) != "pod-x" {
		t.Errorf("response headers: %v", resp.Header)
	}

	start := time.Now()
	if resp, _ := get("/?"+EchoSleepParam+"=300ms", nil); resp.StatusCode != http.StatusOK || time.Since(start) < 300*time.Millisecond {
		t.Errorf("sleep 300ms: %d after %v", resp.StatusCode, time.Since(start))
	}
	for _, q := range []string{EchoSleepParam + "=1h", EchoSleepParam + "=soon", EchoSetParam + "=nocolon"} {
		if resp, _ := get("/?"+q, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, resp.StatusCode)
		}
	}
	if b.Requests() != 5 {
		t.Errorf("the backend counted %d requests, want 5", b.Requests())
	}
}
