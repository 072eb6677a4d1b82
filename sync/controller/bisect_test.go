package controller

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/mapping/routetest"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/reload"
)

// fakeCheck refuses a desired state that holds a Route of bad (by its backend), without naming it,
// and a state of any kind when always is set.
type fakeCheck struct {
	bad    map[string]bool
	always bool
	calls  int
}

func (f *fakeCheck) check(_ context.Context, d *model.Config) ([]haproxy.Refused, error) {
	f.calls++
	if f.always {
		return nil, &reload.CheckError{Output: "[ALERT] global: broken", Status: "exit status 1"}
	}
	for _, r := range d.Routes {
		if f.bad[r.Namespace+"/"+r.Name] {
			return nil, &reload.CheckError{Output: "[NOTICE] x\n[ALERT] config : a line HAProxy does not like", Status: "exit status 1"}
		}
	}
	return nil, nil
}

func searchRoutes(n int) ([]*routev1.Route, mapping.Input) {
	in := mapping.Input{}
	var routes []*routev1.Route
	for i := range n {
		r := routetest.Route("app", fmt.Sprintf("r%03d", i), fmt.Sprintf("r%03d.example.com", i), i)
		routes = append(routes, r)
	}
	in.Routes = routes
	return routes, in
}

// TestBisectFindsUnnamedRefusals: when HAProxy refuses without naming a Route, the bisection finds
// exactly the bad ones among 200 in a bounded number of checks; a refusal without any Route is an
// error, not a Route to blame.
func TestBisectFindsUnnamedRefusals(t *testing.T) {
	routes, in := searchRoutes(200)
	opts := mapping.DefaultOptions()
	translate := func(rs []*routev1.Route, extra []mapping.Problem) (Desired, error) {
		sub := in
		sub.Routes = rs
		return translateInput(sub, nil, rs, extra, translateWith(opts))
	}
	for _, bad := range [][]string{{"app/r137"}, {"app/r000", "app/r199"}, {"app/r050", "app/r051", "app/r120"}} {
		f := &fakeCheck{bad: map[string]bool{}}
		for _, b := range bad {
			f.bad[b] = true
		}
		s := &refusalSearch{check: f.check, translate: translate, log: testLogger(t)}
		found, err := s.find(context.Background(), nil, routes)
		var got []string
		for _, r := range found {
			got = append(got, routeKey(r.route))
			if r.message != "[ALERT] config : a line HAProxy does not like" {
				t.Errorf("message %q, want HAProxy's alert line", r.message)
			}
		}
		slices.Sort(got)
		if err != nil || !slices.Equal(got, bad) {
			t.Errorf("bad %v: found %v, %v", bad, got, err)
		}
		if f.calls > maxSearchChecks {
			t.Errorf("bad %v: %d checks, over the bound %d", bad, f.calls, maxSearchChecks)
		}
		t.Logf("%d bad Routes among %d: %d checks", len(bad), len(routes), f.calls)
	}
	f := &fakeCheck{always: true}
	s := &refusalSearch{check: f.check, translate: translate, log: testLogger(t)}
	if found, err := s.find(context.Background(), nil, routes); err == nil || len(found) != 0 || !strings.Contains(err.Error(), "[ALERT] global: broken") {
		t.Errorf("a refusal without any Route: found %d, error %v; want an error with HAProxy's words", len(found), err)
	}
}

