package plan_test

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// baseInput returns one Route of each kind in namespace "app", each with its own Service of two
// endpoints; edge has its own certificate and a Redirect policy, reencrypt a destination CA.
func baseInput(c testCerts) mapping.Input {
	in := mapping.Input{
		Routes: []*routev1.Route{
			newRoute("app", "plain", "plain.example.com", 1, withService("s-plain"), withPath("/api")),
			newRoute("app", "edge", "edge.example.com", 2, withService("s-edge"),
				withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect), withCert(c.example)),
			newRoute("app", "secure", "secure.example.com", 3, withService("s-secure"),
				withTLS(routev1.TLSTerminationReencrypt, routev1.InsecureEdgeTerminationPolicyNone), withDestCA(c.ca)),
			newRoute("app", "tcp", "tcp.example.com", 4, withService("s-tcp"),
				withTLS(routev1.TLSTerminationPassthrough, routev1.InsecureEdgeTerminationPolicyNone)),
		},
	}
	for i, svc := range []string{"s-plain", "s-edge", "s-secure", "s-tcp", "s-extra"} {
		in.Services = append(in.Services, newService("app", svc))
		in.EndpointSlices = append(in.EndpointSlices, newSlice("app", svc, "127.0.1."+strconv.Itoa(2*i+1), "127.0.1."+strconv.Itoa(2*i+2)))
	}
	return in
}

// withRoute returns a copy of in with r added.
func withRoute(in mapping.Input, r *routev1.Route) mapping.Input {
	in.Routes = append(append([]*routev1.Route{}, in.Routes...), r)
	return in
}

// withoutRoute returns a copy of in without the Route ns/name.
func withoutRoute(in mapping.Input, ns, name string) mapping.Input {
	var routes []*routev1.Route
	for _, r := range in.Routes {
		if r.Namespace != ns || r.Name != name {
			routes = append(routes, r)
		}
	}
	in.Routes = routes
	return in
}

// changeRoute returns a copy of in where the Route ns/name is changed by opts.
func changeRoute(in mapping.Input, ns, name string, opts ...routeOpt) mapping.Input {
	routes := make([]*routev1.Route, len(in.Routes))
	for i, r := range in.Routes {
		if r.Namespace == ns && r.Name == name {
			r = r.DeepCopy()
			for _, o := range opts {
				o(r)
			}
		}
		routes[i] = r
	}
	in.Routes = routes
	return in
}

func TestComputeInitial(t *testing.T) {
	c := loadCerts(t)
	d := translate(t, baseInput(c), testOptions(2))
	p := plan.Compute(nil, d)
	if !reflect.DeepEqual(p.Structural, []plan.Reason{{Kind: plan.Initial}}) || p.Ops != nil {
		t.Fatalf("got reasons %v and %d ops, want [Initial] and none", p.Structural, len(p.Ops))
	}
	if !reflect.DeepEqual(p.Next, plan.WithPool(d)) {
		t.Fatal("Next is not WithPool(desired)")
	}
}

func TestComputeNoChange(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	opts := testOptions(2)
	d := translate(t, in, opts)
	pooled := plan.WithPool(d)

	// A Next with a claimed spare, a released spare and a retired backend.
	d2 := translate(t, withRoute(withoutRoute(in, "app", "plain"), newRoute("app", "new", "new.example.com", 9, withService("s-extra"))), opts)
	p := plan.Compute(pooled, d2)
	checkRuntimePlan(t, pooled, d2, p)
	mixed := settle(t, p.Next, d2)

	for name, tc := range map[string]struct{ applied, desired *model.Config }{
		"pool and desired":       {pooled, d},
		"pool and itself":        {pooled, pooled},
		"runtime Next, itself":   {mixed, mixed},
		"runtime Next, desired":  {mixed, d2},
		"desired without a pool": {d, d},
	} {
		t.Run(name, func(t *testing.T) {
			p := plan.Compute(tc.applied, tc.desired)
			if p.NeedsReload() || len(p.Ops) > 0 {
				t.Fatalf("reasons %v, ops:\n%s", p.Structural, opsText(p.Ops))
			}
		})
	}
}

// TestPoolTakesRouterCookieName: with ROUTER_COOKIE_NAME every Route's cookie has that name, so the
// spares have it too, and a new Route claims one without a reload and hands out the name the stock
// router would.
func TestPoolTakesRouterCookieName(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(3)
	opts.CookieName = "ROUTERID"
	in := baseInput(c)
	d := translate(t, in, opts)
	for _, b := range plan.WithPool(d).Backends {
		if b.Kind != model.KindPassthrough && (b.Cookie == nil || b.Cookie.Name != "ROUTERID") {
			t.Errorf("backend %s (spare %v): cookie %+v, want ROUTERID", b.Name, b.Spare, b.Cookie)
		}
	}
	r := newRoute("app", "fresh", "fresh.example.com", 10, withService("s-extra"))
	if p := plan.Compute(plan.WithPool(d), translate(t, withRoute(in, r), opts)); p.NeedsReload() {
		t.Errorf("a new Route with the router's cookie name: reload %v, want a spare", p.Structural)
	}
}

