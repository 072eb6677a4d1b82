package testbed

import (
	"context"
	"crypto/x509"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

// StartStaticHAProxyRender is StartStaticHAProxy with full render options (error pages, a custom
// template, ...) instead of a default certificate alone: ro.DefaultCertificatePEM is required, and
// ro.Dir is set to the new directory. It is what `haroute run` does with ROUTER_ERRORFILE_503 and
// ROUTER_ERRORFILE_404, which cmd/haroute reads into ro.ErrorPage503 and ro.ErrorPage404.
func StartStaticHAProxyRender(t testing.TB, in mapping.Input, opts mapping.Options, ro render.Options, roots *x509.CertPool) *StaticHAProxy {
	t.Helper()
	if len(ro.DefaultCertificatePEM) == 0 {
		t.Fatal("testbed: StartStaticHAProxyRender: render options without a default certificate")
	}
	cfg, problems := mapping.Translate(in, opts)
	if cfg == nil {
		t.Fatalf("testbed: Translate returned no config (problems: %v)", problems)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("testbed: Translate returned an invalid config: %v", err)
	}
	dir := TempDir(t)
	ro.Dir = dir
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: ro, Binary: HAProxyBinary()})
	if err != nil {
		t.Fatalf("testbed: %v", err)
	}
	first, err := inst.InitialFiles(cfg)
	if err != nil {
		t.Fatalf("testbed: %v", err)
	}
	r := &StaticHAProxy{
		Options:  opts,
		Config:   first.State,
		Problems: problems,
		Files:    first.Files,
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if len(problems) > 0 {
			t.Logf("translate problems:\n%s", formatProblems(problems))
		}
		if cfgText := r.File("conf/haproxy.cfg"); len(cfgText) <= maxLoggedConfig {
			t.Logf("conf/haproxy.cfg:\n%s", cfgText)
		}
	})
	r.HAProxy = StartHAProxy(t, dir, first.Files)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := haproxy.StopDormantChecks(ctx, socket.NewAdmin(r.HAProxy.AdminSocket, socket.Options{}), first.State, dir); err != nil {
		t.Fatalf("testbed: %v", err)
	}
	r.Client = NewClient(t, opts.HTTPPort, opts.HTTPSPort, roots)
	return r
}
