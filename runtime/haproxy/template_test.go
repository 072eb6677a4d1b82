package haproxy_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
)

// templateWith returns the default template with extra inserted in the backend block, after the
// backend's mode line.
func templateWith(t *testing.T, extra string) *render.Template {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "mapping", "render", "haproxy.cfg.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "\nbackend {{ $b.Name }} from {{ $b.Profile }}"
	if !strings.Contains(string(text), anchor) {
		t.Fatal("the default template has no backend header line to anchor the test's addition")
	}
	tmpl, err := render.ParseTemplate("custom", strings.Replace(string(text), anchor, anchor+extra, 1))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// routesTo is the desired state of one Service with endpoint ep and a Route to it for each host.
func routesTo(t *testing.T, opts mapping.Options, ep *testkit.Backend, hosts ...string) *model.Config {
	t.Helper()
	var m testbed.Manifests
	m.Service("app", "web", ep)
	for _, h := range hosts {
		m.Route("app", strings.Split(h, ".")[0], h, "", "web")
	}
	cfg, problems := mapping.Translate(m.Input(t), opts)
	if len(problems) > 0 {
		t.Fatalf("translate: %v", problems)
	}
	return cfg
}

// TestTemplateChangedIsAReload: with a custom template that renders something per Route, a new
// Route that the runtime path could serve from a spare is a reload (TemplateChanged), so that it is
// served with what the template renders for it; with the default template the same change is
// runtime ops.
func TestTemplateChangedIsAReload(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	cert := ca.IssueBundle(t, "default.example.com")

	for _, tc := range []struct {
		name     string
		template *render.Template
		want     plan.ReasonKind // "" for runtime ops
	}{
		{"default template", nil, ""},
		{"a header per Route", templateWith(t, "\n{{- with $b.Route }}\n  http-request set-header X-Route {{ . }}{{ end }}"), plan.TemplateChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testkit.TempDir(t)
			ro := render.Options{DefaultCertificatePEM: cert, Template: tc.template}
			inst, _ := startInstance(t, dir, ro, routesTo(t, opts, web, "a.example.com"))
			client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
			out, err := inst.Update(ctx, routesTo(t, opts, web, "a.example.com", "b.example.com"))
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if out.Reason.Kind != tc.want || out.Reloaded != (tc.want != "") {
				t.Fatalf("adding a Route: reloaded %v, reason %v; want %q", out.Reloaded, out.Reason, tc.want)
			}
			if status, backend, _ := client.Get(t, "http://b.example.com/"); status != http.StatusOK || backend != "web" {
				t.Fatalf("the new Route answers %d from %q", status, backend)
			}
			if tc.template != nil && !strings.Contains(testbed.ReadConfig(t, dir), "X-Route app/b") {
				t.Fatal("the new Route's header is not in the config HAProxy runs")
			}
		})
	}
}

// TestTemplateInvalidForOneRoute: a custom template that renders an invalid line for one Route makes
// that Route's addition a reload that `haproxy -c` refuses: HAProxy keeps serving the other Routes,
// the files on disk stay the last good ones (a restart would not fail), and once the Route goes, the
// next update goes through.
func TestTemplateInvalidForOneRoute(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	ro := render.Options{
		DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com"),
		Template:              templateWith(t, "\n{{- if eq $b.Route \"app/bad\" }}\n  not-a-keyword{{ end }}"),
	}
	dir := testkit.TempDir(t)
	inst, _ := startInstance(t, dir, ro, routesTo(t, opts, web, "a.example.com"))
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())

	out, err := inst.Update(ctx, routesTo(t, opts, web, "a.example.com", "bad.example.com"))
	if !errors.Is(err, reload.ErrInvalidConfig) || out.Reason.Kind != plan.TemplateChanged {
		t.Fatalf("adding the Route the template breaks: reason %v, err %v; want TemplateChanged refused by haproxy -c", out.Reason, err)
	}
	if err := reload.Check(ctx, testkit.HAProxyBinary(), dir); err != nil {
		t.Fatalf("the config on disk is not the last good one: %v", err)
	}
	if status, backend, _ := client.Get(t, "http://a.example.com/"); status != http.StatusOK || backend != "web" {
		t.Fatalf("the other Route answers %d from %q", status, backend)
	}
	if status, _, _ := client.Get(t, "http://bad.example.com/"); status != http.StatusServiceUnavailable {
		t.Fatalf("the refused Route answers %d, want 503 (not served)", status)
	}
	out, err = inst.Update(ctx, routesTo(t, opts, web, "a.example.com", "c.example.com"))
	if err != nil {
		t.Fatalf("the next update: %v", err)
	}
	if status, backend, _ := client.Get(t, "http://c.example.com/"); status != http.StatusOK || backend != "web" {
		t.Fatalf("a Route added later answers %d from %q (reason %v)", status, backend, out.Reason)
	}
}