func TestWithPool(t *testing.T) {
	c := loadCerts(t)
	for name, tc := range map[string]struct {
		lb, tcp  string
		variants int
	}{
		"defaults":           {"random", "source", 8},
		"roundrobin default": {"roundrobin", "roundrobin", 4},
		"leastconn http":     {"leastconn", "roundrobin", 7},
	} {
		t.Run(name, func(t *testing.T) {
			opts := testOptions(3)
			opts.LoadBalanceAlgorithm, opts.TCPBalanceScheme = tc.lb, tc.tcp
			d := translate(t, baseInput(c), opts)
			pooled := plan.WithPool(d)
			if err := pooled.Validate(); err != nil {
				t.Fatal(err)
			}
			spares := 0
			for _, b := range pooled.Backends {
				if !b.Spare {
					continue
				}
				spares++
				if b.Route != "" || len(b.Servers) != 0 || b.Retired || b.Mode != b.Kind.Mode() {
					t.Errorf("spare %s: %+v", b.Name, b)
				}
				if (b.Kind == model.KindPassthrough) != (b.Cookie == nil) {
					t.Errorf("spare %s: cookie %+v", b.Name, b.Cookie)
				}
				if b.Cookie != nil && (b.Cookie.Name != model.DefaultCookieName(b.Name) || b.Cookie.Key != model.DefaultCookieKey(b.Name)) {
					t.Errorf("spare %s: cookie %+v", b.Name, b.Cookie)
				}
				if b.TLS != nil {
					t.Errorf("spare %s: TLS %+v", b.Name, b.TLS)
				}
				if !strings.Contains(b.Name, ":"+model.SpareNamespace+":") || !strings.HasSuffix(b.Name, "-00") && !strings.HasSuffix(b.Name, "-01") && !strings.HasSuffix(b.Name, "-02") {
					t.Errorf("spare name %s", b.Name)
				}
			}
			if spares != 3*tc.variants || len(pooled.Backends) != len(d.Backends)+spares {
				t.Fatalf("%d spares, %d backends; want %d spares", spares, len(pooled.Backends), 3*tc.variants)
			}
			if pooled.Backend(model.SpareBackendName(model.KindPassthrough, tc.tcp, 2)) == nil ||
				pooled.Backend(model.SpareBackendName(model.KindEdge, "roundrobin", 0)) == nil {
				t.Fatal("expected spare names missing")
			}
			if len(d.Backends) != 4 {
				t.Fatal("WithPool modified desired")
			}
			renderCheck(t, pooled, "/var/lib/haproxy", c)
		})
	}
}

func TestComputeStructural(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	extra := func(opts ...routeOpt) *routev1.Route {
		return newRoute("app", "extra", "extra.example.com", 10, append([]routeOpt{withService("s-extra")}, opts...)...)
	}
	for name, tc := range map[string]struct {
		pool   int
		change func(mapping.Options) (mapping.Input, mapping.Options)
		want   []plan.Reason
	}{
		"router name only": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			o.RouterName = "other"
			return in, o
		}, nil},
		"check interval": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			o.CheckInterval = "2s"
			return in, o
		}, []plan.Reason{{Kind: plan.GlobalChanged, Subject: "CheckInterval", Detail: "5000ms → 2s"}}},
		"connect timeout": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			o.Timeouts.Connect = "1s"
			return in, o
		}, []plan.Reason{{Kind: plan.GlobalChanged, Subject: "Timeouts.Connect", Detail: "5s → 1s"}}},
		"http port": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			o.HTTPPort = 8080
			return in, o
		}, []plan.Reason{
			{Kind: plan.FrontendChanged, Subject: "public", Detail: "public http :80 → public http :8080"},
			{Kind: plan.GlobalChanged, Subject: "HTTPPort", Detail: "80 → 8080"},
		}},
		"balance annotation": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			return changeRoute(in, "app", "plain", withAnnotation(mapping.AnnotationBalance, "leastconn")), o
		}, []plan.Reason{{Kind: plan.BackendOptionsChanged, Subject: "be_http:app:plain", Detail: "balance"}}},
		"alternate backend makes roundrobin, no spare": {0, func(o mapping.Options) (mapping.Input, mapping.Options) {
			return changeRoute(in, "app", "plain", withAlternate("s-extra", 50)), o
		}, []plan.Reason{{Kind: plan.BackendOptionsChanged, Subject: "be_http:app:plain", Detail: "balance"}}},
		"allowlist on a new route": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			return withRoute(in, extra(withAnnotation(mapping.AnnotationIPAllowlist, "10.0.0.0/8"))), o
		}, []plan.Reason{{Kind: plan.NewBackend, Subject: "be_http:app:extra", Detail: "non-default options: allowlist"}}},
		"leastconn on a new route": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			return withRoute(in, extra(withAnnotation(mapping.AnnotationBalance, "leastconn"))), o
		}, []plan.Reason{{Kind: plan.NewBackend, Subject: "be_http:app:extra", Detail: "non-default options: balance"}}},
		"no pool": {0, func(o mapping.Options) (mapping.Input, mapping.Options) {
			return withRoute(in, extra()), o
		}, []plan.Reason{{Kind: plan.PoolExhausted, Subject: "http/random", Detail: "no free spare for be_http:app:extra"}}},
		"reencrypt with an unloaded default CA": {2, func(o mapping.Options) (mapping.Input, mapping.Options) {
			o.DefaultDestinationCAFile = "/etc/ssl/default-ca.pem"
			return withRoute(in, extra(withTLS(routev1.TLSTerminationReencrypt, ""))), o
		}, []plan.Reason{{Kind: plan.NewBackend, Subject: "be_secure:app:extra", Detail: "non-default options: tls (default destination CA /etc/ssl/default-ca.pem is not loaded)"}}},
	} {
		t.Run(name, func(t *testing.T) {
			applied := plan.WithPool(translate(t, in, testOptions(tc.pool)))
			in2, opts := tc.change(testOptions(tc.pool))
			d := translate(t, in2, opts)
			p := plan.Compute(applied, d)
			if !reflect.DeepEqual(p.Structural, tc.want) {
				t.Fatalf("reasons\n got %v\nwant %v", p.Structural, tc.want)
			}
			if p.NeedsReload() {
				if p.Ops != nil || !reflect.DeepEqual(p.Next, plan.WithPool(d)) {
					t.Fatal("a reload plan must have no ops and Next = WithPool(desired)")
				}
				return
			}
			checkRuntimePlan(t, applied, d, p)
		})
	}
}

