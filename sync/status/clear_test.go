package status

import (
	"context"
	"errors"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// admitAll returns a config admitting the Routes named (namespace "ns").
func admitAll(names ...string) *model.Config {
	cfg := &model.Config{}
	for _, n := range names {
		cfg.Routes = append(cfg.Routes, model.RouteInfo{Namespace: "ns", Name: n, Host: n + ".example.com"})
	}
	return cfg
}

// TestApplyClearsDepartedRoutes: a Route that leaves the router's view (the informer no longer lists
// it, as after a ROUTE_LABELS change) loses this router's entry and keeps the other routers'; a Route
// still listed but no longer decided about loses it too; a deleted Route needs nothing.
func TestApplyClearsDepartedRoutes(t *testing.T) {
	left, undecided, deleted, stays := route("ns", "left", "left.example.com"), route("ns", "undecided", "undecided.example.com"),
		route("ns", "deleted", "deleted.example.com"), route("ns", "stays", "stays.example.com")
	w, client, _ := newWriter(t, left, undecided, deleted, stays)
	ctx := context.Background()
	if err := w.Apply(ctx, list(t, client), admitAll("left", "undecided", "deleted", "stays"), nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	// Another router's entry on the Route that leaves.
	cur := get(t, client, "ns", "left")
	cur.Status.Ingress = append(cur.Status.Ingress, routev1.RouteIngress{Host: "left.example.com", RouterName: "sharded"})
	if _, err := client.RouteV1().Routes("ns").UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("other router's entry: %v", err)
	}
	if err := client.RouteV1().Routes("ns").Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	client.ClearActions()

	view := []*routev1.Route{get(t, client, "ns", "undecided"), get(t, client, "ns", "stays")}
	if err := w.Apply(ctx, view, admitAll("stays"), nil); err != nil {
		t.Fatalf("Apply after the departures: %v", err)
	}
	if got := statusUpdates(client); len(got) != 2 || got["ns/left"] != 1 || got["ns/undecided"] != 1 {
		t.Errorf("status updates %v, want one each for ns/left and ns/undecided", got)
	}
	r := get(t, client, "ns", "left")
	if len(own(r)) != 0 || len(r.Status.Ingress) != 1 || r.Status.Ingress[0].RouterName != "sharded" {
		t.Errorf("ns/left ingress %+v, want only the other router's entry", r.Status.Ingress)
	}
	if r := get(t, client, "ns", "undecided"); len(r.Status.Ingress) != 0 {
		t.Errorf("ns/undecided ingress %+v, want none", r.Status.Ingress)
	}
	if len(own(get(t, client, "ns", "stays"))) != 1 {
		t.Error("ns/stays lost its entry")
	}

	// Nothing more to do on the next Apply.
	client.ClearActions()
	if err := w.Apply(ctx, view, admitAll("stays"), nil); err != nil {
		t.Fatalf("third Apply: %v", err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("%d API calls on an unchanged Apply, want none: %v", n, client.Actions())
	}
}

// TestApplyRetriesFailedClear: when removing the entry fails, Apply reports it and tries again next
// time.
func TestApplyRetriesFailedClear(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "a", "a.example.com"))
	ctx := context.Background()
	if err := w.Apply(ctx, list(t, client), admitAll("a"), nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	fail := true
	client.PrependReactor("update", "routes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if fail && a.GetSubresource() == "status" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is sad"))
		}
		return false, nil, nil
	})
	if err := w.Apply(ctx, nil, &model.Config{}, []mapping.Problem{}); err == nil {
		t.Fatal("Apply hid the failed status update")
	}
	if len(own(get(t, client, "ns", "a"))) != 1 {
		t.Fatal("entry gone although the update failed")
	}
	fail = false
	if err := w.Apply(ctx, nil, &model.Config{}, nil); err != nil {
		t.Fatalf("Apply retry: %v", err)
	}
	if len(own(get(t, client, "ns", "a"))) != 0 {
		t.Error("entry still there after the retry")
	}
}

// TestFirstApplyClearsEntriesLeftWhileDown: a Route that left this router's selection while the
// router was down still carries its entry; the first Apply finds it in a list of every Route and
// removes the entry (other routers' entries stay), and later Applies do not list again.
func TestFirstApplyClearsEntriesLeftWhileDown(t *testing.T) {
	stale := route("other-shard", "old", "old.example.com")
	stale.Status.Ingress = []routev1.RouteIngress{
		{Host: "old.example.com", RouterName: routerName},
		{Host: "old.example.com", RouterName: "sharded"},
	}
	served := route("ns", "a", "a.example.com")
	w, client, _ := newWriter(t, stale, served)
	ctx := context.Background()
	view := []*routev1.Route{get(t, client, "ns", "a")}
	if err := w.Apply(ctx, view, admitAll("a"), nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	r := get(t, client, "other-shard", "old")
	if len(own(r)) != 0 || len(r.Status.Ingress) != 1 || r.Status.Ingress[0].RouterName != "sharded" {
		t.Errorf("stale route ingress %+v, want only the other router's entry", r.Status.Ingress)
	}
	client.ClearActions()
	if err := w.Apply(ctx, view, admitAll("a"), nil); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" {
			t.Errorf("the second Apply listed Routes again: %v", a)
		}
	}
}
