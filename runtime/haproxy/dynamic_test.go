package haproxy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// TestDynamicBackendsAddAndDelete (HAProxy 3.4+): a new Route gets its own backend, under its own
// name, without a reload, and a deleted Route's backend leaves HAProxy without one: the map entry
// first, then, at the plan after (the one that a deletion makes due), the backend itself.
func TestDynamicBackendsAddAndDelete(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	dir := testkit.TempDir(t)
	ro := render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}
	inst, h := startInstance(t, dir, ro, routesTo(t, opts, web, "a.example.com"))
	out, err := h.Cmd("show info")
	if err != nil {
		t.Fatal(err)
	}
	_, version, _ := strings.Cut(out, "Version: ")
	version, _, _ = strings.Cut(version, "\n")
	v, err := socket.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	caps := socket.CapabilitiesOf(v)
	if !caps.DynamicBackends || !caps.SafeBackendDeletion {
		t.Skipf("HAProxy %s adds no backend at runtime (3.4.4+); the spare pool serves new Routes", caps.Version)
	}
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	backends := func() string {
		t.Helper()
		list, err := h.Cmd("show backend")
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	// The first update on a fresh start: the reload that drops the spare pool of the start, which
	// did not know the version yet, or nothing.
	if _, err := inst.Update(ctx, routesTo(t, opts, web, "a.example.com")); err != nil {
		t.Fatal(err)
	}

	up, err := inst.Update(ctx, routesTo(t, opts, web, "a.example.com", "b.example.com"))
	if err != nil || up.Reloaded {
		t.Fatalf("adding a Route: reloaded %v (%v), err %v", up.Reloaded, up.Reason, err)
	}
	if up.Result.Counts["add_backend"] != 1 || up.Result.Counts["publish_backend"] != 1 {
		t.Fatalf("adding a Route: ops %v", up.Result.Counts)
	}
	if !strings.Contains(backends(), "be_http:app:b\n") {
		t.Fatalf("no backend be_http:app:b in\n%s", backends())
	}
	if status, backend, _ := client.Get(t, "http://b.example.com/"); status != http.StatusOK || backend != "web" {
		t.Fatalf("the new Route answers %d from %q", status, backend)
	}
	if strings.Contains(backends(), ":_spare:") {
		t.Fatalf("HAProxy 3.4 runs spares:\n%s", backends())
	}

	// A balance change: the Route is recreated from its new profile through a hand-over backend,
	// without a reload, and keeps answering.
	var m testbed.Manifests
	m.Service("app", "web", web)
	m.Route("app", "a", "a.example.com", "", "web")
	m.Route("app", "b", "b.example.com", "", "web", testbed.Annotate(mapping.AnnotationBalance, "leastconn"))
	leastconn, problems := mapping.Translate(m.Input(t), opts)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for i := 0; i == 0 || len(plan.Draining(inst.Applied())) > 0; i++ {
		if i == 6 {
			t.Fatalf("still draining %v after %d plans", plan.Draining(inst.Applied()), i)
		}
		out, err := inst.Update(ctx, leastconn)
		if err != nil || out.Reloaded {
			t.Fatalf("balance change, plan %d: reloaded %v (%v), err %v", i+1, out.Reloaded, out.Reason, err)
		}
		if status, backend, _ := client.Get(t, "http://b.example.com/"); status != http.StatusOK || backend != "web" {
			t.Fatalf("during the hand-over (plan %d) the Route answers %d from %q", i+1, status, backend)
		}
	}
	if b := inst.Applied().Backend("be_http:app:b"); b == nil || b.Balance != "leastconn" || strings.Contains(backends(), "_next") {
		t.Fatalf("after the hand-over: %+v; HAProxy runs\n%s", b, backends())
	}

	del, err := inst.Update(ctx, routesTo(t, opts, web, "a.example.com"))
	if err != nil || del.Reloaded {
		t.Fatalf("deleting the Route: reloaded %v (%v), err %v", del.Reloaded, del.Reason, err)
	}
	if status, _, _ := client.Get(t, "http://b.example.com/"); status == http.StatusOK {
		t.Fatal("the deleted Route still answers")
	}
	if got := plan.Draining(inst.Applied()); len(got) != 1 || got[0] != "be_http:app:b" {
		t.Fatalf("Draining after the deletion = %v", got)
	}
	// The plans after it delete the backend. HAProxy defers that while a connection to its server
	// is still attached (the client's request above may have left an idle one): the backend stays
	// Removing and the next plan retries, as the controller's retry does every 2 s.
	deleted := 0
	for try := 0; len(plan.Draining(inst.Applied())) > 0; try++ {
		if try == 50 {
			t.Fatalf("be_http:app:b still being deleted after %d plans: %v", try, plan.Draining(inst.Applied()))
		}
		if try > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		again, err := inst.Update(ctx, routesTo(t, opts, web, "a.example.com"))
		if err != nil || again.Reloaded {
			t.Fatalf("a plan after the deletion: reloaded %v (%v), ops %v, err %v", again.Reloaded, again.Reason, again.Result.Counts, err)
		}
		deleted += again.Result.Counts["del_backend"]
	}
	if deleted != 1 {
		t.Fatalf("%d del backend after the deletion, want 1", deleted)
	}
	if strings.Contains(backends(), "be_http:app:b\n") {
		t.Fatalf("be_http:app:b is still there:\n%s", backends())
	}
	if len(plan.Draining(inst.Applied())) != 0 || inst.Applied().Backend("be_http:app:b") != nil {
		t.Fatal("the applied state still has the deleted backend")
	}
	if status, backend, _ := client.Get(t, "http://a.example.com/"); status != http.StatusOK || backend != "web" {
		t.Fatalf("the other Route answers %d from %q", status, backend)
	}
}