func TestComputeDefaultCAInUse(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(2)
	opts.DefaultDestinationCAFile = "/etc/ssl/default-ca.pem"
	in := withRoute(baseInput(c), newRoute("app", "dflt", "dflt.example.com", 8, withService("s-extra"), withTLS(routev1.TLSTerminationReencrypt, "")))
	applied := plan.WithPool(translate(t, in, opts))
	d := translate(t, withRoute(in, newRoute("app", "dflt2", "dflt2.example.com", 9, withService("s-extra"), withTLS(routev1.TLSTerminationReencrypt, ""))), opts)
	p := plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	spare := p.Next.Backend(model.SpareBackendName(model.KindReencrypt, "random", 0))
	if spare.Route != "app/dflt2" || spare.TLS == nil || spare.TLS.CAFile != opts.DefaultDestinationCAFile {
		t.Fatalf("spare %+v", spare)
	}
}

func TestComputeClaimReleaseRetire(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(2)
	in := baseInput(c)
	applied := plan.WithPool(translate(t, in, opts))

	// A new reencrypt Route claims the lowest free reencrypt spare of its balance.
	newSecure := newRoute("app", "secure2", "secure2.example.com", 10, withService("s-extra"),
		withTLS(routev1.TLSTerminationReencrypt, routev1.InsecureEdgeTerminationPolicyRedirect), withDestCA(c.ca))
	in2 := withRoute(in, newSecure)
	d2 := translate(t, in2, opts)
	p := plan.Compute(applied, d2)
	checkRuntimePlan(t, applied, d2, p)
	spareName := model.SpareBackendName(model.KindReencrypt, "random", 0)
	spare := p.Next.Backend(spareName)
	want := d2.Backend("be_secure:app:secure2")
	if spare == nil || !spare.Spare || spare.Route != "app/secure2" || !reflect.DeepEqual(spare.Servers, want.Servers) ||
		!reflect.DeepEqual(spare.TLS, want.TLS) || spare.Cookie.Name != model.DefaultCookieName(spareName) {
		t.Fatalf("claimed spare %+v", spare)
	}
	if p.Next.Backend("be_secure:app:secure2") != nil {
		t.Fatal("Next holds the new Route's own backend name before a reload")
	}
	served := false
	for _, e := range p.Next.Map(model.MapEdgeReencrypt).Entries {
		served = served || (e.Key == "secure2.example.com/" && e.Value == spareName)
	}
	if !served {
		t.Fatalf("edge map %v: want secure2.example.com/ served by the spare", p.Next.Map(model.MapEdgeReencrypt).Entries)
	}
	for _, r := range p.Next.Routes {
		if r.Name == "secure2" && r.Backend != spareName {
			t.Fatalf("RouteInfo backend %s", r.Backend)
		}
	}
	if i := indexOf(p.Ops, func(op plan.Op) bool {
		o, ok := op.(plan.SetCAFile)
		return ok && o.New && o.CA.Name == "app_secure2.pem"
	}); i != 0 {
		t.Fatalf("want SetCAFile first, ops:\n%s", opsText(p.Ops))
	}
	if n := p.Next.Backend(model.SpareBackendName(model.KindReencrypt, "random", 1)); n.Route != "" || n.TLS != nil {
		t.Fatalf("second spare %+v", n)
	}

	// Deleting it releases the spare; deleting a Route under its own name retires its backend. Both
	// keep their servers (and the CA files these verify with) for one plan: requests that looked the
	// old map entries up an instant before still reach them.
	applied2 := p.Next
	in3 := withoutRoute(withoutRoute(in2, "app", "secure2"), "app", "secure")
	d3 := translate(t, in3, opts)
	p = plan.Compute(applied2, d3)
	checkRuntimePlan(t, applied2, d3, p)
	released := p.Next.Backend(spareName)
	if released.Route != "" || len(released.Servers) == 0 || released.TLS == nil || !released.Spare {
		t.Fatalf("released spare %+v", released)
	}
	retired := p.Next.Backend("be_secure:app:secure")
	if retired == nil || !retired.Retired || retired.Route != "" || len(retired.Servers) == 0 || retired.TLS == nil {
		t.Fatalf("retired backend %+v", retired)
	}
	if slices.ContainsFunc(p.Ops, func(op plan.Op) bool {
		switch op.(type) {
		case plan.DelServer, plan.DelCAFile:
			return true
		}
		return false
	}) {
		t.Fatalf("servers or CA files removed with their Route, ops:\n%s", opsText(p.Ops))
	}
	if got := plan.Draining(p.Next); !slices.Equal(got, []string{"be_secure:_spare:random-00", "be_secure:app:secure"}) {
		t.Fatalf("draining %v", got)
	}
	// The next plan removes them, the CA files last.
	applied2 = p.Next
	p = plan.Compute(applied2, d3)
	checkRuntimePlan(t, applied2, d3, p)
	released, retired = p.Next.Backend(spareName), p.Next.Backend("be_secure:app:secure")
	if len(released.Servers) != 0 || released.TLS != nil || len(retired.Servers) != 0 || retired.TLS != nil {
		t.Fatalf("after the next plan: released %+v, retired %+v", released, retired)
	}
	if i := lastIndexOf(p.Ops, func(op plan.Op) bool { _, ok := op.(plan.DelCAFile); return ok }); i != len(p.Ops)-1 {
		t.Fatalf("want DelCAFile last, ops:\n%s", opsText(p.Ops))
	}

	// Re-adding the Routes: the retired one gets its own idle backend back (its clients keep their
	// backend name and cookie), the other claims the released spare again.
	applied3 := p.Next
	d4 := translate(t, in2, opts)
	p = plan.Compute(applied3, d4)
	checkRuntimePlan(t, applied3, d4, p)
	if b := p.Next.Backend("be_secure:app:secure"); b.Retired || b.Route != "app/secure" || len(b.Servers) == 0 || b.TLS == nil {
		t.Fatalf("the returning Route's own backend is not serving it: %+v", b)
	}
	got := map[string]string{}
	for _, r := range p.Next.Routes {
		got[r.Name] = r.Backend
	}
	if got["secure"] != "be_secure:app:secure" || got["secure2"] != spareName {
		t.Fatalf("claims %v", got)
	}

	// Two more new reencrypt Routes exhaust the pool of two (one spare is claimed).
	in5 := withRoute(in2, newRoute("app", "secure3", "secure3.example.com", 11, withService("s-extra"),
		withTLS(routev1.TLSTerminationReencrypt, ""), withDestCA(c.ca)))
	d5 := translate(t, withRoute(in5, newRoute("app", "secure4", "secure4.example.com", 12, withService("s-extra"),
		withTLS(routev1.TLSTerminationReencrypt, ""), withDestCA(c.ca))), opts)
	p = plan.Compute(p.Next, d5)
	if !reflect.DeepEqual(reasonKinds(p), []plan.ReasonKind{plan.PoolExhausted}) || p.Structural[0].Subject != "reencrypt/random" {
		t.Fatalf("reasons %v", p.Structural)
	}
}

