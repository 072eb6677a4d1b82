package status

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	routefake "github.com/openshift/client-go/route/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

const routerName = "default"

var (
	t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func route(ns, name, host string) *routev1.Route {
	return &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)},
		Spec: routev1.RouteSpec{
			Host: host,
			To:   routev1.RouteTargetReference{Kind: "Service", Name: name},
		},
	}
}

// newWriter returns a Writer on a fake clientset holding routes, with a clock the test moves.
func newWriter(t *testing.T, routes ...*routev1.Route) (*Writer, *routefake.Clientset, *atomic.Pointer[time.Time]) {
	t.Helper()
	objs := make([]runtime.Object, 0, len(routes))
	for _, r := range routes {
		objs = append(objs, r)
	}
	client := routefake.NewClientset(objs...)
	w := NewWriter(client, routerName, "router.apps.example.com", nil)
	var clock atomic.Pointer[time.Time]
	clock.Store(&t0)
	w.now = func() time.Time { return *clock.Load() }
	return w, client, &clock
}

// list returns the Routes as the API server has them now (what an informer would hand over).
func list(t *testing.T, client *routefake.Clientset) []*routev1.Route {
	t.Helper()
	l, err := client.RouteV1().Routes("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list routes: %v", err)
	}
	out := make([]*routev1.Route, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

func get(t *testing.T, client *routefake.Clientset, ns, name string) *routev1.Route {
	t.Helper()
	r, err := client.RouteV1().Routes(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s/%s: %v", ns, name, err)
	}
	return r
}

// statusUpdates counts the UpdateStatus calls made since the last ClearActions, per "ns/name".
func statusUpdates(client *routefake.Clientset) map[string]int {
	out := map[string]int{}
	for _, a := range client.Actions() {
		u, ok := a.(k8stesting.UpdateAction)
		if !ok || a.GetVerb() != "update" || a.GetSubresource() != "status" {
			continue
		}
		r := u.GetObject().(*routev1.Route)
		out[r.Namespace+"/"+r.Name]++
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// own returns this router's entries of the Route.
func own(r *routev1.Route) []routev1.RouteIngress {
	var out []routev1.RouteIngress
	for _, in := range r.Status.Ingress {
		if in.RouterName == routerName {
			out = append(out, in)
		}
	}
	return out
}

func onlyCondition(t *testing.T, r *routev1.Route) (routev1.RouteIngress, routev1.RouteIngressCondition) {
	t.Helper()
	entries := own(r)
	if len(entries) != 1 {
		t.Fatalf("%s/%s: %d entries of router %q, want 1: %+v", r.Namespace, r.Name, len(entries), routerName, r.Status.Ingress)
	}
	in := entries[0]
	if len(in.Conditions) != 1 || in.Conditions[0].Type != routev1.RouteAdmitted {
		t.Fatalf("%s/%s: conditions %+v, want one Admitted", r.Namespace, r.Name, in.Conditions)
	}
	return in, in.Conditions[0]
}

// fixture: a admitted, w a wildcard Route admitted, g admitted with a generated host, b rejected,
// warn admitted-elsewhere warning only (not this router's), other out of shard.
func fixture() ([]*routev1.Route, *model.Config, []mapping.Problem) {
	wild := route("ns1", "w", "www.wild.example.com")
	wild.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain
	routes := []*routev1.Route{
		route("ns1", "a", "a.example.com"),
		wild,
		route("ns1", "g", ""),
		route("ns2", "b", "a.example.com"),
		route("ns2", "warn", "warn.example.com"),
		route("ns3", "other", "other.example.com"),
	}
	cfg := &model.Config{Routes: []model.RouteInfo{
		{Namespace: "ns1", Name: "a", Host: "a.example.com", Backend: "be_http:ns1:a"},
		{Namespace: "ns1", Name: "g", Host: "g-ns1.apps.example.com", Backend: "be_http:ns1:g"},
		{Namespace: "ns1", Name: "w", Host: "*.wild.example.com", Backend: "be_http:ns1:w"},
	}}
	problems := []mapping.Problem{
		{Namespace: "ns1", Name: "a", Reason: mapping.ReasonEndpointRejected, Message: "loopback", Warning: true},
		{Namespace: "ns2", Name: "b", Reason: mapping.ReasonHostAlreadyClaimed, Message: "route a already exposes a.example.com"},
		{Namespace: "ns2", Name: "warn", Reason: mapping.ReasonEndpointRejected, Message: "loopback", Warning: true},
	}
	return routes, cfg, problems
}

func TestApplyWritesAdmittedAndRejected(t *testing.T) {
	routes, cfg, problems := fixture()
	w, client, _ := newWriter(t, routes...)
	ctx := context.Background()

	if err := w.Apply(ctx, list(t, client), cfg, problems); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	updates := statusUpdates(client)
	want := map[string]int{"ns1/a": 1, "ns1/g": 1, "ns1/w": 1, "ns2/b": 1}
	if len(updates) != len(want) {
		t.Fatalf("status updates %v, want %v", updates, want)
	}
	for k, n := range want {
		if updates[k] != n {
			t.Fatalf("status updates %v, want %v", updates, want)
		}
	}

	hosts := map[string]string{"ns1/a": "a.example.com", "ns1/g": "g-ns1.apps.example.com", "ns1/w": "www.wild.example.com"}
	for key, host := range hosts {
		ns, name, _ := strings.Cut(key, "/")
		in, c := onlyCondition(t, get(t, client, ns, name))
		if in.Host != host || c.Status != corev1.ConditionTrue || c.Reason != "" || c.Message != "" {
			t.Errorf("%s: entry %+v condition %+v, want host %s admitted", key, in, c, host)
		}
		if in.RouterCanonicalHostname != "router.apps.example.com" {
			t.Errorf("%s: canonical hostname %q", key, in.RouterCanonicalHostname)
		}
		if c.LastTransitionTime == nil || !c.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("%s: LastTransitionTime %v, want %v", key, c.LastTransitionTime, t0)
		}
	}
	in, _ := onlyCondition(t, get(t, client, "ns1", "w"))
	if in.WildcardPolicy != routev1.WildcardPolicySubdomain {
		t.Errorf("ns1/w: wildcard policy %q", in.WildcardPolicy)
	}
	in, c := onlyCondition(t, get(t, client, "ns2", "b"))
	if in.Host != "a.example.com" || in.WildcardPolicy != routev1.WildcardPolicyNone || c.Status != corev1.ConditionFalse ||
		c.Reason != mapping.ReasonHostAlreadyClaimed || c.Message != "route a already exposes a.example.com" {
		t.Errorf("ns2/b: entry %+v condition %+v, want HostAlreadyClaimed", in, c)
	}
	for _, key := range []string{"ns2/warn", "ns3/other"} {
		ns, name, _ := strings.Cut(key, "/")
		if r := get(t, client, ns, name); len(r.Status.Ingress) != 0 {
			t.Errorf("%s: status written for a Route that is not this router's: %+v", key, r.Status.Ingress)
		}
	}
}

func TestApplySameInputWritesNothing(t *testing.T) {
	routes, cfg, problems := fixture()
	w, client, clock := newWriter(t, routes...)
	ctx := context.Background()
	if err := w.Apply(ctx, list(t, client), cfg, problems); err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	if n := total(statusUpdates(client)); n != 4 {
		t.Fatalf("first Apply made %d status updates, want 4", n)
	}
	client.ClearActions()
	clock.Store(&t1) // a different clock must not make an entry look changed

	if err := w.Apply(ctx, list(t, client), cfg, problems); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	if u := statusUpdates(client); len(u) != 0 {
		t.Fatalf("second Apply with the same input updated %v, want nothing", u)
	}
}

func TestApplyKeepsOtherRoutersEntries(t *testing.T) {
	r := route("ns", "r", "r.example.com")
	otherEntry := routev1.RouteIngress{
		Host: "r.example.com", RouterName: "sharded", WildcardPolicy: routev1.WildcardPolicyNone,
		Conditions: []routev1.RouteIngressCondition{{
			Type: routev1.RouteAdmitted, Status: corev1.ConditionFalse, Reason: "Other", Message: "theirs",
			LastTransitionTime: &metav1.Time{Time: t0.Add(-24 * time.Hour)},
		}},
	}
	// Two stale entries of ours around the other router's: one replaced in place, the duplicate dropped.
	stale := routev1.RouteIngress{Host: "old.example.com", RouterName: routerName}
	r.Status.Ingress = []routev1.RouteIngress{stale, otherEntry, stale}
	w, client, _ := newWriter(t, r)

	cfg := &model.Config{Routes: []model.RouteInfo{{Namespace: "ns", Name: "r", Host: "r.example.com"}}}
	if err := w.Apply(context.Background(), list(t, client), cfg, nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got := get(t, client, "ns", "r").Status.Ingress
	if len(got) != 2 {
		t.Fatalf("ingress %+v, want ours then the other router's", got)
	}
	if got[0].RouterName != routerName || got[0].Host != "r.example.com" || got[0].Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("our entry %+v", got[0])
	}
	if !sameIgnoringTime(got[1], otherEntry) || !got[1].Conditions[0].LastTransitionTime.Equal(otherEntry.Conditions[0].LastTransitionTime) {
		t.Errorf("other router's entry changed: %+v, want %+v", got[1], otherEntry)
	}
}

func TestApplyReasonChange(t *testing.T) {
	r := route("ns", "r", "r.example.com")
	w, client, clock := newWriter(t, r)
	ctx := context.Background()
	reject := func(reason string) []mapping.Problem {
		return []mapping.Problem{{Namespace: "ns", Name: "r", Reason: reason, Message: "m " + reason}}
	}

	if err := w.Apply(ctx, list(t, client), &model.Config{}, reject(mapping.ReasonInvalidHost)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	client.ClearActions()
	clock.Store(&t1)

	// Another reason, same status: one update, LastTransitionTime kept.
	if err := w.Apply(ctx, list(t, client), &model.Config{}, reject(mapping.ReasonInvalidAnnotation)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if u := statusUpdates(client); u["ns/r"] != 1 || len(u) != 1 {
		t.Fatalf("updates %v, want one for ns/r", u)
	}
	_, c := onlyCondition(t, get(t, client, "ns", "r"))
	if c.Reason != mapping.ReasonInvalidAnnotation || c.Message != "m InvalidAnnotation" || c.Status != corev1.ConditionFalse {
		t.Errorf("condition %+v, want InvalidAnnotation", c)
	}
	if !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("LastTransitionTime %v, want %v kept (status unchanged)", c.LastTransitionTime, t0)
	}

	// Admitted now: the status changes, so does LastTransitionTime.
	client.ClearActions()
	cfg := &model.Config{Routes: []model.RouteInfo{{Namespace: "ns", Name: "r", Host: "r.example.com"}}}
	if err := w.Apply(ctx, list(t, client), cfg, nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if n := total(statusUpdates(client)); n != 1 {
		t.Fatalf("%d updates, want 1", n)
	}
	_, c = onlyCondition(t, get(t, client, "ns", "r"))
	if c.Status != corev1.ConditionTrue || c.Reason != "" || !c.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("condition %+v, want admitted at %v", c, t1)
	}
}

// conflictOn makes the first n UpdateStatus calls answer 409.
func conflictOn(client *routefake.Clientset, n int) *atomic.Int32 {
	var calls atomic.Int32
	client.PrependReactor("update", "routes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		if int(calls.Add(1)) <= n {
			r := a.(k8stesting.UpdateAction).GetObject().(*routev1.Route)
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "route.openshift.io", Resource: "routes"}, r.Name, errors.New("object was modified"))
		}
		return false, nil, nil
	})
	return &calls
}

