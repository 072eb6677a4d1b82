//go:build e2e

package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/e2e/framework"
)

// Bounds of CreateWorkload.
const (
	workloadWorkers = 8
	workloadTimeout = 15 * time.Minute
	// minBackends is how many backend addresses the workload's endpoints spread over at least.
	minBackends = 4
)

// Workload is Routes plain HTTP Routes in one namespace, Route i (host rNNNN.bench.test) to its own
// headless Service whose EndpointSlice lists Endpoints ready endpoints. The endpoints are real backends of a
// pod network, shared among the Services (Service i gets backends i, i+1, … modulo their number), so
// every endpoint answers requests and health checks.
type Workload struct {
	Namespace         string
	Routes, Endpoints int
	Backends          []*framework.Backend
}

// Name returns the name of Route i and of its Service.
func (w *Workload) Name(i int) string { return fmt.Sprintf("r%04d", i) }

// Host returns the host of Route i.
func (w *Workload) Host(i int) string { return w.Name(i) + ".bench.test" }

// BackendsOf returns the backends listed in the EndpointSlice of Service i as created.
func (w *Workload) BackendsOf(i int) []*framework.Backend { return w.backendsAt(i, 0) }

// backendsAt returns the backends of Service i moved on by shift: backends i+shift, i+shift+1, ….
func (w *Workload) backendsAt(i, shift int) []*framework.Backend {
	out := make([]*framework.Backend, w.Endpoints)
	for j := range out {
		out[j] = w.Backends[(i+shift+j)%len(w.Backends)]
	}
	return out
}

// Shift replaces the endpoints of Service i with backends i+shift, i+shift+1, … (pod IP churn: the
// same number of endpoints at other addresses) and returns them.
func (w *Workload) Shift(ctx context.Context, c *framework.Cluster, i, shift int) ([]*framework.Backend, error) {
	slices := c.Kube.DiscoveryV1().EndpointSlices(w.Namespace)
	want := w.sliceAt(i, shift)
	cur, err := slices.Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("shift endpoints of %s/%s: %w", w.Namespace, w.Name(i), err)
	}
	want.ResourceVersion = cur.ResourceVersion
	if _, err := slices.Update(ctx, want, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("shift endpoints of %s/%s: %w", w.Namespace, w.Name(i), err)
	}
	return w.backendsAt(i, shift), nil
}

// CreateWorkload starts max(endpoints, 4) backends in pods and creates the workload's Services,
// EndpointSlices and Routes in ns through the admin clientsets, with a bounded pool of workers.
func CreateWorkload(t *testing.T, c *framework.Cluster, ns string, pods *framework.PodNetwork, routes, endpoints int) *Workload {
	t.Helper()
	if routes < 1 || endpoints < 1 {
		t.Fatalf("workload: want at least one Route and one endpoint, got %d and %d", routes, endpoints)
	}
	names := make([]string, max(endpoints, minBackends))
	for i := range names {
		names[i] = fmt.Sprintf("pod-%02d", i)
	}
	w := &Workload{Namespace: ns, Routes: routes, Endpoints: endpoints, Backends: pods.StartBackends(names...)}
	ctx, cancel := context.WithTimeout(context.Background(), workloadTimeout)
	defer cancel()
	start := time.Now()
	if err := forEach(ctx, routes, workloadWorkers, func(ctx context.Context, i int) error {
		return w.create(ctx, c, i)
	}); err != nil {
		t.Fatalf("workload: %v", err)
	}
	t.Logf("workload: %d Routes, Services and EndpointSlices (%d endpoints each) created in %v",
		routes, endpoints, time.Since(start).Round(time.Millisecond))
	return w
}

// create writes the Service, EndpointSlice and Route of index i.
func (w *Workload) create(ctx context.Context, c *framework.Cluster, i int) error {
	name, ns := w.Name(i), w.Namespace
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		// Headless: the test cluster's service range (10.0.0.0/24) holds 254 ClusterIPs, and routers
		// send traffic to the endpoints, not to the ClusterIP.
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{
			Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http"),
		}}},
	}
	if _, err := c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s/%s: %w", ns, name, err)
	}
	if _, err := c.Kube.DiscoveryV1().EndpointSlices(ns).Create(ctx, w.slice(i), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create endpointslice of %s/%s: %w", ns, name, err)
	}
	route := &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: routev1.RouteSpec{
			Host: w.Host(i),
			To:   routev1.RouteTargetReference{Kind: "Service", Name: name},
			Port: &routev1.RoutePort{TargetPort: intstr.FromString("http")},
		},
	}
	if _, err := c.Routes.RouteV1().Routes(ns).Create(ctx, route, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create route %s/%s: %w", ns, name, err)
	}
	return nil
}

// slice returns the EndpointSlice of Service i: its backends, ready, on port http (BackendPort).
func (w *Workload) slice(i int) *discoveryv1.EndpointSlice { return w.sliceAt(i, 0) }

// sliceAt returns the EndpointSlice of Service i with its backends moved on by shift.
func (w *Workload) sliceAt(i, shift int) *discoveryv1.EndpointSlice {
	name := w.Name(i)
	port, proto, ready, portName := int32(framework.BackendPort), corev1.ProtocolTCP, true, "http"
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-bench", Namespace: w.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	for _, b := range w.backendsAt(i, shift) {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{b.IP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: w.Namespace, Name: b.Name},
		})
	}
	return s
}

// forEach calls fn for 0…n-1 on at most workers goroutines and returns the first error (the others
// stop taking work once one has failed or ctx has ended).
func forEach(parent context.Context, n, workers int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil && parent.Err() != nil {
		first = fmt.Errorf("not finished: %w", parent.Err())
	}
	return first
}
