package plan_test

import (
	"fmt"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// benchInput returns routes Routes, each with its own Service and one EndpointSlice of perRoute
// endpoints, spread over 100 namespaces; every fourth Route is edge with Redirect, every tenth has a
// path.
func benchInput(routes, perRoute int) mapping.Input {
	var in mapping.Input
	for i := 0; i < routes; i++ {
		ns := fmt.Sprintf("ns-%d", i%100)
		svc := fmt.Sprintf("svc-%d", i)
		opts := []routeOpt{withService(svc)}
		if i%4 == 0 {
			opts = append(opts, withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect))
		}
		if i%10 == 0 {
			opts = append(opts, withPath(fmt.Sprintf("/p%d", i)))
		}
		in.Routes = append(in.Routes, newRoute(ns, fmt.Sprintf("route-%d", i), fmt.Sprintf("host-%d.apps.example.com", i), i, opts...))
		in.Services = append(in.Services, newService(ns, svc))
		in.EndpointSlices = append(in.EndpointSlices, newSlice(ns, svc, benchAddrs(i, perRoute)...))
	}
	return in
}

func benchAddrs(route, perRoute int) []string {
	addrs := make([]string, perRoute)
	for j := range addrs {
		n := route*perRoute + j
		addrs[j] = fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
	}
	return addrs
}

// BenchmarkCompute plans at 10k Routes / 100k endpoints from the applied state of a reload
// (WithPool) to (a) the same desired state, (b) one endpoint changed, (c) one Route added. Each
// desired state is its own Translate result, as in production.
func BenchmarkCompute(b *testing.B) {
	const routes, perRoute = 10000, 10
	in := benchInput(routes, perRoute)
	opts := mapping.DefaultOptions()
	d := translate(b, in, opts)
	applied := plan.WithPool(d)
	// desired is always a fresh Translate result: equal strings in separate memory, as in production.
	dSame := translate(b, in, opts)

	changed := in
	changed.EndpointSlices = append([]*discoveryv1.EndpointSlice{}, in.EndpointSlices...)
	addrs := benchAddrs(5000, perRoute)
	addrs[3] = "10.250.0.1"
	changed.EndpointSlices[5000] = newSlice("ns-0", "svc-5000", addrs...)
	dEndpoint := translate(b, changed, opts)

	added := withRoute(in, newRoute("ns-1", "route-new", "new.apps.example.com", routes+1, withService("svc-1")))
	dRoute := translate(b, added, opts)

	for _, tc := range []struct {
		name    string
		desired *model.Config
	}{
		{"no-change", dSame},
		{"one-endpoint", dEndpoint},
		{"one-route", dRoute},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := plan.Compute(applied, tc.desired)
			if p.NeedsReload() {
				b.Fatalf("reasons %v", p.Structural)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p = plan.Compute(applied, tc.desired)
			}
			b.StopTimer()
			b.ReportMetric(float64(len(p.Ops)), "ops")
		})
	}
}

// TestBenchmarkPlans keeps the benchmark's scenarios honest at a small size: the expected ops.
func TestBenchmarkPlans(t *testing.T) {
	in := benchInput(200, 10)
	opts := mapping.DefaultOptions()
	d := translate(t, in, opts)
	applied := plan.WithPool(d)
	if p := plan.Compute(applied, d); p.NeedsReload() || len(p.Ops) != 0 {
		t.Fatalf("no change: %v, %d ops", p.Structural, len(p.Ops))
	}
	changed := in
	changed.EndpointSlices = append([]*discoveryv1.EndpointSlice{}, in.EndpointSlices...)
	addrs := benchAddrs(50, 10)
	addrs[3] = "10.250.0.1"
	changed.EndpointSlices[50] = newSlice("ns-50", "svc-50", addrs...)
	dEndpoint := translate(t, changed, opts)
	p := plan.Compute(applied, dEndpoint)
	checkRuntimePlan(t, applied, dEndpoint, p)
	if len(p.Ops) != 5 {
		t.Fatalf("one endpoint: want 5 ops:\n%s", opsText(p.Ops))
	}
	dRoute := translate(t, withRoute(in, newRoute("ns-1", "route-new", "new.apps.example.com", 201, withService("svc-1"))), opts)
	p = plan.Compute(applied, dRoute)
	checkRuntimePlan(t, applied, dRoute, p)
	// 10 servers × (add, health, ready), one entry in the plain-HTTP map, one in the redirect map and
	// one for the cookie name.
	if len(p.Ops) != 33 {
		t.Fatalf("one route: want 33 ops:\n%s", opsText(p.Ops))
	}
}
