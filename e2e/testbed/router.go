package testbed

import (
	"context"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

// testMaxConnections replaces OpenShift's default of 50,000 connections, for which HAProxy needs a
// file-descriptor limit above 100,000 that test machines (and containers) often do not grant.
const testMaxConnections = 2000

// maxLoggedConfig is the largest haproxy.cfg logged when a test fails.
const maxLoggedConfig = 64 << 10

// RouterOptions returns mapping.DefaultOptions for a test router: public ports free on 127.0.0.1,
// loopback endpoints and wildcard Routes allowed, at most 2,000 connections.
func RouterOptions(t testing.TB) mapping.Options {
	t.Helper()
	o := mapping.DefaultOptions()
	ports := testkit.ListenPorts(t, 2)
	o.HTTPPort, o.HTTPSPort = ports[0], ports[1]
	o.BindAddress = "127.0.0.1"
	o.AllowLoopbackEndpoints = true
	o.AllowWildcardRoutes = true
	o.MaxConnections = testMaxConnections
	return o
}

// StaticHAProxy is HAProxy serving the translation of one input, started in-process on the initial
// files `haroute run` would write (Translate → haproxy.Instance.InitialFiles → files → haproxy),
// with no haroute process (for that, see RouterProcess).
type StaticHAProxy struct {
	*HAProxy
	Options mapping.Options
	// Config is the state HAProxy runs: the translation with its spare pool.
	Config   *model.Config
	Problems []mapping.Problem
	Files    []render.File
	// Client talks to this HAProxy's public ports and trusts the roots given to StartStaticHAProxy.
	Client *testkit.Client
}

// StartStaticHAProxy translates in with opts, renders the result into a new directory with
// defaultCertPEM (certificate and key) as the default certificate, and starts HAProxy on it.
// Problems are kept in StaticHAProxy.Problems (see RequireAdmitted) and logged when the test fails.
func StartStaticHAProxy(t testing.TB, in mapping.Input, opts mapping.Options, defaultCertPEM []byte, roots *x509.CertPool) *StaticHAProxy {
	t.Helper()
	return StartStaticHAProxyRender(t, in, opts, render.Options{DefaultCertificatePEM: defaultCertPEM}, roots)
}

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
	dir := testkit.TempDir(t)
	ro.Dir = dir
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: ro, Binary: testkit.HAProxyBinary()})
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
		if cfgText := r.File(layout.Config); len(cfgText) <= maxLoggedConfig {
			t.Logf("%s:\n%s", layout.Config, cfgText)
		}
	})
	r.HAProxy = StartHAProxy(t, dir, first.Files)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := haproxy.StopDormantChecks(ctx, socket.NewAdmin(r.HAProxy.AdminSocket, socket.Options{}), first.State, dir); err != nil {
		t.Fatalf("testbed: %v", err)
	}
	r.Client = testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, roots)
	return r
}

// RequireAdmitted fails the test when Translate rejected a Route (warnings are allowed).
func (r *StaticHAProxy) RequireAdmitted(t testing.TB) {
	t.Helper()
	var rejected []mapping.Problem
	for _, p := range r.Problems {
		if !p.Warning {
			rejected = append(rejected, p)
		}
	}
	if len(rejected) > 0 {
		t.Fatalf("Routes were rejected:\n%s", formatProblems(rejected))
	}
}

// File returns the rendered file at path (relative to the directory), or nil.
func (r *StaticHAProxy) File(path string) []byte {
	for _, f := range r.Files {
		if f.Path == path {
			return f.Data
		}
	}
	return nil
}

func formatProblems(ps []mapping.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}