// TestComputeSkipsDrainingSpareForTLS: a released reencrypt spare may still hold a server whose
// deletion HAProxy deferred. A new reencrypt Route claims the next spare instead (its CA file goes on
// the server lines, and a leftover of the same name would keep the old one); with no other spare
// left it is PoolExhausted, a reload, never a refused diff.
func TestComputeSkipsDrainingSpareForTLS(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(2)
	in := baseInput(c)
	applied := plan.WithPool(translate(t, in, opts)).Clone()
	first := model.SpareBackendName(model.KindReencrypt, "random", 0)
	leftover := model.Server{Name: "pod:old:svc:https:10.9.9.9:8443", ID: 9, Addr: "10.9.9.9", Port: 8443, Weight: 1, State: model.StateMaint}
	applied.Backend(first).Servers = []model.Server{leftover}
	if err := applied.Validate(); err != nil {
		t.Fatal(err)
	}
	newSecure := func(name string, prio int) *routev1.Route {
		return newRoute("app", name, name+".example.com", prio, withService("s-extra"),
			withTLS(routev1.TLSTerminationReencrypt, ""), withDestCA(c.ca))
	}
	in2 := withRoute(in, newSecure("secure2", 10))
	d2 := translate(t, in2, opts)
	p := plan.Compute(applied, d2)
	checkRuntimePlan(t, applied, d2, p)
	second := model.SpareBackendName(model.KindReencrypt, "random", 1)
	if got := routeInfo(p.Next, "app/secure2").Backend; got != second {
		t.Fatalf("the new Route is served by %q, want %q (the first spare still drains)", got, second)
	}
	if b := p.Next.Backend(first); b.Route != "" || len(b.Servers) != 0 {
		t.Fatalf("the draining spare in Next: %+v", b)
	}

	// The leftover is still there (its deletion deferred again) and the other spare is taken.
	applied2 := p.Next.Clone()
	applied2.Backend(first).Servers = []model.Server{leftover}
	d3 := translate(t, withRoute(in2, newSecure("secure3", 11)), opts)
	p = plan.Compute(applied2, d3)
	want := []plan.Reason{{Kind: plan.PoolExhausted, Subject: "reencrypt/random",
		Detail: "the free spares for be_secure:app:secure3 still hold servers being drained"}}
	if !reflect.DeepEqual(p.Structural, want) {
		t.Fatalf("reasons %v, want %v", p.Structural, want)
	}
}

