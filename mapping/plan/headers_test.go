package plan_test

import (
	"reflect"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/routetest"
)

// withHeaders sets a Route's header actions: request and response lists of "Name=value" (Set) and
// "Name" (Delete).
func withHeaders(request, response []string) routeOpt {
	list := func(items []string) []routev1.RouteHTTPHeader {
		var out []routev1.RouteHTTPHeader
		for _, it := range items {
			if name, value, ok := strings.Cut(it, "="); ok {
				out = append(out, routetest.SetHeader(name, value))
			} else {
				out = append(out, routetest.DeleteHeader(it))
			}
		}
		return out
	}
	return routetest.Headers(list(request), list(response))
}

// TestComputeHeaderValueAtRuntime: the literal value of a Route's Set header action is an entry of
// haroute_header_values.map, so changing it is one set map, not a reload, and the backend HAProxy runs
// stays the very same; every other change of the actions is a HeaderActionsChanged reload naming the
// backend.
func TestComputeHeaderValueAtRuntime(t *testing.T) {
	in := baseInput(loadCerts(t))
	opts := testOptions(2)
	withH := func(request, response []string) mapping.Input {
		return changeRoute(in, "app", "edge", withHeaders(request, response))
	}
	applied := plan.WithPool(translate(t, withH([]string{"X-A=one", "X-Gone"}, []string{"X-Frame-Options=DENY"}), opts))
	const be = "be_edge_http:app:edge"

	p := plan.Compute(applied, translate(t, withH([]string{"X-A=two words; 100%% sure", "X-Gone"}, []string{"X-Frame-Options=SAMEORIGIN"}), opts))
	want := []plan.Op{
		plan.SetMapEntry{Map: model.MapHeaderValues, Key: be + "/req/0", Value: "two%20words%3B%20100%25%20sure"},
		plan.SetMapEntry{Map: model.MapHeaderValues, Key: be + "/res/0", Value: "SAMEORIGIN"},
	}
	if p.NeedsReload() || !reflect.DeepEqual(p.Ops, want) {
		t.Fatalf("value change: reasons %v ops %v, want ops %v", p.Structural, p.Ops, want)
	}
	if p.Next.Backend(be) != applied.Backend(be) {
		t.Fatal("a value change replaced the backend HAProxy runs")
	}
	checkRuntimePlan(t, applied, translate(t, withH([]string{"X-A=two words; 100%% sure", "X-Gone"}, []string{"X-Frame-Options=SAMEORIGIN"}), opts), p)

	for _, tc := range []struct {
		name              string
		request, response []string
	}{
		{"a dynamic value", []string{"X-A=%[req.hdr(Host)]", "X-Gone"}, []string{"X-Frame-Options=DENY"}},
		{"an action added", []string{"X-A=one", "X-Gone", "X-New=1"}, []string{"X-Frame-Options=DENY"}},
		{"an action removed", []string{"X-A=one"}, []string{"X-Frame-Options=DENY"}},
		{"the order", []string{"X-Gone", "X-A=one"}, []string{"X-Frame-Options=DENY"}},
		{"a name", []string{"X-B=one", "X-Gone"}, []string{"X-Frame-Options=DENY"}},
		{"Set to Delete", []string{"X-A", "X-Gone"}, []string{"X-Frame-Options=DENY"}},
		{"a value too long for the map", []string{"X-A=" + strings.Repeat("%%", model.MaxMappedHeaderValue/3+1), "X-Gone"}, []string{"X-Frame-Options=DENY"}},
		{"every action gone", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan.Compute(applied, translate(t, withH(tc.request, tc.response), opts))
			if len(p.Structural) != 1 || p.Reason().Kind != plan.HeaderActionsChanged || p.Reason().Subject != be {
				t.Fatalf("reasons %v, want one HeaderActionsChanged of %s", p.Structural, be)
			}
		})
	}

	// With another option: BackendOptionsChanged, whose detail names both.
	both := changeRoute(withH([]string{"X-A=%[req.hdr(Host)]"}, nil), "app", "edge", withAnnotation(mapping.AnnotationBalance, "leastconn"))
	p = plan.Compute(applied, translate(t, both, opts))
	if p.Reason().Kind != plan.BackendOptionsChanged || p.Reason().Detail != "balance, requestHeaders, responseHeaders" {
		t.Fatalf("reasons %v, want BackendOptionsChanged: balance, requestHeaders, responseHeaders", p.Structural)
	}
}

