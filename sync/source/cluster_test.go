package source

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	routefake "github.com/openshift/client-go/route/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haroute/haroute/mapping"
)

// clusterWait is the bound of every wait in these tests.
const clusterWait = 10 * time.Second

// clusterBed is a Cluster over fake clientsets, running until the test ends.
type clusterBed struct {
	c      *Cluster
	kube   *kubefake.Clientset
	routes *routefake.Clientset
}

// startCluster creates a Cluster over fake clientsets holding the given objects, runs it until the
// test ends (Run must return within the bound), and waits until it has synced and its watches are
// established (the fake API server does not replay events that happen between list and watch).
func startCluster(t *testing.T, opts ClusterOptions, kubeObjs, routeObjs []runtime.Object) *clusterBed {
	t.Helper()
	b := newBed(opts, kubeObjs, routeObjs)
	if b.c.HasSynced() {
		t.Fatal("HasSynced before Run")
	}
	b.run(t)
	kEventually(t, "the cluster source synced", b.c.HasSynced)
	b.waitWatch(t, b.routes.Fake.Actions, "routes", "")
	b.waitWatch(t, b.kube.Fake.Actions, "services", "")
	b.waitWatch(t, b.kube.Fake.Actions, "endpointslices", "")
	if opts.NamespaceLabels != nil {
		b.waitWatch(t, b.kube.Fake.Actions, "namespaces", "")
	}
	return b
}

func newBed(opts ClusterOptions, kubeObjs, routeObjs []runtime.Object) *clusterBed {
	kube := kubefake.NewClientset(kubeObjs...)
	routes := routefake.NewClientset(routeObjs...)
	return &clusterBed{c: NewCluster(kube, routes, opts), kube: kube, routes: routes}
}

// run starts Run in a goroutine; the test's cleanup cancels it and waits (bounded) for it to return nil.
func (b *clusterBed) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(clusterWait):
			t.Errorf("Run did not return within %v of the cancel", clusterWait)
		}
	})
}

// waitWatch waits until a watch on resource (in namespace ns) has been opened.
func (b *clusterBed) waitWatch(t *testing.T, actions func() []k8stesting.Action, resource, ns string) {
	t.Helper()
	kEventually(t, "a watch on "+resource, func() bool {
		return slices.ContainsFunc(actions(), func(a k8stesting.Action) bool {
			return a.GetVerb() == "watch" && a.GetResource().Resource == resource && a.GetNamespace() == ns
		})
	})
}

// drain empties the Changes channel.
func (b *clusterBed) drain() {
	for {
		select {
		case <-b.c.Changes():
		default:
			return
		}
	}
}

// changed fails the test unless Changes fires within the bound.
func (b *clusterBed) changed(t *testing.T, what string) {
	t.Helper()
	select {
	case <-b.c.Changes():
	case <-time.After(clusterWait):
		t.Fatalf("no change signal after %s within %v", what, clusterWait)
	}
}

// snapshotEventually waits until the snapshot satisfies ok and returns it.
func (b *clusterBed) snapshotEventually(t *testing.T, what string, ok func(mapping.Input) bool) mapping.Input {
	t.Helper()
	var in mapping.Input
	kEventually(t, what, func() bool {
		var errs []FileError
		in, errs = b.c.Snapshot()
		if errs != nil {
			t.Fatalf("Snapshot returned file errors %v", errs)
		}
		return ok(in)
	})
	return in
}

// eventually polls cond every 5 ms until it holds, failing the test after the bound.
func kEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", clusterWait, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func kNames[T metav1.Object](objs []T) []string {
	out := []string{}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" {
			out = append(out, ns+"/"+o.GetName())
		} else {
			out = append(out, o.GetName())
		}
	}
	return out
}

func kRoute(ns, name, host string, lbls map[string]string) *routev1.Route {
	return &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Spec: routev1.RouteSpec{
			Host: host,
			To:   routev1.RouteTargetReference{Kind: "Service", Name: name},
		},
	}
}

func kSecretRoute(ns, name, secret string) *routev1.Route {
	r := kRoute(ns, name, name+".example.com", nil)
	r.Spec.TLS = &routev1.TLSConfig{
		Termination:         routev1.TLSTerminationEdge,
		ExternalCertificate: &routev1.LocalObjectReference{Name: secret},
	}
	return r
}

func kService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
}

func kEndpointSlice(ns, name, svc, ip string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}}},
	}
}

func kSecret(ns, name, data string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": []byte(data), "tls.key": []byte("key")},
	}
}

