package plan_test

import (
	"reflect"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// dynamic are the plan options of an HAProxy that adds and deletes backends at runtime (3.4+).
var dynamic = plan.Options{DynamicBackends: true}

// dynamicStep plans from applied to desired on 3.4+, checks that the plan is runtime ops whose
// simulation gives Next, and returns the plan.
func dynamicStep(t *testing.T, applied, desired *model.Config) plan.Plan {
	t.Helper()
	p := plan.ComputeWith(applied, desired, dynamic)
	checkSimulates(t, applied, p)
	return p
}

// TestComputeDynamicAddDelete: on 3.4+ a reload installs no spares, a new Route gets its own
// backend at runtime (added, given its servers, published, then selected by the maps), and a
// deleted Route's backend keeps its servers for one plan, then is unpublished, emptied and deleted.
func TestComputeDynamicAddDelete(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(2)
	in := baseInput(c)
	d1 := translate(t, in, opts)
	applied := plan.ComputeWith(nil, d1, dynamic).Next
	for _, b := range applied.Backends {
		if b.Spare {
			t.Fatalf("a reload on 3.4 installs spare %s", b.Name)
		}
	}

	in2 := withRoute(in, newRoute("app", "new", "new.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationReencrypt, routev1.InsecureEdgeTerminationPolicyRedirect), withDestCA(c.ca)))
	d2 := translate(t, in2, opts)
	p := dynamicStep(t, applied, d2)
	const name = "be_secure:app:new"
	if b := p.Next.Backend(name); b == nil || b.Route != "app/new" || len(b.Servers) != 2 {
		t.Fatalf("Next's backend of the new Route: %+v", b)
	}
	add := indexOf(p.Ops, func(op plan.Op) bool { o, ok := op.(plan.AddBackend); return ok && o.Backend.Name == name })
	server := indexOf(p.Ops, func(op plan.Op) bool { o, ok := op.(plan.AddServer); return ok && o.Backend.Name == name })
	publish := indexOf(p.Ops, func(op plan.Op) bool { o, ok := op.(plan.PublishBackend); return ok && o.Backend == name })
	mapped := indexOf(p.Ops, func(op plan.Op) bool { o, ok := op.(plan.AddMapEntry); return ok && o.Value == name })
	ca := indexOf(p.Ops, func(op plan.Op) bool { _, ok := op.(plan.SetCAFile); return ok })
	if ordered := ca >= 0 && ca < add && add < server && server < publish && publish < mapped; !ordered {
		t.Fatalf("want the CA file, add backend, its servers, publish, then the map entry; ops:\n%s", opsText(p.Ops))
	}
	if again := plan.ComputeWith(p.Next, d2, dynamic); again.NeedsReload() || len(again.Ops) > 0 {
		t.Fatalf("planning again: %v\n%s", again.Structural, opsText(again.Ops))
	}

	// Deleted: the map entry goes, the backend keeps its servers one plan long, Removing.
	applied = p.Next
	p = dynamicStep(t, applied, d1)
	b := p.Next.Backend(name)
	if b == nil || !b.Retired || !b.Removing || b.Route != "" || len(b.Servers) != 2 {
		t.Fatalf("the deleted Route's backend after the first plan: %+v", b)
	}
	for _, op := range p.Ops {
		if _, ok := op.(plan.DelMapEntry); !ok {
			t.Fatalf("first plan after the deletion: want map deletes alone, got %v", op)
		}
	}
	if got := plan.Draining(p.Next); !reflect.DeepEqual(got, []string{name}) {
		t.Fatalf("Draining = %v", got)
	}
	// The next plan deletes it: unpublish, servers, del backend, with the CA file after them.
	applied = p.Next
	p = dynamicStep(t, applied, d1)
	if p.Next.Backend(name) != nil || len(plan.Draining(p.Next)) != 0 {
		t.Fatalf("the backend is still in Next: %+v", p.Next.Backend(name))
	}
	unpublish := indexOf(p.Ops, func(op plan.Op) bool { _, ok := op.(plan.UnpublishBackend); return ok })
	del := indexOf(p.Ops, func(op plan.Op) bool { _, ok := op.(plan.DelBackend); return ok })
	delServer := lastIndexOf(p.Ops, func(op plan.Op) bool { _, ok := op.(plan.DelServer); return ok })
	delCA := indexOf(p.Ops, func(op plan.Op) bool { _, ok := op.(plan.DelCAFile); return ok })
	if ordered := unpublish == 0 && unpublish < delServer && delServer < del && del < delCA; !ordered {
		t.Fatalf("want unpublish, the servers, del backend, then the CA file; ops:\n%s", opsText(p.Ops))
	}
	names := func(c *model.Config) []string {
		var out []string
		for _, b := range c.Backends {
			out = append(out, b.Name)
		}
		return out
	}
	if got, want := names(p.Next), names(plan.ComputeWith(nil, d1, dynamic).Next); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the deletion Next has backends %v, a fresh start %v", got, want)
	}
}

// TestComputeDynamicReturningRoute: a Route deleted and back before its backend is deleted gets
// its backend again (published anew once it is being removed); one whose termination changes gets
// its new backend at runtime and the old one is deleted.
func TestComputeDynamicReturningRoute(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(0)
	in := baseInput(c)
	d1 := translate(t, in, opts)
	applied := plan.ComputeWith(nil, d1, dynamic).Next

	gone := translate(t, withoutRoute(in, "app", "plain"), opts)
	p := dynamicStep(t, applied, gone)
	p = dynamicStep(t, p.Next, d1)
	if b := p.Next.Backend("be_http:app:plain"); b == nil || b.Removing || b.Retired || b.Route != "app/plain" {
		t.Fatalf("the returning Route's backend: %+v", b)
	}
	if indexOf(p.Ops, func(op plan.Op) bool {
		o, ok := op.(plan.PublishBackend)
		return ok && o.Backend == "be_http:app:plain"
	}) < 0 {
		t.Fatalf("the returning Route's backend is not published again; ops:\n%s", opsText(p.Ops))
	}

	edge := translate(t, changeRoute(in, "app", "plain",
		withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyAllow), withCert(c.example)), opts)
	p = dynamicStep(t, p.Next, edge)
	if b := p.Next.Backend("be_edge_http:app:plain"); b == nil || b.Route != "app/plain" {
		t.Fatalf("the edge backend: %+v", b)
	}
	if b := p.Next.Backend("be_http:app:plain"); b == nil || !b.Removing {
		t.Fatalf("the old backend: %+v", b)
	}
}

// TestComputeDynamicOwnLines: a new Route whose options its profile cannot carry, and a served
// Route whose options change, are still reloads with their reason.
func TestComputeDynamicOwnLines(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(0)
	in := baseInput(c)
	applied := plan.ComputeWith(nil, translate(t, in, opts), dynamic).Next

	allow := withRoute(in, newRoute("app", "walled", "walled.example.com", 10, withService("s-extra"),
		withAnnotation("haproxy.router.openshift.io/ip_whitelist", "10.0.0.0/8")))
	p := plan.ComputeWith(applied, translate(t, allow, opts), dynamic)
	if r := p.Reason(); r.Kind != plan.NewBackend || r.Subject != "be_http:app:walled" {
		t.Fatalf("a new Route with an allowlist: %v", p.Structural)
	}
	for _, b := range p.Next.Backends {
		if b.Spare {
			t.Fatalf("the reload on 3.4 installs spare %s", b.Name)
		}
	}
	ratelimited := changeRoute(in, "app", "plain", withAnnotation("haproxy.router.openshift.io/rate-limit-connections", "true"),
		withAnnotation("haproxy.router.openshift.io/rate-limit-connections.concurrent-tcp", "10"))
	if p := plan.ComputeWith(applied, translate(t, ratelimited, opts), dynamic); p.Reason().Kind != plan.BackendOptionsChanged {
		t.Fatalf("a rate limit added: %v", p.Structural)
	}
}

// TestComputeDynamicHandOver: a served Route whose balance changes is recreated from its new
// profile without a reload: a hand-over backend from the new profile takes its map entries while its
// own backend is deleted, then its own backend comes back from the new profile and the hand-over
// backend goes. The Route keeps its cookie name throughout.
func TestComputeDynamicHandOver(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(0)
	in := baseInput(c)
	applied := plan.ComputeWith(nil, translate(t, in, opts), dynamic).Next
	const own, next = "be_edge_http:app:edge", "be_edge_http:app:edge_next"
	cookie, _ := applied.MapValue(model.MapCookieNames, own)
	d := translate(t, changeRoute(in, "app", "edge", withAnnotation("haproxy.router.openshift.io/balance", "leastconn")), opts)

	// 1. The hand-over backend, from the new profile, takes the Route's map entries.
	p := dynamicStep(t, applied, d)
	if b := p.Next.Backend(next); b == nil || b.Balance != "leastconn" || b.Route != "app/edge" {
		t.Fatalf("the hand-over backend: %+v", b)
	}
	if b := p.Next.Backend(own); b == nil || !b.Removing || len(b.Servers) == 0 {
		t.Fatalf("the Route's own backend after the first plan: %+v", b)
	}
	if v, _ := p.Next.MapValue(model.MapCookieNames, next); v != cookie || cookie == "" {
		t.Fatalf("the hand-over backend's cookie name %q, want the Route's %q", v, cookie)
	}
	if indexOf(p.Ops, func(op plan.Op) bool { o, ok := op.(plan.AddBackend); return ok && o.Backend.Name == next }) < 0 {
		t.Fatalf("no add backend %s; ops:\n%s", next, opsText(p.Ops))
	}
	// 2. The own backend is deleted; 3. it comes back from the new profile; 4. the hand-over goes.
	steps := 0
	for ; len(plan.Draining(p.Next)) > 0 && steps < 5; steps++ {
		p = dynamicStep(t, p.Next, d)
	}
	if steps != 3 || len(plan.Draining(p.Next)) > 0 {
		t.Fatalf("%d plans after the hand-over, still draining %v; want 3", steps, plan.Draining(p.Next))
	}
	b := p.Next.Backend(own)
	if b == nil || b.Balance != "leastconn" || b.Route != "app/edge" || p.Next.Backend(next) != nil {
		t.Fatalf("after the hand-over: own %+v, hand-over %+v", b, p.Next.Backend(next))
	}
	if v, _ := p.Next.MapValue(model.MapCookieNames, own); v != cookie {
		t.Fatalf("cookie name %q after the hand-over, want %q", v, cookie)
	}
	if again := plan.ComputeWith(p.Next, d, dynamic); again.NeedsReload() || len(again.Ops) > 0 {
		t.Fatalf("planning again: %v\n%s", again.Structural, opsText(again.Ops))
	}
}

// TestComputeDynamicKeepsStickTables: HAProxy never deletes a backend with a stick-table, so a
// rate-limited Route's backend is retired as before 3.4 (emptied, kept until a reload).
func TestComputeDynamicKeepsStickTables(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(0)
	in := withRoute(baseInput(c), newRoute("app", "limited", "limited.example.com", 10, withService("s-extra"),
		withAnnotation("haproxy.router.openshift.io/rate-limit-connections", "true"),
		withAnnotation("haproxy.router.openshift.io/rate-limit-connections.concurrent-tcp", "10")))
	applied := plan.ComputeWith(nil, translate(t, in, opts), dynamic).Next
	if b := applied.Backend("be_http:app:limited"); b == nil || b.RateLimit == nil {
		t.Fatalf("the rate-limited backend: %+v", b)
	}
	gone := translate(t, withoutRoute(in, "app", "limited"), opts)
	p := dynamicStep(t, applied, gone)
	p = dynamicStep(t, p.Next, gone)
	b := p.Next.Backend("be_http:app:limited")
	if b == nil || !b.Retired || b.Removing || len(b.Servers) != 0 {
		t.Fatalf("the rate-limited backend after its Route went: %+v", b)
	}
	for _, op := range p.Ops {
		if _, ok := op.(plan.DelBackend); ok {
			t.Fatalf("a backend with a stick-table is deleted: %v", op)
		}
	}
}
