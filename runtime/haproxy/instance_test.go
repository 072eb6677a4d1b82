package haproxy_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/socket"
)

// TestInstanceRuntimeThenFallback drives a real HAProxy through the Instance: a scale-out goes through
// runtime ops without a reload; then drift made by hand (the server the next plan adds already exists)
// makes an op fail, and the Instance falls back to a reload of the files it wrote, after which HAProxy
// serves exactly the desired state and the next Update is runtime again.
func TestInstanceRuntimeThenFallback(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	a := testkit.StartHTTPBackend(t, "127.0.0.2", "a")
	b := testkit.StartHTTPBackend(t, "127.0.0.3", "b")
	c := testkit.StartHTTPBackend(t, "127.0.0.4", "c")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	dir := testkit.TempDir(t)
	ro := render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}

	desired := func(eps ...*testkit.Backend) *model.Config {
		var m testbed.Manifests
		m.Service("app", "web", eps...)
		m.Route("app", "web", "web.example.com", "", "web")
		cfg, problems := mapping.Translate(m.Input(t), opts)
		if len(problems) > 0 {
			t.Fatalf("translate: %v", problems)
		}
		return cfg
	}

	u, h := startInstance(t, dir, ro, desired(a))
	admin := socket.NewAdmin(h.AdminSocket, socket.Options{})
	master := socket.NewMaster(h.MasterSocket, socket.Options{})
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	reloads := func() int {
		ps, err := master.ShowProc(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ps.Master.Reloads
	}
	served := func(want ...string) {
		t.Helper()
		seen := map[string]bool{}
		for range 40 {
			status, backend, _ := client.Get(t, "http://web.example.com/")
			if status != http.StatusOK {
				t.Fatalf("status %d from %q", status, backend)
			}
			seen[backend] = true
		}
		for _, w := range want {
			if !seen[w] {
				t.Fatalf("backend %s never answered (saw %v)", w, seen)
			}
		}
		if len(seen) != len(want) {
			t.Fatalf("answers from %v, want exactly %v", seen, want)
		}
	}
	served("a")
	r0 := reloads()

	// 1. Scale out through runtime ops.
	out, err := u.Update(ctx, desired(a, b))
	if err != nil || out.Reloaded || out.Fallback != nil || out.Result.Applied == 0 {
		t.Fatalf("scale-out: %+v, %v", out, err)
	}
	if reloads() != r0 {
		t.Fatal("a runtime update reloaded HAProxy")
	}
	served("a", "b")

	// 2. Drift: the server the next plan adds exists already (added by hand, in maint).
	d3 := desired(a, b, c)
	var added *model.Server
	for _, be := range d3.Backends {
		for i := range be.Servers {
			if be.Servers[i].Addr == "127.0.0.4" {
				added = &be.Servers[i]
				spec, err := render.ServerSpec(d3, dir, *be, *added)
				if err != nil {
					t.Fatal(err)
				}
				if err := socket.AddServer(ctx, admin, be.Name, added.Name, spec); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if added == nil {
		t.Fatal("fixture: no server for endpoint c")
	}
	out, err = u.Update(ctx, d3)
	if err != nil {
		t.Fatalf("update with fallback: %v", err)
	}
	if out.Fallback == nil || !errors.Is(out.Fallback, apply.ErrReloadRequired) || !errors.Is(out.Fallback, socket.ErrExists) || !out.Reloaded {
		t.Fatalf("want a fallback reload after add server found the server: %+v", out)
	}
	if out.Reason.Kind != plan.RuntimeFallback || out.FailedOp != "add_server" {
		t.Fatalf("fallback reload labelled %v (failed op %q), want RuntimeFallback (add_server)", out.Reason, out.FailedOp)
	}
	if reloads() != r0+1 {
		t.Fatalf("reloads %d, want %d", reloads(), r0+1)
	}
	served("a", "b", "c")

	// 3. Back on the runtime path.
	out, err = u.Update(ctx, desired(c))
	if err != nil || out.Reloaded || out.Fallback != nil {
		t.Fatalf("scale-in: %+v, %v", out, err)
	}
	if reloads() != r0+1 {
		t.Fatal("the scale-in reloaded HAProxy")
	}
	served("c")
}
