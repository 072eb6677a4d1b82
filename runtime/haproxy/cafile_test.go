package haproxy_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
)

// TestDestinationCAChangeReloads: a reencrypt Route whose destination CA changes gets the new CA
// through a reload. At runtime (`set ssl ca-file` + commit) HAProxy answers Success, but its servers
// keep verifying with the old CA: the backend, whose certificate only the new CA signs, would stay
// unreachable.
func TestDestinationCAChangeReloads(t *testing.T) {
	ctx := context.Background()
	opts := testbed.RouterOptions(t)
	routerCA, oldCA, newCA := testbed.NewCA(t, "router CA"), testbed.NewCA(t, "old service CA"), testbed.NewCA(t, "new service CA")
	crt, key := newCA.Issue(t, "web.shop.svc")
	backend := testbed.StartTLSBackend(t, "127.0.0.2", "web", crt, key)
	input := func(destCA []byte) mapping.Input {
		m := &testbed.Manifests{}
		routeCrt, routeKey := routerCA.Issue(t, "web.example.com")
		m.Service("shop", "web", backend).Route("shop", "web", "web.example.com", "", "web", testbed.Reencrypt(routeCrt, routeKey, destCA))
		return m.Input(t)
	}
	first, _ := mapping.Translate(input(oldCA.PEM()), opts)
	dir := testbed.TempDir(t)
	ro := render.Options{DefaultCertificatePEM: routerCA.IssueBundle(t, "default.example.com")}
	u, _ := startInstance(t, dir, ro, first)
	client := testbed.NewClient(t, opts.HTTPPort, opts.HTTPSPort, routerCA.Pool())
	get := func() int {
		t.Helper()
		resp, err := client.Do(http.MethodGet, "https://web.example.com/", nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status
	}
	if s := get(); s != http.StatusServiceUnavailable {
		t.Fatalf("with the old CA: status %d, want 503 (the backend's certificate is the new CA's)", s)
	}
	next, _ := mapping.Translate(input(newCA.PEM()), opts)
	out, err := u.Update(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Reloaded || out.Reason.Kind != plan.CAFileChanged {
		t.Fatalf("want a CAFileChanged reload, got reloaded=%v reason=%v", out.Reloaded, out.Reason)
	}
	if s := get(); s != http.StatusOK {
		t.Fatalf("with the new CA: status %d, want 200", s)
	}
}