func TestComputeReasonsSorted(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	applied := plan.WithPool(translate(t, in, testOptions(0)))
	in2 := in
	for _, n := range []string{"z", "a", "m"} {
		in2 = withRoute(in2, newRoute("app", n, n+".example.com", 20, withService("s-extra")))
	}
	p := plan.Compute(applied, translate(t, in2, testOptions(0)))
	want := []plan.Reason{
		{Kind: plan.PoolExhausted, Subject: "http/random", Detail: "no free spare for be_http:app:a"},
		{Kind: plan.PoolExhausted, Subject: "http/random", Detail: "no free spare for be_http:app:m"},
		{Kind: plan.PoolExhausted, Subject: "http/random", Detail: "no free spare for be_http:app:z"},
	}
	if !reflect.DeepEqual(p.Structural, want) {
		t.Fatalf("got %v", p.Structural)
	}
}

func TestDiffRefuses(t *testing.T) {
	c := loadCerts(t)
	d := translate(t, baseInput(c), testOptions(1))
	pooled := plan.WithPool(d)
	other := translate(t, changeRoute(baseInput(c), "app", "plain", withAnnotation(mapping.AnnotationIPAllowlist, "10.0.0.0/8")), testOptions(1))
	fewerMaps := *d
	fewerMaps.Maps = d.Maps[1:]
	for name, tc := range map[string]struct {
		from, to *model.Config
		want     string
	}{
		"backend added":   {d, pooled, "backends can only be added or removed by a reload"},
		"options changed": {d, other, `backend "be_http:app:plain": options differ (allowlist)`},
		"map removed":     {d, &fewerMaps, "map files can only be added or removed by a reload"},
		"nil":             {nil, d, "nil config"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := plan.Diff(tc.from, tc.to)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Diff error %v, want %q", err, tc.want)
			}
		})
	}
	if ops, err := plan.Diff(pooled, pooled); err != nil || ops != nil {
		t.Fatalf("Diff of equal configs: %v, %v", ops, err)
	}
}

func TestComputeDoesNotModifyArguments(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(2)
	in := baseInput(c)
	applied := plan.WithPool(translate(t, in, opts))
	in2 := withRoute(withoutRoute(in, "app", "edge"), newRoute("app", "n", "n.example.com", 30, withService("s-extra"),
		withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect)))
	d := translate(t, in2, opts)
	appliedCopy, dCopy := applied.Clone(), d.Clone()
	p := plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	if !reflect.DeepEqual(applied, appliedCopy) || !reflect.DeepEqual(d, dCopy) {
		t.Fatal("Compute or Simulate modified an argument")
	}
	// Byte-identical plans for identical input.
	if q := plan.Compute(appliedCopy, dCopy); !reflect.DeepEqual(p, q) {
		t.Fatal("Compute is not deterministic")
	}
}

// TestComputeBalanceChangeKeepsIdentity: a Route that gets an alternate backend switches to
// roundrobin, which HAProxy cannot change at runtime. A Route HAProxy serves keeps its backend name
// and cookie (its clients stay on their servers), so the change is a reload of its own backend, never
// a move to a spare (which would rename it now and again at the next reload).
func TestComputeBalanceChangeKeepsIdentity(t *testing.T) {
	in := baseInput(loadCerts(t))
	applied := plan.WithPool(translate(t, in, testOptions(2)))
	d := translate(t, changeRoute(in, "app", "plain", withAlternate("s-extra", 50)), testOptions(2))
	p := plan.Compute(applied, d)
	if want := []plan.Reason{{Kind: plan.BackendOptionsChanged, Subject: "be_http:app:plain", Detail: "balance"}}; !reflect.DeepEqual(p.Structural, want) {
		t.Fatalf("reasons %v, want %v", p.Structural, want)
	}
	b := p.Next.Backend("be_http:app:plain")
	if b == nil || b.Route != "app/plain" || b.Balance != "roundrobin" || b.Cookie == nil || b.Cookie.Name != model.DefaultCookieName(b.Name) {
		t.Fatalf("after the reload the Route is not on its own backend with its cookie: %+v", b)
	}
	// The same from a claimed spare: the reload moves it to its own name (its one rename).
	in2 := withRoute(in, newRoute("app", "fresh", "fresh.example.com", 30, withService("s-extra")))
	d2 := translate(t, in2, testOptions(2))
	p2 := plan.Compute(applied, d2)
	if p2.NeedsReload() || routeInfo(p2.Next, "app/fresh").Backend == "be_http:app:fresh" {
		t.Fatalf("a new Route did not claim a spare: %v", p2.Structural)
	}
	d3 := translate(t, changeRoute(in2, "app", "fresh", withAlternate("s-plain", 50)), testOptions(2))
	if p3 := plan.Compute(p2.Next, d3); !p3.NeedsReload() || routeInfo(p3.Next, "app/fresh").Backend != "be_http:app:fresh" {
		t.Fatalf("a Route on a spare whose options change: %v", p3.Structural)
	}
}

func routeInfo(c *model.Config, key string) model.RouteInfo {
	for _, r := range c.Routes {
		if r.Namespace+"/"+r.Name == key {
			return r
		}
	}
	return model.RouteInfo{}
}

