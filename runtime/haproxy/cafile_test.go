package haproxy_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
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
	routerCA, oldCA, newCA := testkit.NewCA(t, "router CA"), testkit.NewCA(t, "old service CA"), testkit.NewCA(t, "new service CA")
	crt, key := newCA.Issue(t, "web.shop.svc")
	backend := testkit.StartTLSBackend(t, "127.0.0.2", "web", crt, key)
	input := func(destCA []byte) mapping.Input {
		m := &testbed.Manifests{}
		routeCrt, routeKey := routerCA.Issue(t, "web.example.com")
		m.Service("shop", "web", backend).Route("shop", "web", "web.example.com", "", "web", testbed.Reencrypt(routeCrt, routeKey, destCA))
		return m.Input(t)
	}
	first, _ := mapping.Translate(input(oldCA.PEM()), opts)
	dir := testkit.TempDir(t)
	ro := render.Options{DefaultCertificatePEM: routerCA.IssueBundle(t, "default.example.com")}
	u, _ := startInstance(t, dir, ro, first)
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, routerCA.Pool())
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

// TestDestinationCAChecksTheNameOnlyByDefault follows OpenShift: a reencrypt Route's own
// destinationCACertificate verifies the backend's chain alone, whatever names its certificate
// carries; the router's default destination CA (the service CA) also wants the Service's name,
// <service>.<namespace>.svc. Neither sends SNI.
func TestDestinationCAChecksTheNameOnlyByDefault(t *testing.T) {
	opts := testbed.RouterOptions(t)
	routerCA, serviceCA := testkit.NewCA(t, "router CA"), testkit.NewCA(t, "service CA")
	dir := testkit.TempDir(t)
	opts.DefaultDestinationCAFile = dir + "/service-ca.pem"
	testbed.WriteFiles(t, dir, []render.File{{Path: "service-ca.pem", Data: serviceCA.PEM()}})
	otherCrt, otherKey := serviceCA.Issue(t, "pod.internal.example")
	svcCrt, svcKey := serviceCA.Issue(t, "named.shop.svc")
	other := testkit.StartTLSBackend(t, "127.0.0.2", "other", otherCrt, otherKey)
	named := testkit.StartTLSBackend(t, "127.0.0.3", "named", svcCrt, svcKey)
	m := &testbed.Manifests{}
	for _, r := range []struct {
		name   string
		b      *testkit.Backend
		destCA []byte
	}{{"own-ca", other, serviceCA.PEM()}, {"default-ca", other, nil}, {"named", named, nil}} {
		crt, key := routerCA.Issue(t, r.name+".example.com")
		svc := r.name
		m.Service("shop", svc, r.b).Route("shop", r.name, r.name+".example.com", "", svc, testbed.Reencrypt(crt, key, r.destCA))
	}
	desired, problems := mapping.Translate(m.Input(t), opts)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	startInstance(t, dir, render.Options{DefaultCertificatePEM: routerCA.IssueBundle(t, "default.example.com")}, desired)
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, routerCA.Pool())
	for host, want := range map[string]int{
		"own-ca.example.com":     http.StatusOK,                 // the chain is the Route's CA's: enough
		"default-ca.example.com": http.StatusServiceUnavailable, // the service CA's chain, but not other.shop.svc
		"named.example.com":      http.StatusOK,                 // the service CA's chain for named.shop.svc
	} {
		resp, err := client.Do(http.MethodGet, "https://"+host+"/", nil)
		if err != nil || resp.Status != want {
			t.Errorf("GET https://%s/: %v %v, want status %d", host, resp, err, want)
		}
	}
}
