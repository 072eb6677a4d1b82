package plan_test

import (
	"reflect"
	"testing"

	"github.com/haroute/haroute/mapping/plan"
)

// TestUnknownReason: from an unknown state the plan is a reload labelled with the caller's reason
// (Initial by default), with a full pool and no ops.
func TestUnknownReason(t *testing.T) {
	c := loadCerts(t)
	desired := translate(t, baseInput(c), testOptions(2))
	if p := plan.ComputeWith(nil, desired, plan.Options{}); p.Reason().Kind != plan.Initial || len(p.Ops) > 0 {
		t.Fatalf("from nothing: reason %v, %d ops; want Initial and none", p.Reason(), len(p.Ops))
	}
	restart := plan.Reason{Kind: plan.Restart, Detail: "master PID changed"}
	p := plan.ComputeWith(nil, desired, plan.Options{Unknown: restart})
	if !reflect.DeepEqual(p.Structural, []plan.Reason{restart}) {
		t.Fatalf("structural %v, want exactly %v", p.Structural, restart)
	}
	if want := plan.Compute(nil, desired).Next; !reflect.DeepEqual(p.Next, want) {
		t.Fatal("the reason changed Next")
	}
}

// TestReloadEveryChange: in reload mode a change that ops could make is a reload (ReloadMode); no
// change stays no change, and a structural change keeps its own reason.
func TestReloadEveryChange(t *testing.T) {
	c := loadCerts(t)
	opts := testOptions(2)
	in := baseInput(c)
	applied := plan.Compute(nil, translate(t, in, opts)).Next
	mode := plan.Options{ReloadEveryChange: true}

	same := plan.ComputeWith(applied, translate(t, in, opts), mode)
	if same.NeedsReload() || len(same.Ops) > 0 {
		t.Fatalf("no change in reload mode: %v, %d ops", same.Structural, len(same.Ops))
	}
	scaled := in
	scaled.EndpointSlices = append(scaled.EndpointSlices[:0:0], in.EndpointSlices...)
	scaled.EndpointSlices[0] = newSlice("app", "s-plain", "127.0.1.1", "127.0.1.2", "127.0.1.50")
	desired := translate(t, scaled, opts)
	if p := plan.Compute(applied, desired); p.NeedsReload() || len(p.Ops) == 0 {
		t.Fatalf("fixture: a scale-out should be runtime ops, got %v", p.Structural)
	}
	p := plan.ComputeWith(applied, desired, mode)
	if p.Reason().Kind != plan.ReloadMode || len(p.Structural) != 1 || len(p.Ops) > 0 {
		t.Fatalf("scale-out in reload mode: %v, %d ops; want one ReloadMode reason", p.Structural, len(p.Ops))
	}
	balance := changeRoute(in, "app", "plain", withAnnotation("haproxy.router.openshift.io/balance", "leastconn"))
	if p := plan.ComputeWith(applied, translate(t, balance, opts), mode); p.Reason().Kind != plan.BackendOptionsChanged {
		t.Fatalf("an option change in reload mode: %v, want BackendOptionsChanged", p.Structural)
	}
}

// TestReloadPlan: Reload is a structural plan with exactly the given reason and a full pool.
func TestReloadPlan(t *testing.T) {
	c := loadCerts(t)
	desired := translate(t, baseInput(c), testOptions(3))
	r := plan.Reason{Kind: plan.TemplateChanged, Subject: "haproxy.cfg", Detail: "line 7"}
	p := plan.Reload(desired, plan.Options{}, r)
	if !reflect.DeepEqual(p.Structural, []plan.Reason{r}) || p.Reason() != r || len(p.Ops) > 0 {
		t.Fatalf("Reload = %+v", p)
	}
	if want := plan.Compute(nil, desired).Next; !reflect.DeepEqual(p.Next, want) {
		t.Fatal("Reload's Next differs from the initial plan's")
	}
	if (plan.Plan{}).Reason() != (plan.Reason{}) {
		t.Fatal("a plan without reload has a reason")
	}
}
