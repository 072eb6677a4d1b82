package plan_test

import (
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// Matchers of ops.

func isMapAdd(name string) func(plan.Op) bool {
	return func(op plan.Op) bool {
		switch o := op.(type) {
		case plan.AddMapEntry:
			return name == "" || o.Map == name
		case plan.SetMapEntry:
			return name == "" || o.Map == name
		}
		return false
	}
}

func isMapDel(name string) func(plan.Op) bool {
	return func(op plan.Op) bool {
		o, ok := op.(plan.DelMapEntry)
		return ok && (name == "" || o.Map == name)
	}
}

func isMapOp(op plan.Op) bool { return isMapAdd("")(op) || isMapDel("")(op) }

func isServerOf(backend string) func(plan.Op) bool {
	return func(op plan.Op) bool {
		switch o := op.(type) {
		case plan.AddServer:
			return o.Backend.Name == backend
		case plan.DelServer:
			return o.Backend == backend
		case plan.SetServerState:
			return o.Backend == backend
		case plan.SetServerWeight:
			return o.Backend == backend
		case plan.EnableHealth:
			return o.Backend == backend
		case plan.DisableHealth:
			return o.Backend == backend
		}
		return false
	}
}

func isType[T plan.Op](op plan.Op) bool { _, ok := op.(T); return ok }

// before fails unless every op matching a comes before every op matching b, and both occur.
func before(t *testing.T, ops []plan.Op, what string, a, b func(plan.Op) bool) {
	t.Helper()
	la, fb := lastIndexOf(ops, a), indexOf(ops, b)
	if la < 0 || fb < 0 {
		t.Fatalf("%s: missing ops (last first-kind %d, first second-kind %d):\n%s", what, la, fb, opsText(ops))
	}
	if la > fb {
		t.Fatalf("%s: op %d must come before op %d:\n%s", what, la, fb, opsText(ops))
	}
}

// runtimePlan plans from WithPool(Translate(from)) to Translate(to) and checks the plan.
func runtimePlan(t *testing.T, from, to mapping.Input) plan.Plan {
	t.Helper()
	opts := testOptions(2)
	applied := plan.WithPool(translate(t, from, opts))
	d := translate(t, to, opts)
	p := plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	return p
}

// isRedirectSet matches an add or set of the redirect map writing value.
func isRedirectSet(value string) func(plan.Op) bool {
	return func(op plan.Op) bool {
		switch o := op.(type) {
		case plan.AddMapEntry:
			return o.Map == model.MapHTTPRedirect && o.Value == value
		case plan.SetMapEntry:
			return o.Map == model.MapHTTPRedirect && o.Value == value
		}
		return false
	}
}

// TestOrderRedirectAroundHTTPMap: the redirect map's entries go where no request meets a state
// worse than before or after: a redirect is in before the entries it guards and goes after them, a
// "0" (a Route that does not redirect) the other way round.
func TestOrderRedirectAroundHTTPMap(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	r := newRoute("app", "redir", "redir.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect))
	add := runtimePlan(t, in, withRoute(in, r))
	before(t, add.Ops, "redirect entry before the edge entry", isRedirectSet("1"), isMapAdd(model.MapEdgeReencrypt))
	del := runtimePlan(t, withRoute(in, r), in)
	before(t, del.Ops, "edge entry removed before the redirect", isMapDel(model.MapEdgeReencrypt), isMapDel(model.MapHTTPRedirect))

	// Allow → Redirect: the cookie's Secure and SameSite (an attribute, first: OpenShift's cookie of a
	// Route served on plain HTTP has neither), the redirect set before the plain-HTTP entry goes; and
	// back: the plain-HTTP entry is in before the redirect is unset, and the attributes go last.
	allow := newRoute("app", "redir", "redir.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyAllow))
	flip := runtimePlan(t, withRoute(in, allow), withRoute(in, r))
	if len(flip.Ops) != 3 || !isMapAdd(model.MapCookieSameSite)(flip.Ops[0]) || !isRedirectSet("1")(flip.Ops[1]) || !isMapDel(model.MapHTTP)(flip.Ops[2]) {
		t.Fatalf("Allow → Redirect: want the cookie attributes, the redirect set, then the plain-HTTP entry removed:\n%s", opsText(flip.Ops))
	}
	back := runtimePlan(t, withRoute(in, r), withRoute(in, allow))
	if len(back.Ops) != 3 || !isMapAdd(model.MapHTTP)(back.Ops[0]) || !isRedirectSet("0")(back.Ops[1]) || !isMapDel(model.MapCookieSameSite)(back.Ops[2]) {
		t.Fatalf("Redirect → Allow: want the plain-HTTP entry added, the redirect unset, then the cookie attributes removed:\n%s", opsText(back.Ops))
	}

	// A plain Route under the redirecting one: its "0" goes in after its plain-HTTP entry, and out
	// before it (in between, its requests are redirected, as without it).
	withRedir := withRoute(in, r)
	plain := newRoute("app", "redir-api", "redir.example.com", 11, withService("s-extra"), withPath("/api"))
	under := runtimePlan(t, withRedir, withRoute(withRedir, plain))
	before(t, under.Ops, "plain-HTTP entries before the redirect's 0", isMapAdd(model.MapHTTP), isRedirectSet("0"))
	gone := runtimePlan(t, withRoute(withRedir, plain), withRedir)
	before(t, gone.Ops, "the redirect's 0 removed before the plain-HTTP entries", isMapDel(model.MapHTTPRedirect), isMapDel(model.MapHTTP))
}

func TestOrderAddsBeforeDeletes(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	// Host and path change of an existing Route: new keys in, then old keys out.
	p := runtimePlan(t, in, changeRoute(in, "app", "plain", func(r *routev1.Route) {
		r.Spec.Host, r.Spec.Path = "moved.example.com", "/v2"
	}))
	before(t, p.Ops, "map adds before map deletes", isMapAdd(""), isMapDel(""))
	// Two keys each in the plain-HTTP map and the redirect map.
	if n := len(p.Ops); n != 8 {
		t.Fatalf("want 4 adds and 4 deletes, got:\n%s", opsText(p.Ops))
	}
}

func TestOrderCertificatesBeforeMaps(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	r := newRoute("app", "tls", "tls.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationEdge, ""), withCert(c.other))
	p := runtimePlan(t, in, withRoute(in, r))
	before(t, p.Ops, "certificate stored before it is listed", isType[plan.SetCertificate], isType[plan.AddCrtListEntry])
	before(t, p.Ops, "certificate listed before map entries", isType[plan.AddCrtListEntry], isMapOp)

	// Removal: the map entries go first, then the crt-list line, then the certificate.
	del := runtimePlan(t, withRoute(in, r), in)
	before(t, del.Ops, "map deletes before the crt-list line goes", isMapOp, isType[plan.DelCrtListEntry])
	before(t, del.Ops, "crt-list line before the certificate", isType[plan.DelCrtListEntry], isType[plan.DelCertificate])

	// Rotation is one SetCertificate. Here the new certificate is the one Route app/edge serves too:
	// a shared certificate offers no HTTP/2 (OpenShift's rule), so both crt-list lines are replaced
	// without h2, after the certificate is stored.
	rot := runtimePlan(t, withRoute(in, r), withRoute(in, newRoute("app", "tls", "tls.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationEdge, ""), withCert(c.example))))
	if len(rot.Ops) != 5 || rot.Ops[0].(plan.SetCertificate).New {
		t.Fatalf("rotation: want one SetCertificate and two crt-list lines replaced:\n%s", opsText(rot.Ops))
	}
	for _, op := range rot.Ops[1:] {
		if a, ok := op.(plan.AddCrtListEntry); ok && a.Cert.ALPN != "" {
			t.Fatalf("rotation to a shared certificate: %s still offers %s", a.Cert.Name, a.Cert.ALPN)
		}
	}
	// Rotated back to a certificate of its own, the Route offers HTTP/2 again, and so does app/edge.
	back := runtimePlan(t, withRoute(in, newRoute("app", "tls", "tls.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationEdge, ""), withCert(c.example))), withRoute(in, r))
	if len(back.Ops) != 5 {
		t.Fatalf("rotation to an unshared certificate: want one SetCertificate and two crt-list lines replaced:\n%s", opsText(back.Ops))
	}
	// A host change moves the SNI filter: del + add of the crt-list line, before the map changes.
	sni := runtimePlan(t, withRoute(in, r), withRoute(in, newRoute("app", "tls", "tls2.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationEdge, ""), withCert(c.other))))
	before(t, sni.Ops, "crt-list line replaced", isType[plan.DelCrtListEntry], isType[plan.AddCrtListEntry])
	before(t, sni.Ops, "crt-list line before map entries", isType[plan.AddCrtListEntry], isMapOp)
}

func TestOrderServersAroundMaps(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	r := newRoute("app", "new", "new.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationReencrypt, routev1.InsecureEdgeTerminationPolicyRedirect), withDestCA(c.ca))
	p := runtimePlan(t, in, withRoute(in, r))
	spare := model.SpareBackendName(model.KindReencrypt, "random", 0)
	before(t, p.Ops, "CA file before the servers that verify with it", isType[plan.SetCAFile], isServerOf(spare))
	before(t, p.Ops, "servers before map entries pointing at the backend", isServerOf(spare), isMapOp)
	wantSeq := []func(plan.Op) bool{isType[plan.AddServer], isType[plan.EnableHealth]}
	first := indexOf(p.Ops, isType[plan.AddServer])
	for i, m := range wantSeq {
		if !m(p.Ops[first+i]) {
			t.Fatalf("want add server, enable health:\n%s", opsText(p.Ops))
		}
	}
	isReady := func(op plan.Op) bool {
		o, ok := op.(plan.SetServerState)
		return ok && o.State == model.StateReady
	}
	before(t, p.Ops, "adds before any new server is ready", isType[plan.AddServer], isReady)
	if a := p.Ops[first].(plan.AddServer); a.Backend.Name != spare || a.Backend.TLS == nil || a.Backend.TLS.CAFile != "app_new.pem" || a.Backend.Servers != nil {
		t.Fatalf("AddServer backend %+v", a.Backend)
	}

	// Deleting the Route: map entries go at once; the released spare's servers at the next plan
	// (requests that looked the old entries up still reach them), then the CA.
	applied2 := p.Next
	d := translate(t, in, testOptions(2))
	del := plan.Compute(applied2, d)
	checkRuntimePlan(t, applied2, d, del)
	if indexOf(del.Ops, isMapDel("")) < 0 || indexOf(del.Ops, isServerOf(spare)) >= 0 {
		t.Fatalf("want the map entries deleted and the spare's servers kept:\n%s", opsText(del.Ops))
	}
	drain := plan.Compute(del.Next, d)
	checkRuntimePlan(t, del.Next, d, drain)
	if indexOf(drain.Ops, isMapOp) >= 0 || indexOf(drain.Ops, isServerOf(spare)) < 0 {
		t.Fatalf("want the spare's servers removed at the next plan, and no map op:\n%s", opsText(drain.Ops))
	}
	before(t, drain.Ops, "servers before the CA file", isServerOf(spare), isType[plan.DelCAFile])
	maintBeforeDel(t, drain.Ops)

	// Same for a Route under its own name (retired).
	ret := runtimePlan(t, in, withoutRoute(in, "app", "plain"))
	if indexOf(ret.Ops, isMapDel("")) < 0 || indexOf(ret.Ops, isServerOf("be_http:app:plain")) >= 0 {
		t.Fatalf("retired: want the map entries deleted and the servers kept:\n%s", opsText(ret.Ops))
	}
}

func TestOrderWithinBackend(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	// s-plain's pods move: one address replaced, one kept.
	in2 := in
	in2.EndpointSlices = append(in2.EndpointSlices[:0:0], in.EndpointSlices...)
	in2.EndpointSlices[0] = newSlice("app", "s-plain", "127.0.1.1", "127.0.9.9")
	p := runtimePlan(t, in, in2)
	b := "be_http:app:plain"
	before(t, p.Ops, "adds before removals", isType[plan.AddServer], isType[plan.DelServer])
	before(t, p.Ops, "new server ready before removals", func(op plan.Op) bool {
		o, ok := op.(plan.SetServerState)
		return ok && o.State == model.StateReady
	}, func(op plan.Op) bool {
		o, ok := op.(plan.SetServerState)
		return ok && o.State == model.StateMaint
	})
	for _, op := range p.Ops {
		if !isServerOf(b)(op) {
			t.Fatalf("unexpected op %s", op)
		}
	}
	if len(p.Ops) != 5 {
		t.Fatalf("want add, health, ready, maint, del:\n%s", opsText(p.Ops))
	}

	// Weights of a split Route: only SetServerWeight.
	split := changeRoute(in, "app", "plain", withAlternate("s-extra", 50))
	w := runtimePlan(t, split, changeRoute(in, "app", "plain", withAlternate("s-extra", 200)))
	for _, op := range w.Ops {
		if !isType[plan.SetServerWeight](op) {
			t.Fatalf("weight change: unexpected op %s", op)
		}
	}
	if len(w.Ops) != 4 {
		t.Fatalf("want 4 weight changes:\n%s", opsText(w.Ops))
	}
}

func TestOrderBackendsByName(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	in2 := in
	in2.EndpointSlices = append(in2.EndpointSlices[:0:0], in.EndpointSlices...)
	in2.EndpointSlices[3] = newSlice("app", "s-tcp", "127.0.2.1")
	in2.EndpointSlices[0] = newSlice("app", "s-plain", "127.0.2.2")
	in2.EndpointSlices[1] = newSlice("app", "s-edge", "127.0.2.3")
	p := runtimePlan(t, in, in2)
	var order []string
	for _, op := range p.Ops {
		if a, ok := op.(plan.AddServer); ok {
			order = append(order, a.Backend.Name)
		}
	}
	want := []string{"be_edge_http:app:edge", "be_http:app:plain", "be_tcp:app:tcp"}
	if len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Fatalf("backend order %v, want %v", order, want)
	}
}

// maintBeforeDel fails unless every DelServer directly follows the maint of the same server.
func maintBeforeDel(t *testing.T, ops []plan.Op) {
	t.Helper()
	n := 0
	for i, op := range ops {
		d, ok := op.(plan.DelServer)
		if !ok {
			continue
		}
		n++
		if i == 0 {
			t.Fatalf("DelServer first:\n%s", opsText(ops))
		}
		if m, ok := ops[i-1].(plan.SetServerState); !ok || m.Backend != d.Backend || m.Server != d.Server || m.State != model.StateMaint {
			t.Fatalf("op %d: DelServer without maint just before:\n%s", i, opsText(ops))
		}
	}
	if n == 0 {
		t.Fatalf("no DelServer:\n%s", opsText(ops))
	}
}
