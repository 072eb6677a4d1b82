package haproxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
)

// startSilentHTTP listens on ip:0 and reads every connection without ever answering, until the
// client closes it; it stops on cleanup.
func startSilentHTTP(t *testing.T, ip string) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	return testkit.ServeConns(t, l, func(c net.Conn) {
		defer c.Close()
		_, _ = io.Copy(io.Discard, c)
	})
}

// TestTimeoutAnnotationAtRuntime: an HTTP Route's timeout annotation reaches HAProxy through a map
// entry (the profile's set-timeout rule): setting it is no reload, and a server that does not answer
// then gets the request answered 504 after that timeout, where the router's own 30s keep it waiting.
func TestTimeoutAnnotationAtRuntime(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	silent := startSilentHTTP(t, "127.0.0.2")
	opts := testbed.RouterOptions(t)
	desired := annotated(t, opts, func(m *testbed.Manifests) { m.ServiceAt("app", "slow", silent) },
		"slow", "slow.example.com", mapping.AnnotationTimeout)
	inst := startSynced(t, ca, desired(""))
	get := func(wait time.Duration) (int, error) {
		c := http.Client{Timeout: wait}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", opts.HTTPPort), nil)
		if err != nil {
			return 0, err
		}
		req.Host = "slow.example.com"
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}
	if status, err := get(2 * time.Second); err == nil {
		t.Fatalf("without the annotation the silent server's request was answered %d within 2s; want it kept waiting (timeout server 30s)", status)
	}

	out, err := inst.Update(ctx, desired("500ms"))
	if err != nil || out.Reloaded {
		t.Fatalf("setting the timeout: reloaded %v (%v), err %v", out.Reloaded, out.Reason, err)
	}
	if out.Result.Counts["add_map_entry"] != 1 {
		t.Fatalf("setting the timeout: ops %v, want one map entry", out.Result.Counts)
	}
	if status, err := get(10 * time.Second); err != nil || status != http.StatusGatewayTimeout {
		t.Fatalf("with timeout 500ms: status %d, err %v; want 504", status, err)
	}
}

// TestHSTSAnnotationAtRuntime: an edge Route's hsts_header annotation reaches HAProxy through a map
// entry (the profile's rule): setting it is no reload, and the Route's TLS answers carry the header,
// byte for byte, after it.
func TestHSTSAnnotationAtRuntime(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	opts := testbed.RouterOptions(t)
	crt, key := ca.Issue(t, "secure.example.com")
	desired := annotated(t, opts, func(m *testbed.Manifests) { m.Service("app", "web", web) },
		"web", "secure.example.com", mapping.AnnotationHSTS, testbed.Edge(crt, key))
	inst := startSynced(t, ca, desired(""))
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	if got := client.Fetch(t, "https://secure.example.com/").Header.Get("Strict-Transport-Security"); got != "" {
		t.Fatalf("without the annotation: Strict-Transport-Security %q", got)
	}
	const hsts = `max-age="31536000" ; includeSubDomains;preload`
	out, err := inst.Update(ctx, desired(hsts))
	if err != nil || out.Reloaded || out.Result.Counts["add_map_entry"] != 1 {
		t.Fatalf("setting hsts_header: reloaded %v (%v), ops %v, err %v", out.Reloaded, out.Reason, out.Result.Counts, err)
	}
	if got := client.Fetch(t, "https://secure.example.com/").Header.Get("Strict-Transport-Security"); got != hsts {
		t.Fatalf("with the annotation: Strict-Transport-Security %q, want %q", got, hsts)
	}
}

// annotated returns the desired state of Route app/<first label of host> to Service app/<svc>,
// which service declares, with annotation key set to its argument unless that is empty.
func annotated(t *testing.T, opts mapping.Options, service func(*testbed.Manifests), svc, host, key string, ro ...testbed.RouteOption) func(string) *model.Config {
	return func(value string) *model.Config {
		t.Helper()
		var m testbed.Manifests
		service(&m)
		routeOpts := slices.Clone(ro)
		if value != "" {
			routeOpts = append(routeOpts, testbed.Annotate(key, value))
		}
		m.Route("app", strings.Split(host, ".")[0], host, "", svc, routeOpts...)
		cfg, problems := mapping.Translate(m.Input(t), opts)
		if len(problems) > 0 {
			t.Fatalf("translate: %v", problems)
		}
		return cfg
	}
}

// startSynced starts HAProxy from cfg through a new Instance, as `haroute run` does, and makes the
// Instance's first sync.
func startSynced(t *testing.T, ca *testkit.CA, cfg *model.Config) *haproxy.Instance {
	t.Helper()
	inst, _ := startInstance(t, testkit.TempDir(t), render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}, cfg)
	if _, err := inst.Update(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return inst
}