// TestComputeHeaderActionsNeedTheirBackend: a spare has no header rules, so a new Route with header
// actions is NewBackend (a reload), and a served Route that gains its first action is
// HeaderActionsChanged.
func TestComputeHeaderActionsNeedTheirBackend(t *testing.T) {
	in := baseInput(loadCerts(t))
	opts := testOptions(2)
	applied := plan.WithPool(translate(t, in, opts))

	fresh := newRoute("app", "fresh", "fresh.example.com", 30, withService("s-extra"), withHeaders([]string{"X-A=1"}, nil))
	p := plan.Compute(applied, translate(t, withRoute(in, fresh), opts))
	if r := p.Reason(); r.Kind != plan.NewBackend || r.Subject != "be_http:app:fresh" || r.Detail != "non-default options: requestHeaders" {
		t.Fatalf("a new Route with header actions: %v, want NewBackend of be_http:app:fresh (non-default options: requestHeaders)", p.Structural)
	}
	p = plan.Compute(applied, translate(t, changeRoute(in, "app", "plain", withHeaders(nil, []string{"Server"})), opts))
	if r := p.Reason(); r.Kind != plan.HeaderActionsChanged || r.Subject != "be_http:app:plain" || r.Detail != "responseHeaders" {
		t.Fatalf("a first header action: %v, want HeaderActionsChanged of be_http:app:plain (responseHeaders)", p.Structural)
	}
}

// TestComputeHeaderValuesFollowTheRoute: a Route deleted at runtime takes its header values out after
// its lookup entries (its backend stays, retired, with its rules); when it comes back with another
// literal value, its retired backend serves it again and the value goes in before the lookup entries.
func TestComputeHeaderValuesFollowTheRoute(t *testing.T) {
	in := changeRoute(baseInput(loadCerts(t)), "app", "plain", withHeaders([]string{"X-A=one"}, nil))
	opts := testOptions(2)
	applied := plan.WithPool(translate(t, in, opts))
	const key = "be_http:app:plain/req/0"
	isHeader := func(op plan.Op) bool {
		switch op := op.(type) {
		case plan.AddMapEntry:
			return op.Map == model.MapHeaderValues
		case plan.DelMapEntry:
			return op.Map == model.MapHeaderValues
		}
		return false
	}
	isLookup := func(op plan.Op) bool {
		switch op := op.(type) {
		case plan.AddMapEntry:
			return op.Map == model.MapHTTP
		case plan.DelMapEntry:
			return op.Map == model.MapHTTP
		}
		return false
	}

	gone := translate(t, withoutRoute(in, "app", "plain"), opts)
	p := plan.Compute(applied, gone)
	if p.NeedsReload() {
		t.Fatalf("deleting the Route: %v", p.Structural)
	}
	checkRuntimePlan(t, applied, gone, p)
	if h, l := indexOf(p.Ops, isHeader), lastIndexOf(p.Ops, isLookup); h < 0 || l < 0 || h < l {
		t.Fatalf("the header value must go after the lookup entries:\n%s", opsText(p.Ops))
	}
	if b := p.Next.Backend("be_http:app:plain"); !b.Retired || len(b.RequestHeaders) != 1 {
		t.Fatalf("retired backend %+v", b)
	}

	back := translate(t, changeRoute(in, "app", "plain", withHeaders([]string{"X-A=two"}, nil)), opts)
	p2 := plan.Compute(p.Next, back)
	if p2.NeedsReload() {
		t.Fatalf("the Route back: %v", p2.Structural)
	}
	checkRuntimePlan(t, p.Next, back, p2)
	if h, l := indexOf(p2.Ops, isHeader), indexOf(p2.Ops, isLookup); h < 0 || l < 0 || h > l {
		t.Fatalf("the header value must go in before the lookup entries:\n%s", opsText(p2.Ops))
	}
	if e := p2.Next.Map(model.MapHeaderValues).Entries; len(e) != 1 || e[0] != (model.MapEntry{Key: key, Value: "two"}) {
		t.Fatalf("header values %v", e)
	}
}