// TestComputeRetriesDeferredDeletions: a server HAProxy refused to delete (connections attached)
// stays in the applied state in maint. The next plan deletes it again when nothing wants it (also on a
// retired backend), and turns it back to ready — without a failing add server — when desired has it.
func TestComputeRetriesDeferredDeletions(t *testing.T) {
	in := baseInput(loadCerts(t))
	d := translate(t, in, testOptions(2))
	applied := plan.WithPool(d)

	// A leftover server in maint on a live backend that desired also has (re-added meanwhile)...
	k := slices.IndexFunc(applied.Backends, func(b *model.Backend) bool { return b.Name == "be_http:app:plain" })
	if k < 0 || len(applied.Backends[k].Servers) == 0 {
		t.Fatal("fixture: be_http:app:plain has no servers")
	}
	// WithPool shares backends and their servers with desired (read-only): copy before changing.
	live := *applied.Backends[k]
	kept := live.Servers[0].Name
	live.Servers = append([]model.Server(nil), live.Servers...)
	live.Servers[0].State = model.StateMaint
	applied.Backends[k] = &live
	// ...and one on a retired backend.
	leftover := model.Server{Name: "pod:old:svc:http:10.9.9.9:8080", ID: 9, Addr: "10.9.9.9", Port: 8080, Weight: 1, State: model.StateMaint}
	applied.Backends = append(applied.Backends, &model.Backend{Name: "be_http:app:gone", Kind: model.KindHTTP, Mode: model.ModeHTTP,
		Balance: "random", CheckInterval: "5000ms", Retired: true, Servers: []model.Server{leftover}})
	sort.Slice(applied.Backends, func(i, j int) bool { return applied.Backends[i].Name < applied.Backends[j].Name })
	if err := applied.Validate(); err != nil {
		t.Fatal(err)
	}

	p := plan.Compute(applied, d)
	if p.NeedsReload() {
		t.Fatalf("reload: %v", p.Structural)
	}
	var readied, deleted, added bool
	for _, op := range p.Ops {
		switch o := op.(type) {
		case plan.SetServerState:
			readied = readied || (o.Server == kept && o.State == model.StateReady)
		case plan.DelServer:
			deleted = deleted || (o.Backend == "be_http:app:gone" && o.Server == leftover.Name)
		case plan.AddServer:
			added = added || o.Server.Name == kept
		}
	}
	if !readied || added || !deleted {
		t.Fatalf("want %s set ready (not re-added) and the leftover deleted; ops %v", kept, p.Ops)
	}
	if gone := p.Next.Backend("be_http:app:gone"); gone == nil || !gone.Retired || len(gone.Servers) != 0 {
		t.Fatalf("retired backend in Next: %+v", gone)
	}
}

// TestComputeKeepsServerIDs: ids cannot change at runtime. A server HAProxy runs keeps its applied
// id (and is not re-added), and a new server never takes an id another server of the backend still
// holds — one being removed may stay while HAProxy defers its deletion.
func TestComputeKeepsServerIDs(t *testing.T) {
	in := baseInput(loadCerts(t))
	d := translate(t, in, testOptions(2))
	applied := plan.WithPool(d).Clone()
	live := applied.Backend("be_http:app:plain")
	if live == nil || len(live.Servers) != 2 {
		t.Fatalf("fixture: be_http:app:plain has %+v", live)
	}
	old := live.Servers[0]
	live.Servers[0].ID = 4242 // as if another name had taken its hashed id when it was added

	// Unchanged desired: the applied id stays, nothing to do.
	if p := plan.Compute(applied, d); p.NeedsReload() || len(p.Ops) != 0 || p.Next.Backend(live.Name).Servers[0].ID != 4242 {
		t.Fatalf("plan for an unchanged state: %v %v, id %d", p.Structural, p.Ops, p.Next.Backend(live.Name).Servers[0].ID)
	}

	// The server goes and a new one arrives whose name hashes to the id the old one still holds.
	d2 := d.Clone()
	b := d2.Backend(live.Name)
	added := old
	added.Name, added.Addr, added.ID = "pod:new:svc:http:10.9.9.8:8080", "10.9.9.8", 4242
	b.Servers = []model.Server{added, b.Servers[1]} // "pod:new…" sorts first
	p := plan.Compute(applied, d2)
	if p.NeedsReload() {
		t.Fatalf("reload: %v", p.Structural)
	}
	got := p.Next.Backend(live.Name).Servers
	if len(got) != 2 || got[0].Name != added.Name || got[0].ID == 4242 || got[1] != b.Servers[1] {
		t.Fatalf("next servers %+v: want the new server under an id other than the held 4242, the other as it was", got)
	}
	var addedWith int32
	for _, op := range p.Ops {
		if o, ok := op.(plan.AddServer); ok && o.Server.Name == added.Name {
			addedWith = o.Server.ID
		}
	}
	if addedWith != got[0].ID {
		t.Fatalf("add server with id %d, next has %d", addedWith, got[0].ID)
	}
	if err := p.Next.Validate(); err != nil {
		t.Fatal(err)
	}
	if b.Servers[0].ID != 4242 {
		t.Fatal("Compute changed desired")
	}
}

