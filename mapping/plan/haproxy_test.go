package plan_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
)

var haproxyBin = testkit.HAProxyBinary()

// haproxyCheck renders cfg into a fresh directory and runs haproxy -c on it; an error, a warning or
// an alert fails the test.
func haproxyCheck(t *testing.T, cfg *model.Config, c testCerts) {
	t.Helper()
	dir := t.TempDir()
	files := renderCheck(t, cfg, dir, c)
	if err := os.MkdirAll(layout.For(dir).RunDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := layout.For(dir).Config()
	out, err := exec.Command(haproxyBin, append([]string{"-c"}, render.ConfigArgs(dir)...)...).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("[WARNING]")) || bytes.Contains(out, []byte("[ALERT]")) {
		text, _ := os.ReadFile(cfgPath)
		t.Fatalf("haproxy -c: %v\n%s\nconfig:\n%s", err, out, text)
	}
}

// TestPoolRendersAndHAProxyAccepts checks that WithPool of a Translate result, and a runtime Next
// with claimed, released and retired backends of every kind, render and pass haproxy -c.
func TestPoolRendersAndHAProxyAccepts(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(3)
	in := baseInput(c)
	d := translate(t, in, opts)
	pooled := plan.WithPool(d)
	haproxyCheck(t, pooled, c)

	// Claim a spare of every kind, then delete two Routes: one under its own name (retired), one
	// served by a spare (released).
	in2 := in
	for _, r := range []*routev1.Route{
		newRoute("app", "n-http", "n-http.example.com", 10, withService("s-extra")),
		newRoute("app", "n-edge", "n-edge.example.com", 11, withService("s-extra"),
			withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyAllow), withCert(c.other)),
		newRoute("app", "n-secure", "n-secure.example.com", 12, withService("s-extra"),
			withTLS(routev1.TLSTerminationReencrypt, routev1.InsecureEdgeTerminationPolicyRedirect), withDestCA(c.ca)),
		newRoute("app", "n-tcp", "n-tcp.example.com", 13, withService("s-extra"),
			withTLS(routev1.TLSTerminationPassthrough, routev1.InsecureEdgeTerminationPolicyRedirect)),
		newRoute("app", "n-split", "n-split.example.com", 14, withService("s-extra"), withAlternate("s-plain", 10)),
	} {
		in2 = withRoute(in2, r)
	}
	d2 := translate(t, in2, opts)
	p := plan.Compute(pooled, d2)
	checkRuntimePlan(t, pooled, d2, p)
	claimed := 0
	for _, b := range p.Next.Backends {
		if b.Spare && b.Route != "" {
			claimed++
		}
	}
	if claimed != 5 {
		t.Fatalf("%d spares claimed, want 5", claimed)
	}
	haproxyCheck(t, p.Next, c)

	d3 := translate(t, withoutRoute(withoutRoute(in2, "app", "secure"), "app", "n-secure"), opts)
	p3 := plan.Compute(p.Next, d3)
	checkRuntimePlan(t, p.Next, d3, p3)
	if b := p3.Next.Backend("be_secure:app:secure"); b == nil || !b.Retired {
		t.Fatal("be_secure:app:secure is not retired")
	}
	haproxyCheck(t, p3.Next, c)
}

// TestServerSpecOfClaimedSpare checks that the AddServer of a claimed reencrypt spare renders the
// server line with the Route's CA file and verified host, as a reload would.
func TestServerSpecOfClaimedSpare(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(1)
	in := baseInput(c)
	applied := plan.WithPool(translate(t, in, opts))
	d := translate(t, withRoute(in, newRoute("app", "n", "n.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationReencrypt, ""), withDestCA(c.ca))), opts)
	p := plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	i := indexOf(p.Ops, isType[plan.AddServer])
	if i < 0 {
		t.Fatalf("no AddServer:\n%s", opsText(p.Ops))
	}
	add := p.Ops[i].(plan.AddServer)
	spec, err := render.ServerSpec(p.Next, "/var/lib/haproxy", add.Backend, add.Server)
	if err != nil {
		t.Fatal(err)
	}
	// The Route's own destination CA verifies the chain alone, as in OpenShift: no verifyhost, no SNI.
	want := "ssl verify required ca-file /var/lib/haproxy/router/cacerts/app_n.pem alpn h2,http/1.1"
	if !strings.Contains(spec, want) || strings.Contains(spec, "verifyhost") || strings.Contains(spec, "sni") {
		t.Fatalf("server spec %q lacks %q, or checks a name", spec, want)
	}
}