func kNamespace(name string, lbls map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

func TestClusterSyncAndRunOnce(t *testing.T) {
	b := newBed(ClusterOptions{}, []runtime.Object{kService("a", "s")}, nil)
	if b.c.HasSynced() {
		t.Fatal("HasSynced before Run")
	}
	if in, _ := b.c.Snapshot(); len(in.Services) != 0 {
		t.Fatalf("Snapshot before Run has %v", kNames(in.Services))
	}
	b.run(t)
	// The first signal comes once every cache has synced.
	b.changed(t, "the first sync")
	kEventually(t, "HasSynced", b.c.HasSynced)
	in, errs := b.c.Snapshot()
	if errs != nil {
		t.Fatalf("file errors %v", errs)
	}
	if got := kNames(in.Services); !slices.Equal(got, []string{"a/s"}) {
		t.Fatalf("services %v, want [a/s]", got)
	}
	if err := b.c.Run(context.Background()); err == nil {
		t.Fatal("a second Run did not fail")
	}
}

func TestClusterRunStopsWhenCancelledBeforeSync(t *testing.T) {
	b := newBed(ClusterOptions{}, nil, nil)
	// Routes never list: the caches cannot sync, and Run must still end with its context.
	b.routes.PrependReactor("list", "routes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("injected list failure")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.c.Run(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(clusterWait):
		t.Fatal("Run did not return after its context ended")
	}
	if b.c.HasSynced() {
		t.Fatal("HasSynced although Routes never listed")
	}
}

func TestClusterFollowsObjects(t *testing.T) {
	b := startCluster(t, ClusterOptions{}, nil, nil)
	ctx := context.Background()
	b.drain()

	if _, err := b.routes.RouteV1().Routes("b").Create(ctx, kRoute("b", "web", "web.example.com", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "a Route create")
	if _, err := b.routes.RouteV1().Routes("a").Create(ctx, kRoute("a", "web", "a.example.com", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.kube.CoreV1().Services("b").Create(ctx, kService("b", "web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "a Service create")
	for _, s := range []*discoveryv1.EndpointSlice{
		kEndpointSlice("b", "web-2", "web", "10.0.0.2"),
		kEndpointSlice("b", "web-1", "web", "10.0.0.1"),
		kEndpointSlice("b", "other-1", "other", "10.0.0.3"),
	} {
		if _, err := b.kube.DiscoveryV1().EndpointSlices("b").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	b.changed(t, "EndpointSlice creates")

	in := b.snapshotEventually(t, "the created objects", func(in mapping.Input) bool {
		return len(in.Routes) == 2 && len(in.Services) == 1 && len(in.EndpointSlices) == 3
	})
	if got, want := kNames(in.Routes), []string{"a/web", "b/web"}; !slices.Equal(got, want) {
		t.Errorf("routes %v, want %v (sorted)", got, want)
	}
	if got, want := kNames(in.EndpointSlices), []string{"b/other-1", "b/web-1", "b/web-2"}; !slices.Equal(got, want) {
		t.Errorf("endpoint slices %v, want %v (sorted)", got, want)
	}
	if in.Namespaces != nil || in.Secrets != nil {
		t.Errorf("unexpected namespaces %v / secrets %v", kNames(in.Namespaces), kNames(in.Secrets))
	}

	// The snapshot shares the cached objects: without a change, the next one holds the same pointers
	// (mapping.Translator skips what keeps its pointer).
	again, _ := b.c.Snapshot()
	if again.Routes[0] != in.Routes[0] || again.Services[0] != in.Services[0] || again.EndpointSlices[1] != in.EndpointSlices[1] {
		t.Error("an unchanged object got a new pointer in the next Snapshot")
	}

	// The slices keep the kubernetes.io/service-name label Translate finds a Service's slices by.
	if got, want := kNames(slicesOf(in, "b", "web")), []string{"b/web-1", "b/web-2"}; !slices.Equal(got, want) {
		t.Errorf("slices of b/web %v, want %v", got, want)
	}
	if got := slicesOf(in, "a", "web"); len(got) != 0 {
		t.Errorf("slices of a/web %v, want none", kNames(got))
	}

	// Updates signal and show.
	b.drain()
	upd := kEndpointSlice("b", "web-1", "web", "10.0.0.11")
	if _, err := b.kube.DiscoveryV1().EndpointSlices("b").Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "an EndpointSlice update")
	updated := b.snapshotEventually(t, "the updated EndpointSlice", func(in mapping.Input) bool {
		return len(in.EndpointSlices) == 3 && in.EndpointSlices[1].Endpoints[0].Addresses[0] == "10.0.0.11"
	})
	// An update replaces the cached object: the old one (held by the earlier snapshot) is untouched,
	// and the objects that did not change keep their pointers.
	if in.EndpointSlices[1].Endpoints[0].Addresses[0] != "10.0.0.1" || updated.EndpointSlices[1] == in.EndpointSlices[1] {
		t.Error("the EndpointSlice update modified the cached object in place")
	}
	if updated.EndpointSlices[0] != in.EndpointSlices[0] || updated.Routes[0] != in.Routes[0] {
		t.Error("an EndpointSlice update gave other objects new pointers")
	}

	// Deletions signal and show, kind by kind.
	b.drain()
	if err := b.routes.RouteV1().Routes("a").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "a Route delete")
	b.snapshotEventually(t, "the Route deletion", func(in mapping.Input) bool { return len(in.Routes) == 1 })
	b.drain()
	if err := b.kube.CoreV1().Services("b").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "a Service delete")
	b.snapshotEventually(t, "the Service deletion", func(in mapping.Input) bool { return len(in.Services) == 0 })
	b.drain()
	if err := b.kube.DiscoveryV1().EndpointSlices("b").Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "an EndpointSlice delete")
	in = b.snapshotEventually(t, "the EndpointSlice deletion", func(in mapping.Input) bool { return len(in.EndpointSlices) == 2 })
	if got := kNames(slicesOf(in, "b", "web")); !slices.Equal(got, []string{"b/web-1"}) {
		t.Errorf("slices of b/web after the delete %v", got)
	}
}

// slicesOf returns the EndpointSlices of in that the kubernetes.io/service-name label gives to the
// Service namespace/service, in snapshot order.
func slicesOf(in mapping.Input, namespace, service string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, s := range in.EndpointSlices {
		if s.Namespace == namespace && s.Labels[discoveryv1.LabelServiceName] == service {
			out = append(out, s)
		}
	}
	return out
}

func TestClusterRouteLabels(t *testing.T) {
	sel, err := labels.Parse("shard=a")
	if err != nil {
		t.Fatal(err)
	}
	b := startCluster(t, ClusterOptions{RouteLabels: sel}, nil, []runtime.Object{
		kRoute("x", "in", "in.example.com", map[string]string{"shard": "a"}),
		kRoute("x", "out", "out.example.com", nil),
		kRoute("x", "other", "other.example.com", map[string]string{"shard": "b"}),
	})
	// The selector goes to the API server in the list options.
	var listed []string
	for _, a := range b.routes.Fake.Actions() {
		if l, ok := a.(k8stesting.ListActionImpl); ok && a.GetResource().Resource == "routes" {
			listed = append(listed, l.ListOptions.LabelSelector)
		}
	}
	if len(listed) == 0 || !slices.Equal(slices.Compact(listed), []string{"shard=a"}) {
		t.Errorf("route list label selectors %q, want [shard=a]", listed)
	}
	in, _ := b.c.Snapshot()
	if got := kNames(in.Routes); !slices.Equal(got, []string{"x/in"}) {
		t.Errorf("routes %v, want [x/in]", got)
	}

	// Routes created later: only the labelled one shows (the fake watch ignores selectors, so this
	// also checks the source's own filter).
	ctx := context.Background()
	for _, r := range []*routev1.Route{
		kRoute("x", "late-out", "late-out.example.com", nil),
		kRoute("x", "late-in", "late-in.example.com", map[string]string{"shard": "a"}),
	} {
		if _, err := b.routes.RouteV1().Routes("x").Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in = b.snapshotEventually(t, "the labelled late Route", func(in mapping.Input) bool { return len(in.Routes) >= 2 })
	if got := kNames(in.Routes); !slices.Equal(got, []string{"x/in", "x/late-in"}) {
		t.Errorf("routes %v, want [x/in x/late-in]", got)
	}
}

func TestClusterNamespaceLabels(t *testing.T) {
	nss := []runtime.Object{
		kNamespace("red", map[string]string{"router": "r1"}),
		kNamespace("blue", nil),
	}
	t.Run("unset", func(t *testing.T) {
		b := startCluster(t, ClusterOptions{}, nss, nil)
		in, _ := b.c.Snapshot()
		if in.Namespaces != nil {
			t.Errorf("namespaces %v without NAMESPACE_LABELS", kNames(in.Namespaces))
		}
		for _, a := range b.kube.Fake.Actions() {
			if a.GetResource().Resource == "namespaces" {
				t.Errorf("namespaces were %sed without NAMESPACE_LABELS", a.GetVerb())
			}
		}
	})
	t.Run("set", func(t *testing.T) {
		sel, err := labels.Parse("router=r1")
		if err != nil {
			t.Fatal(err)
		}
		b := startCluster(t, ClusterOptions{NamespaceLabels: sel}, nss, nil)
		in, _ := b.c.Snapshot()
		if got := kNames(in.Namespaces); !slices.Equal(got, []string{"red"}) {
			t.Errorf("namespaces %v, want [red]", got)
		}
		b.drain()
		ctx := context.Background()
		if _, err := b.kube.CoreV1().Namespaces().Create(ctx, kNamespace("green", map[string]string{"router": "r1"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		b.changed(t, "a Namespace create")
		in = b.snapshotEventually(t, "the new Namespace", func(in mapping.Input) bool { return len(in.Namespaces) == 2 })
		if got := kNames(in.Namespaces); !slices.Equal(got, []string{"green", "red"}) {
			t.Errorf("namespaces %v, want [green red]", got)
		}
		b.drain()
		if err := b.kube.CoreV1().Namespaces().Delete(ctx, "red", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		b.changed(t, "a Namespace delete")
		b.snapshotEventually(t, "the Namespace deletion", func(in mapping.Input) bool { return len(in.Namespaces) == 1 })
	})
}

// secretLists returns the field selectors of the Secret lists made in namespace ns.
func secretLists(kube *kubefake.Clientset, ns string) []string {
	var out []string
	for _, a := range kube.Fake.Actions() {
		if l, ok := a.(k8stesting.ListActionImpl); ok && a.GetResource().Resource == "secrets" && a.GetNamespace() == ns {
			out = append(out, l.ListOptions.FieldSelector)
		}
	}
	return out
}

func TestClusterSecrets(t *testing.T) {
	b := startCluster(t, ClusterOptions{}, []runtime.Object{
		kSecret("app", "cert", "v1"),
		kSecret("app", "unrelated", "x"),
		kSecret("other", "cert", "y"),
	}, nil)
	if got := secretLists(b.kube, "app"); got != nil {
		t.Fatalf("Secrets listed with no Route referencing one: %q", got)
	}
	in, _ := b.c.Snapshot()
	if in.Secrets != nil {
		t.Fatalf("secrets %v with no Route referencing one", kNames(in.Secrets))
	}

	ctx := context.Background()
	b.drain()
	if _, err := b.routes.RouteV1().Routes("app").Create(ctx, kSecretRoute("app", "tls", "cert"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "a Route referencing a Secret")
	in = b.snapshotEventually(t, "the referenced Secret", func(in mapping.Input) bool { return len(in.Secrets) > 0 })
	if got := kNames(in.Secrets); !slices.Equal(got, []string{"app/cert"}) {
		t.Fatalf("secrets %v, want [app/cert]", got)
	}
	if got := secretLists(b.kube, "app"); len(got) == 0 || got[0] != "metadata.name=cert" {
		t.Errorf("Secret list field selectors %q, want metadata.name=cert", got)
	}
	kEventually(t, "HasSynced with the Secret watch", b.c.HasSynced)

	// The Secret's changes follow.
	b.waitWatch(t, b.kube.Fake.Actions, "secrets", "app")
	b.drain()
	if _, err := b.kube.CoreV1().Secrets("app").Update(ctx, kSecret("app", "cert", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "a Secret update")
	b.snapshotEventually(t, "the updated Secret", func(in mapping.Input) bool {
		return len(in.Secrets) == 1 && string(in.Secrets[0].Data["tls.crt"]) == "v2"
	})

	// When the last Route referencing it goes, so does the Secret (and its watch).
	b.drain()
	if err := b.routes.RouteV1().Routes("app").Delete(ctx, "tls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.changed(t, "the Route delete")
	b.snapshotEventually(t, "the Secret gone", func(in mapping.Input) bool { return len(in.Secrets) == 0 && len(in.Routes) == 0 })
	kEventually(t, "the Secret watch stopped", func() bool {
		b.c.mu.Lock()
		defer b.c.mu.Unlock()
		return len(b.c.secrets) == 0
	})
}

func TestClusterSecretOfExistingRouteIsPartOfSync(t *testing.T) {
	// A Route present at start: once HasSynced holds, its Secret is already in the snapshot.
	b := newBed(ClusterOptions{}, []runtime.Object{kSecret("app", "cert", "v1")},
		[]runtime.Object{kSecretRoute("app", "tls", "cert"), kSecretRoute("app", "missing", "nope")})
	b.run(t)
	kEventually(t, "HasSynced", b.c.HasSynced)
	in, _ := b.c.Snapshot()
	if got := kNames(in.Secrets); !slices.Equal(got, []string{"app/cert"}) {
		t.Fatalf("secrets at sync %v, want [app/cert]", got)
	}
	b.c.mu.Lock()
	watches := len(b.c.secrets)
	b.c.mu.Unlock()
	if watches != 2 {
		t.Errorf("%d Secret watches, want 2 (one per referenced Secret, found or not)", watches)
	}
}