func TestApplyRetriesConflicts(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
	calls := conflictOn(client, 2)
	cfg := &model.Config{Routes: []model.RouteInfo{{Namespace: "ns", Name: "r", Host: "r.example.com"}}}
	if err := w.Apply(context.Background(), list(t, client), cfg, nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d UpdateStatus calls, want 3 (two conflicts, then success)", n)
	}
	gets := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "get" {
			gets++
		}
	}
	if gets != 2 {
		t.Errorf("%d GETs, want one after each conflict", gets)
	}
	if _, c := onlyCondition(t, get(t, client, "ns", "r")); c.Status != corev1.ConditionTrue {
		t.Errorf("condition %+v, want admitted", c)
	}
}

func TestApplyConflictsAreBounded(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
	calls := conflictOn(client, 1000)
	cfg := &model.Config{Routes: []model.RouteInfo{{Namespace: "ns", Name: "r", Host: "r.example.com"}}}
	err := w.Apply(context.Background(), list(t, client), cfg, nil)
	if !apierrors.IsConflict(err) {
		t.Fatalf("Apply error %v, want a conflict", err)
	}
	if n := calls.Load(); n != defaultMaxAttempts {
		t.Errorf("%d UpdateStatus calls, want %d", n, defaultMaxAttempts)
	}
}