// TestComputeForwardedPolicyAtRuntime: a Route's forwarded-headers policy is a map entry (the
// frontends apply it), so setting, changing and removing it are map operations, not reloads; a new
// Route with a non-default policy claims a spare, and its entry names the spare.
func TestComputeForwardedPolicyAtRuntime(t *testing.T) {
	in := baseInput(loadCerts(t))
	applied := plan.WithPool(translate(t, in, testOptions(2)))
	steps := []struct {
		policy string
		want   []plan.Op
	}{
		{"replace", []plan.Op{plan.AddMapEntry{Map: model.MapForwardedHeaders, Key: "be_http:app:plain", Value: "replace"}}},
		{"never", []plan.Op{plan.SetMapEntry{Map: model.MapForwardedHeaders, Key: "be_http:app:plain", Value: "never"}}},
		{"append", []plan.Op{plan.DelMapEntry{Map: model.MapForwardedHeaders, Key: "be_http:app:plain"}}}, // the default
	}
	cur := applied
	for _, s := range steps {
		d := translate(t, changeRoute(in, "app", "plain", withAnnotation(mapping.AnnotationForwardedHeaders, s.policy)), testOptions(2))
		p := plan.Compute(cur, d)
		if p.NeedsReload() || !reflect.DeepEqual(p.Ops, s.want) {
			t.Fatalf("policy %s: reasons %v ops %v, want ops %v", s.policy, p.Structural, p.Ops, s.want)
		}
		if b := p.Next.Backend("be_http:app:plain"); b.ForwardedHeaders != s.policy {
			t.Fatalf("policy %s: the applied backend says %q", s.policy, b.ForwardedHeaders)
		}
		cur = p.Next
	}

	fresh := newRoute("app", "fresh", "fresh.example.com", 30, withService("s-extra"),
		withAnnotation(mapping.AnnotationForwardedHeaders, "if-none"))
	p := plan.Compute(applied, translate(t, withRoute(in, fresh), testOptions(2)))
	spare := routeInfo(p.Next, "app/fresh").Backend
	if p.NeedsReload() || spare == "be_http:app:fresh" {
		t.Fatalf("a new Route with a forwarded policy did not claim a spare: %v", p.Structural)
	}
	entries := p.Next.Map(model.MapForwardedHeaders).Entries
	if len(entries) != 1 || entries[0] != (model.MapEntry{Key: spare, Value: "if-none"}) {
		t.Fatalf("forwarded map %v, want the spare %s with if-none", entries, spare)
	}
	// Deleting the Route releases the spare with the default policy and removes the entry.
	p2 := plan.Compute(p.Next, translate(t, in, testOptions(2)))
	if p2.NeedsReload() || len(p2.Next.Map(model.MapForwardedHeaders).Entries) != 0 {
		t.Fatalf("release: reasons %v, map %v", p2.Structural, p2.Next.Map(model.MapForwardedHeaders).Entries)
	}
	if b := p2.Next.Backend(spare); b.ForwardedHeaders != "append" || b.Route != "" {
		t.Fatalf("released spare %+v", b)
	}
}

// TestComputeHealthChecksFollowActiveEndpoints: as in OpenShift, only a backend with more than one
// active endpoint is health-checked. Growing from one endpoint to two turns the checks of the
// server already there on (and the new server is added with them); shrinking back turns them off.
// AsStarted and DormantChecks describe a start: every check runs until the lone servers' stop.
func TestComputeHealthChecksFollowActiveEndpoints(t *testing.T) {
	in := baseInput(loadCerts(t))
	one := in
	one.EndpointSlices = append([]*discoveryv1.EndpointSlice{newSlice("app", "s-plain", "127.0.1.1")}, in.EndpointSlices[1:]...)
	applied := plan.WithPool(translate(t, one, testOptions(2)))
	plain := applied.Backend("be_http:app:plain")
	if len(plain.Servers) != 1 || plain.Servers[0].HealthCheck {
		t.Fatalf("one endpoint: %+v, want one server without checks", plain.Servers)
	}
	if b := applied.Backend("be_edge_http:app:edge"); len(b.Servers) != 2 || !b.Servers[0].HealthCheck || !b.Servers[1].HealthCheck {
		t.Fatalf("two endpoints: %+v, want both checked", b.Servers)
	}
	lone := plain.Servers[0].Name

	grow := plan.Compute(applied, translate(t, in, testOptions(2)))
	var enabled []string
	for _, op := range grow.Ops {
		if o, ok := op.(plan.EnableHealth); ok && o.Backend == plain.Name {
			enabled = append(enabled, o.Server)
		}
	}
	if grow.NeedsReload() || len(enabled) != 2 || !slices.Contains(enabled, lone) {
		t.Fatalf("1 → 2 endpoints: reasons %v, checks turned on for %v, want both servers (%s kept)", grow.Structural, enabled, lone)
	}
	shrink := plan.Compute(grow.Next, translate(t, one, testOptions(2)))
	want := plan.DisableHealth{Backend: plain.Name, Server: lone}
	if shrink.NeedsReload() || !slices.Contains(shrink.Ops, plan.Op(want)) {
		t.Fatalf("2 → 1 endpoints: reasons %v ops %v, want %v", shrink.Structural, shrink.Ops, want)
	}

	// A second Service with weight 0 adds servers but no active endpoint: still no checks.
	zero := translate(t, changeRoute(one, "app", "plain", withAlternate("s-extra", 0)), testOptions(2))
	for _, s := range zero.Backend("be_http:app:plain").Servers {
		if s.HealthCheck {
			t.Fatalf("a weight-0 alternate made %s checked", s.Name)
		}
	}

	started := plan.AsStarted(applied)
	if s := started.Backend(plain.Name).Servers[0]; !s.HealthCheck || applied.Backend(plain.Name).Servers[0].HealthCheck {
		t.Fatal("AsStarted must check every server and leave its argument alone")
	}
	dormant := plan.DormantChecks(applied)
	if p := plan.Compute(started, applied); p.NeedsReload() || !reflect.DeepEqual(p.Ops, dormant) || !plan.OnlyDormantChecks(dormant) {
		t.Fatalf("after a start: ops %v, want DormantChecks %v", p.Ops, dormant)
	}
	if p := plan.ComputeWith(started, applied, plan.Options{ReloadEveryChange: true}); p.NeedsReload() {
		t.Fatalf("reload mode reloads to stop the started checks: %v", p.Structural)
	}
}

