package traffic

import (
	"net/http"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// defaultCertName is the only name on the router's default certificate.
const defaultCertName = "default.router.test"

// fixture is what most traffic tests share: the router's CA (it signs the default certificate and
// the Route certificates the client trusts) and the manifests under construction.
type fixture struct {
	ca *testkit.CA
	m  testbed.Manifests
}

// routerCAName is the common name of the fixtures' CA, the issuer of the router's certificates.
const routerCAName = "router CA"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return &fixture{ca: testkit.NewCA(t, routerCAName)}
}

// start translates the manifests with the traffic tests' options, renders, starts HAProxy and checks
// that every Route was admitted.
func (f *fixture) start(t *testing.T) *testbed.StaticHAProxy {
	t.Helper()
	r := testbed.StartStaticHAProxy(t, f.m.Input(t), testbed.RouterOptions(t), f.ca.IssueBundle(t, defaultCertName), f.ca.Pool())
	r.RequireAdmitted(t)
	return r
}

// want is the expected answer to one request: a status and the backend that gave it ("" when
// HAProxy answered itself), optionally the path the backend received.
type want struct {
	status  int
	backend string
	path    string // when set, the backend must have received this path
}

// expect sends a GET for url and compares the answer with w.
func expect(t *testing.T, c *testkit.Client, url string, w want) *testkit.Response {
	t.Helper()
	r, err := c.Do(http.MethodGet, url, nil)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return nil
	}
	if r.Status != w.status || r.Backend != w.backend {
		t.Errorf("GET %s: got %d from %s, want %d from %s (body %q)",
			url, r.Status, who(r.Backend), w.status, who(w.backend), r.Body)
		return r
	}
	if w.path != "" {
		if got := receivedPath(r); got != w.path {
			t.Errorf("GET %s: backend %s received path %q, want %q", url, r.Backend, got, w.path)
		}
	}
	return r
}

// receivedPath extracts the path from a testbed backend's answer ("<name> <method> <path>\n...").
func receivedPath(r *testkit.Response) string {
	line, _, _ := strings.Cut(r.Body, "\n")
	f := strings.Fields(line)
	if len(f) != 3 {
		return ""
	}
	return f[2]
}

// forwardedProto extracts the X-Forwarded-Proto the backend received (second body line).
func forwardedProto(r *testkit.Response) string {
	lines := strings.Split(r.Body, "\n")
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}

func who(backend string) string {
	if backend == "" {
		return "HAProxy itself"
	}
	return "backend " + backend
}

// stat reads one `show stat` counter and fails the test when it cannot.
func stat(t *testing.T, r *testbed.StaticHAProxy, proxy, field string) int64 {
	t.Helper()
	n, err := r.Stat(proxy, "BACKEND", field)
	if err != nil {
		t.Fatalf("stat %s %s: %v", proxy, field, err)
	}
	return n
}
