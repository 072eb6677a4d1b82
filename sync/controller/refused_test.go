package controller

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
)

// TestRealHAProxyLeavesOutRefusedRoute: a Route whose certificate HAProxy refuses (a 1024-bit RSA
// key) arrives; HAProxy names its file, the controller leaves it out with a RefusedByHAProxy
// problem and serves the rest at once, so a later Route is served too (nothing blocks behind the bad
// one), the files on disk start, and a fix of the Route brings it in. It runs with `haproxy -c` and
// without a local binary (a sidecar: the master's reload checks).
func TestRealHAProxyLeavesOutRefusedRoute(t *testing.T) {
	for name, bin := range map[string]string{"haproxy -c": testkit.HAProxyBinary(), "master checks": ""} {
		t.Run(name, func(t *testing.T) { leavesOutRefusedRoute(t, bin) })
	}
}

func leavesOutRefusedRoute(t *testing.T, bin string) {
	const wait = 20 * time.Second
	ca := testkit.NewCA(t, "controller CA")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	addr := map[bool]string{true: "127.0.0.21", false: "127.0.0.22"}[bin != ""]
	web := testkit.StartHTTPBackend(t, addr, "web")
	weakCert, weakKey := ca.IssueRSA(t, 1024, "weak.example.com")
	goodCert, goodKey := ca.Issue(t, "weak.example.com")
	input := func(weak []byte, key []byte, hosts ...string) mapping.Input {
		var m testbed.Manifests
		m.Service("app", "web", web)
		for _, h := range hosts {
			m.Route("app", h, h+".example.com", "", "web")
		}
		if weak != nil {
			m.Route("app", "weak", "weak.example.com", "", "web", testbed.Edge(weak, key))
		}
		return m.Objects()
	}
	in := input(nil, nil, "www")
	desired, _ := mapping.Translate(in, opts)
	dir := testkit.TempDir(t)
	up, err := haproxy.New(haproxy.Config{
		Dir:    dir,
		Render: render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")},
		Binary: bin,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.WriteInitial(desired); err != nil {
		t.Fatal(err)
	}
	testbed.Start(t, dir)
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	src := newFakeSource(in)
	src.synced.Store(true)
	status := &fakeStatus{}
	c := &Controller{
		Source: src, Options: opts, HAProxy: up, Status: status,
		Holdoff: 20 * time.Millisecond, MaxHoldoff: 200 * time.Millisecond,
		DriftInterval: time.Hour, Metrics: NewMetrics(),
	}
	run(t, c)
	waitFor(t, wait, "ready", c.Ready)
	served := func(host string) bool {
		code, backend, _ := client.Get(t, "http://"+host+".example.com/")
		return code == http.StatusOK && backend == "web"
	}
	refusedProblem := func() string {
		status.mu.Lock()
		defer status.mu.Unlock()
		for _, p := range status.last {
			if p.Namespace == "app" && p.Name == "weak" && p.Reason == mapping.ReasonRefusedByHAProxy {
				return p.Message
			}
		}
		return ""
	}

	src.set(input(weakCert, weakKey, "www", "shop"))
	waitFor(t, wait, "the refused Route left out and shop served", func() bool {
		return refusedProblem() != "" && c.Failing() == nil && served("shop")
	})
	if msg := refusedProblem(); !strings.Contains(msg, "app_weak.pem") {
		t.Errorf("the problem does not give HAProxy's words about the certificate: %q", msg)
	}
	if err := testbed.CheckConfig(layout.For(dir).Config()); err != nil {
		t.Errorf("HAProxy would not start from the files on disk: %v", err)
	}

	// Nothing waits behind it: a new Route comes in while the bad one stays.
	src.set(input(weakCert, weakKey, "www", "shop", "blog"))
	waitFor(t, wait, "blog served", func() bool { return served("blog") && refusedProblem() != "" })

	// The fix: a certificate HAProxy takes.
	src.set(input(goodCert, goodKey, "www", "shop", "blog"))
	waitFor(t, wait, "the fixed Route served", func() bool {
		resp, err := client.Do(http.MethodGet, "https://weak.example.com/", nil)
		return err == nil && resp.Status == http.StatusOK && resp.Backend == "web" && refusedProblem() == ""
	})
}
