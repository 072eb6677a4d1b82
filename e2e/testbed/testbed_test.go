package testbed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/render"
)

// handConfig is a small hand-written configuration in the production shape (admin socket under
// run/, files by absolute path) that exercises what the test bed relies on: Host matching, TLS with
// SNI, X-Forwarded-Proto.
const handConfig = `global
    stats socket {{dir}}/run/haproxy.sock mode 600 level admin expose-fd listeners
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend public
    bind 127.0.0.1:{{http}}
    http-request set-header X-Forwarded-Proto http
    use_backend be_a if { req.hdr(host),field(1,:),lower,regsub([.]$,) -m str a.test }
    default_backend fallback
frontend public_ssl
    bind 127.0.0.1:{{https}} ssl crt {{dir}}/conf/default.pem
    http-request set-header X-Forwarded-Proto https if { ssl_fc }
    default_backend be_a
backend be_a
    server s1 {{backend}}
backend fallback
`

// startHand starts HAProxy on handConfig in front of one backend named "a" on 127.0.0.2.
func startHand(t *testing.T, ca *testkit.CA) (*HAProxy, *testkit.Client, *testkit.Backend) {
	t.Helper()
	be := testkit.StartHTTPBackend(t, "127.0.0.2", "a")
	dir := testkit.TempDir(t)
	ports := testkit.ListenPorts(t, 2)
	httpPort, httpsPort := ports[0], ports[1]
	cfg := strings.NewReplacer("{{dir}}", dir, "{{http}}", fmt.Sprint(httpPort),
		"{{https}}", fmt.Sprint(httpsPort), "{{backend}}", be.Addr()).Replace(handConfig)
	h := StartHAProxy(t, dir, []render.File{
		{Path: "conf/haproxy.cfg", Data: []byte(cfg)},
		{Path: "conf/default.pem", Data: ca.IssueBundle(t, "a.test")},
	})
	return h, testkit.NewClient(t, httpPort, httpsPort, ca.Pool()), be
}

func TestHAProxyServesThroughClient(t *testing.T) {
	ca := testkit.NewCA(t, "testbed CA")
	h, c, be := startHand(t, ca)

	for _, url := range []string{"http://a.test/x", "http://A.Test:8080/x", "http://a.test./x", "http://a.TEST.:1/x"} {
		status, backend, body := c.Get(t, url)
		if status != http.StatusOK || backend != "a" || body != "a GET /x\nhttp\n" {
			t.Errorf("GET %s = %d %q %q, want 200 from a with body %q", url, status, backend, body, "a GET /x\nhttp\n")
		}
	}
	if status, backend, _ := c.Get(t, "http://b.test/x"); status != http.StatusServiceUnavailable || backend != "" {
		t.Errorf("GET http://b.test/x = %d from %q, want 503 from HAProxy", status, backend)
	}
	if got := be.Requests(); got != 4 {
		t.Errorf("backend a answered %d requests, want 4", got)
	}
	// The query is not part of the echoed path.
	if _, _, body := c.Get(t, "http://a.test/p/q?x=1"); !strings.HasPrefix(body, "a GET /p/q\n") {
		t.Errorf("body %q, want the path without the query", body)
	}

	r := c.Fetch(t, "https://a.test/s")
	if r.Status != http.StatusOK || r.Body != "a GET /s\nhttps\n" {
		t.Errorf("GET https://a.test/s = %d %q", r.Status, r.Body)
	}
	if leaf := r.Leaf(); leaf == nil || len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "a.test" {
		t.Errorf("https leaf = %v, want a certificate for a.test", leaf)
	}
	// The default certificate names a.test only: another SNI fails verification, which shows that the
	// URL host is the SNI and the name verified.
	if _, err := c.Do(http.MethodGet, "https://other.test/", nil); err == nil || !strings.Contains(err.Error(), "other.test") {
		t.Errorf("GET https://other.test/: err = %v, want a verification error naming other.test", err)
	}

	out, err := h.Cmd("show info")
	if err != nil || !strings.Contains(out, "Name: HAProxy") {
		first, _, _ := strings.Cut(out, "\n")
		t.Errorf("show info = %q, %v", first, err)
	}
	out, err = h.MasterCmd("show proc")
	if err != nil || !strings.Contains(out, "master") || !strings.Contains(out, "worker") {
		t.Errorf("master show proc = %q, %v", out, err)
	}
	if n, err := statEventually(h, "be_a", "stot", 6); err != nil || n != 6 {
		t.Errorf("be_a stot = %d, %v; want 6", n, err)
	}
	if n, err := statEventually(h, "fallback", "hrsp_5xx", 1); err != nil || n != 1 {
		t.Errorf("fallback hrsp_5xx = %d, %v; want 1", n, err)
	}
	if _, err := h.Stat("nope", "BACKEND", "stot"); err == nil {
		t.Error("Stat of a missing proxy: no error")
	}
	if err := h.Check(); err != nil {
		t.Errorf("Check of the running config: %v", err)
	}
}