// TestComputeCookieNameIsAMapEntry: the cookie name is no backend option (haroute_cookie_names.map
// carries it). A new Route with a cookie_name annotation claims a spare, which serves it under that
// name from the first request; changing the annotation of a served Route is one map entry.
func TestComputeCookieNameIsAMapEntry(t *testing.T) {
	in := baseInput(loadCerts(t))
	opts := testOptions(2)
	applied := plan.WithPool(translate(t, in, opts))
	named := func(name string) *routev1.Route {
		return newRoute("app", "extra", "extra.example.com", 20, withService("s-extra"), withAnnotation(mapping.AnnotationCookieName, name))
	}
	d := translate(t, withRoute(in, named("c1")), opts)
	p := plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	spare := routeInfo(p.Next, "app/extra").Backend
	if v, ok := p.Next.MapValue(model.MapCookieNames, spare); spare == "be_http:app:extra" || !ok || v != "c1" {
		t.Fatalf("the claimed spare %s has cookie name %q (%v), want c1", spare, v, ok)
	}
	d2 := translate(t, withRoute(in, named("c2")), opts)
	p2 := plan.Compute(p.Next, d2)
	checkRuntimePlan(t, p.Next, d2, p2)
	want := []plan.Op{plan.SetMapEntry{Map: model.MapCookieNames, Key: spare, Value: "c2"}}
	if !reflect.DeepEqual(p2.Ops, want) {
		t.Fatalf("renaming the cookie: ops\n%s", opsText(p2.Ops))
	}
}

// TestComputeTimeoutsAreMapEntries: an HTTP Route's timeout annotations are map entries — a change
// is a set map, a new Route with one claims a spare — while a passthrough Route's are options of its
// backend.
func TestComputeTimeoutsAreMapEntries(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(1)
	in := baseInput(c)
	applied := plan.WithPool(translate(t, in, opts))

	d := translate(t, changeRoute(in, "app", "plain", withAnnotation(mapping.AnnotationTimeout, "3s"),
		withAnnotation(mapping.AnnotationTimeoutTunnel, "2m")), opts)
	p := plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	want := []plan.Op{
		plan.AddMapEntry{Map: model.MapTimeoutServer, Key: "be_http:app:plain", Value: "3000"},
		plan.AddMapEntry{Map: model.MapTimeoutTunnel, Key: "be_http:app:plain", Value: "120000"},
	}
	if !reflect.DeepEqual(p.Ops, want) {
		t.Fatalf("ops:\n%s", opsText(p.Ops))
	}

	d = translate(t, withRoute(in, newRoute("app", "slow", "slow.example.com", 10, withService("s-extra"),
		withAnnotation(mapping.AnnotationTimeout, "90s"))), opts)
	p = plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	if v, _ := p.Next.MapValue(model.MapTimeoutServer, model.SpareBackendName(model.KindHTTP, "random", 0)); v != "90000" {
		t.Fatalf("the spare serving the new Route has timeout %q; ops:\n%s", v, opsText(p.Ops))
	}

	d = translate(t, changeRoute(in, "app", "tcp", withAnnotation(mapping.AnnotationTimeoutTunnel, "2m")), opts)
	if p := plan.Compute(applied, d); p.Reason().Kind != plan.BackendOptionsChanged {
		t.Fatalf("a passthrough Route's timeout: %v", p.Structural)
	}
}

// TestComputeHSTSIsAMapEntry: an hsts_header annotation added, changed or removed on a served Route
// is a map entry (model.MapHSTS), no reload.
func TestComputeHSTSIsAMapEntry(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(1)
	in := baseInput(c)
	applied := plan.WithPool(translate(t, in, opts))
	for _, v := range []string{"max-age=31536000", "max-age=1; includeSubDomains"} {
		d := translate(t, changeRoute(in, "app", "edge", withAnnotation(mapping.AnnotationHSTS, v)), opts)
		p := plan.Compute(applied, d)
		checkRuntimePlan(t, applied, d, p)
		want, _ := model.MappedHeaderValue(v)
		if got, _ := p.Next.MapValue(model.MapHSTS, "be_edge_http:app:edge"); got != want || len(p.Ops) != 1 {
			t.Fatalf("HSTS %q: map value %q, want %q; ops:\n%s", v, got, want, opsText(p.Ops))
		}
		applied = p.Next
	}
	d := translate(t, in, opts)
	p := plan.Compute(applied, d)
	checkRuntimePlan(t, applied, d, p)
	if _, ok := p.Ops[0].(plan.DelMapEntry); !ok || len(p.Ops) != 1 {
		t.Fatalf("HSTS removed: ops:\n%s", opsText(p.Ops))
	}
}