// unattributableTemplate adds, for the Route app/bad, a section HAProxy refuses with a message that
// names neither a Route's file nor a line of a Route's backend.
func unattributableTemplate(t *testing.T) *render.Template {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "mapping", "render", "haproxy.cfg.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	// The addition goes at the end of haproxy.cfg, before the template's first define.
	const anchor = `{{- define "default-backends" }}`
	extra := "{{- range $b := .Config.Backends }}{{ if eq $b.Route \"app/bad\" }}\nbackend zz-not-a-route\n  stick on src table nowhere\n{{- end }}{{ end }}\n"
	if !strings.Contains(string(text), anchor) {
		t.Fatal("the default template has no default-backends block to anchor the test's addition")
	}
	tmpl, err := render.ParseTemplate("custom", strings.Replace(string(text), anchor, extra+anchor, 1))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// TestRealHAProxyUnnamedRefusal: with a template that HAProxy refuses for one Route in words that name
// no Route, the first configuration leaves that Route out (found by bisection with haproxy -c) and
// HAProxy starts from files it accepts; later, the same Route added at runtime is found the same way
// among the changed Routes, and the others are served.
func TestRealHAProxyUnnamedRefusal(t *testing.T) {
	const wait = 30 * time.Second
	ca := testkit.NewCA(t, "controller CA")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	web := testkit.StartHTTPBackend(t, "127.0.0.23", "web")
	input := func(hosts ...string) mapping.Input {
		var m testbed.Manifests
		m.Service("app", "web", web)
		for _, h := range hosts {
			m.Route("app", h, h+".example.com", "", "web")
		}
		return m.Objects()
	}
	dir := testkit.TempDir(t)
	up, err := haproxy.New(haproxy.Config{
		Dir: dir,
		Render: render.Options{
			DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com"),
			Template:              unattributableTemplate(t),
		},
		Binary: testkit.HAProxyBinary(),
	})
	if err != nil {
		t.Fatal(err)
	}
	src := newFakeSource(input("www", "bad", "shop"))
	src.synced.Store(true)
	first, err := WriteFirst(context.Background(), src, opts, up, testLogger(t))
	if err != nil {
		t.Fatalf("WriteFirst: %v", err)
	}
	if len(first.Refused) != 1 || routeKey(first.Refused[0].Route) != "app/bad" || !strings.Contains(first.Refused[0].Message, "nowhere") {
		t.Fatalf("refused before the first start: %+v; want app/bad with HAProxy's words", first.Refused)
	}
	if err := testbed.CheckConfig(layout.For(dir).Config()); err != nil {
		t.Fatalf("HAProxy would not start from the first files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".check")); !os.IsNotExist(err) {
		t.Errorf("the check directory is left behind: %v", err)
	}
	testbed.Start(t, dir)
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	status := &fakeStatus{}
	c := &Controller{
		Source: src, Options: opts, HAProxy: up, Status: status, Refused: first.Refused,
		Holdoff: 20 * time.Millisecond, MaxHoldoff: 200 * time.Millisecond,
		DriftInterval: time.Hour, Metrics: NewMetrics(),
	}
	run(t, c)
	served := func(host string) bool {
		code, backend, _ := client.Get(t, "http://"+host+".example.com/")
		return code == http.StatusOK && backend == "web"
	}
	refused := func(name string) bool {
		status.mu.Lock()
		defer status.mu.Unlock()
		for _, p := range status.last {
			if p.Name == name && p.Reason == mapping.ReasonRefusedByHAProxy {
				return true
			}
		}
		return false
	}
	waitFor(t, wait, "www and shop served, bad left out", func() bool {
		return c.Ready() && served("www") && served("shop") && refused("bad")
	})

	// At runtime: the bad Route goes (its refusal is forgotten), then comes back with a good one.
	// HAProxy's refusal names neither; the changed Routes are bisected and only bad is left out.
	src.set(input("www", "shop"))
	waitFor(t, wait, "bad gone", func() bool { return c.Failing() == nil && !refused("bad") })
	reloadFailures := func() float64 { return counterSum(t, c.Metrics.UpdateFailures) }
	failuresBefore := reloadFailures()
	src.set(input("www", "shop", "blog", "bad"))
	waitFor(t, wait, "blog served, bad found", func() bool { return served("blog") && c.Failing() == nil && refused("bad") })
	if got := reloadFailures() - failuresBefore; got != 1 {
		t.Errorf("%v refused updates before the bad Route was found, want 1", got)
	}
	if err := testbed.CheckConfig(layout.For(dir).Config()); err != nil {
		t.Errorf("HAProxy would not start from the files on disk: %v", err)
	}
}

// counterSum adds up every series of v.
func counterSum(t *testing.T, v *prometheus.CounterVec) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 256)
	v.Collect(ch)
	close(ch)
	sum := 0.0
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		sum += d.GetCounter().GetValue()
	}
	return sum
}

// TestWriteFirstLeavesOutNamedRoute: a Route whose certificate HAProxy refuses (a 1024-bit RSA key)
// is present when haroute starts: HAProxy's message names its file, the first configuration leaves
// it out, and HAProxy starts from files it accepts and serves the others.
func TestWriteFirstLeavesOutNamedRoute(t *testing.T) {
	ca := testkit.NewCA(t, "controller CA")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	web := testkit.StartHTTPBackend(t, "127.0.0.24", "web")
	weakCert, weakKey := ca.IssueRSA(t, 1024, "weak.example.com")
	var m testbed.Manifests
	m.Service("app", "web", web)
	m.Route("app", "www", "www.example.com", "", "web")
	m.Route("app", "weak", "weak.example.com", "", "web", testbed.Edge(weakCert, weakKey))
	dir := testkit.TempDir(t)
	up, err := haproxy.New(haproxy.Config{
		Dir:    dir,
		Render: render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")},
		Binary: testkit.HAProxyBinary(),
	})
	if err != nil {
		t.Fatal(err)
	}
	src := newFakeSource(m.Objects())
	first, err := WriteFirst(context.Background(), src, opts, up, testLogger(t))
	if err != nil {
		t.Fatalf("WriteFirst: %v", err)
	}
	if len(first.Refused) != 1 || routeKey(first.Refused[0].Route) != "app/weak" || !strings.Contains(first.Refused[0].Message, "app_weak.pem") {
		t.Fatalf("refused before the first start: %+v; want app/weak named by its file", first.Refused)
	}
	if !slices.ContainsFunc(first.Desired.Problems, func(p mapping.Problem) bool {
		return p.Name == "weak" && p.Reason == mapping.ReasonRefusedByHAProxy
	}) {
		t.Errorf("no RefusedByHAProxy problem for app/weak in %+v", first.Desired.Problems)
	}
	testbed.Start(t, dir)
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	if code, backend, _ := client.Get(t, "http://www.example.com/"); code != http.StatusOK || backend != "web" {
		t.Errorf("www answers %d from %q, want 200 from web", code, backend)
	}
}