func TestHAProxyStopsOnCleanup(t *testing.T) {
	ca := testkit.NewCA(t, "testbed CA")
	var h *HAProxy
	t.Run("run", func(t *testing.T) {
		h, _, _ = startHand(t, ca)
		if h.Exited() {
			t.Fatal("haproxy exited right after start")
		}
	})
	if !h.Exited() {
		t.Fatalf("haproxy (pid %d) still running after its test's cleanup", h.PID)
	}
	// Workers are gone too: nobody answers on the admin socket and the process group is empty.
	if _, err := h.Cmd("show info"); err == nil {
		t.Error("admin socket still answers after cleanup")
	}
	if live := liveGroupMembers(t, h.PID); len(live) > 0 {
		t.Errorf("processes %v of group %d still alive after cleanup", live, h.PID)
	}
}

// liveGroupMembers lists the processes of group pgid that are not zombies (an orphaned worker may wait
// for a container's init to reap it; it holds nothing).
func liveGroupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var live []int
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) || f[0] == "Z" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		live = append(live, pid)
	}
	return live
}

func TestCheckConfigReportsErrors(t *testing.T) {
	dir := testkit.TempDir(t)
	cfg := filepath.Join(dir, "bad.cfg")
	if err := os.WriteFile(cfg, []byte("frontend f\n    bind 127.0.0.1:1\n    no-such-keyword x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := CheckConfig(cfg)
	if err == nil || !strings.Contains(err.Error(), "no-such-keyword") {
		t.Errorf("CheckConfig(bad) = %v, want an error quoting the bad line", err)
	}
}

func TestManifestsRoundTrip(t *testing.T) {
	ca := testkit.NewCA(t, "ca")
	crt, key := ca.Issue(t, "edge.example.com")
	var m Manifests
	m.Service("ns", "a", testkit.StartHTTPBackend(t, "127.0.0.2", "a"), testkit.StartHTTPBackend(t, "127.0.0.3", "a2"))
	m.ServiceAt("ns", "v6", netip.MustParseAddrPort("[::1]:8080"))
	m.Service("other", "empty")
	m.Route("ns", "r1", "www.example.com", "/api", "a", Weight(70), Alternate("v6", 30), Annotate("k", "v"))
	m.Route("ns", "r2", "edge.example.com", "", "a", Edge(crt, key), Insecure("Redirect"))
	m.Route("ns", "r3", "*.wild.example.com", "", "a", Wildcard(), Passthrough())
	m.Route("other", "r4", "re.example.com", "", "empty", Reencrypt(nil, nil, ca.PEM()))

	in := m.Input(t)
	direct := m.Objects()
	// Compare as JSON: decoding yields equal objects, but times in another *time.Location.
	got, err := json.MarshalIndent(in, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(direct, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("decoded manifests differ from the built objects:\n%s\nwant:\n%s", got, want)
	}
	if len(in.Routes) != 4 || len(in.Services) != 3 || len(in.EndpointSlices) != 3 || len(in.Namespaces) != 2 {
		t.Fatalf("decoded %d routes, %d services, %d slices, %d namespaces; want 4, 3, 3, 2",
			len(in.Routes), len(in.Services), len(in.EndpointSlices), len(in.Namespaces))
	}
	// Creation times follow call order, so the first Route is the oldest.
	for i := 1; i < len(in.Routes); i++ {
		if !in.Routes[i-1].CreationTimestamp.Before(&in.Routes[i].CreationTimestamp) {
			t.Errorf("route %s is not older than %s", in.Routes[i-1].Name, in.Routes[i].Name)
		}
	}
	if s := in.EndpointSlices[2]; s.AddressType != "IPv6" || s.Endpoints[0].Addresses[0] != "::1" {
		t.Errorf("v6 slice = %+v", s)
	}
}

// statEventually reads a BACKEND counter until it reaches want or 2 s pass: HAProxy updates some
// counters when the stream ends, which can be just after the client has read the response.
func statEventually(h *HAProxy, proxy, field string, want int64) (int64, error) {
	var n int64
	var err error
	for i := 0; i < 100; i++ {
		if n, err = h.Stat(proxy, "BACKEND", field); err != nil || n >= want {
			return n, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n, err
}