func TestApplySkipsRouteChangedSinceSnapshot(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
	snapshot := list(t, client)
	moved := get(t, client, "ns", "r")
	moved.Spec.Host = "elsewhere.example.com"
	if _, err := client.RouteV1().Routes("ns").Update(context.Background(), moved, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	calls := conflictOn(client, 1)
	cfg := &model.Config{Routes: []model.RouteInfo{{Namespace: "ns", Name: "r", Host: "r.example.com"}}}
	if err := w.Apply(context.Background(), snapshot, cfg, nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d UpdateStatus calls, want 1 (the result was for the old spec)", n)
	}
	if r := get(t, client, "ns", "r"); len(r.Status.Ingress) != 0 {
		t.Errorf("status written for a changed Route: %+v", r.Status.Ingress)
	}
}

func TestApplyNotFoundAndFailures(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "a", "a.example.com"), route("ns", "c", "c.example.com"))
	client.PrependReactor("update", "routes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.UpdateAction).GetObject().(*routev1.Route)
		if a.GetSubresource() == "status" && r.Name == "a" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is sad"))
		}
		return false, nil, nil
	})
	routes := append(list(t, client), route("ns", "b", "b.example.com")) // b is gone from the API
	cfg := &model.Config{Routes: []model.RouteInfo{
		{Namespace: "ns", Name: "a", Host: "a.example.com"},
		{Namespace: "ns", Name: "b", Host: "b.example.com"},
		{Namespace: "ns", Name: "c", Host: "c.example.com"},
	}}
	err := w.Apply(context.Background(), routes, cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "ns/a") || strings.Contains(err.Error(), "ns/b") {
		t.Fatalf("Apply error %v, want one naming only ns/a", err)
	}
	if _, c := onlyCondition(t, get(t, client, "ns", "c")); c.Status != corev1.ConditionTrue {
		t.Errorf("ns/c condition %+v, want admitted despite ns/a failing", c)
	}
}

func TestApplyDoesNotModifySnapshot(t *testing.T) {
	routes, cfg, problems := fixture()
	w, client, _ := newWriter(t, routes...)
	snapshot := list(t, client)
	before := make([]*routev1.Route, len(snapshot))
	for i, r := range snapshot {
		before[i] = r.DeepCopy()
	}
	if err := w.Apply(context.Background(), snapshot, cfg, problems); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for i := range snapshot {
		if len(snapshot[i].Status.Ingress) != len(before[i].Status.Ingress) {
			t.Fatalf("Apply modified the snapshot of %s", snapshot[i].Name)
		}
	}
}
