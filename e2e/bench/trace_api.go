//go:build e2e

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/e2e/framework"
)

// traceAPI writes the objects of one trace run in its namespace with the admin clients, playing the
// user and the endpoint controller. Every method returns its error (none fails the test), so that
// the traces may call them from several goroutines.
type traceAPI struct {
	c  *framework.Cluster
	ns string
	// writes counts the API calls that wrote something (a create, update, patch or delete).
	writes atomic.Int64

	mu sync.Mutex
	// slices are the EndpointSlices as last written, by Service: the next update carries their
	// resourceVersion (nobody else writes them).
	slices map[string]*discoveryv1.EndpointSlice
}

func newTraceAPI(c *framework.Cluster, ns string) *traceAPI {
	return &traceAPI{c: c, ns: ns, slices: map[string]*discoveryv1.EndpointSlice{}}
}

// sliceName is the name of Service svc's EndpointSlice.
func sliceName(svc string) string { return svc + "-trace" }

// createService creates headless Service svc (port http) and its EndpointSlice listing pods. The
// Service is headless: the test cluster's service range holds 254 ClusterIPs, and routers send
// traffic to the endpoints.
func (a *traceAPI) createService(ctx context.Context, svc string, pods []*framework.Backend) error {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svc, Namespace: a.ns},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{
			Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http"),
		}}},
	}
	if _, err := a.c.Kube.CoreV1().Services(a.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s/%s: %w", a.ns, svc, err)
	}
	a.writes.Add(1)
	created, err := a.c.Kube.DiscoveryV1().EndpointSlices(a.ns).Create(ctx, a.slice(svc, pods), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create endpointslice of %s/%s: %w", a.ns, svc, err)
	}
	a.writes.Add(1)
	a.mu.Lock()
	a.slices[svc] = created
	a.mu.Unlock()
	return nil
}

// setEndpoints replaces the endpoints of Service svc (created by createService) with pods.
func (a *traceAPI) setEndpoints(ctx context.Context, svc string, pods []*framework.Backend) error {
	a.mu.Lock()
	old := a.slices[svc]
	a.mu.Unlock()
	if old == nil {
		return fmt.Errorf("endpoints of %s/%s: no EndpointSlice written yet", a.ns, svc)
	}
	next := a.slice(svc, pods)
	next.ResourceVersion = old.ResourceVersion
	updated, err := a.c.Kube.DiscoveryV1().EndpointSlices(a.ns).Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update endpointslice of %s/%s: %w", a.ns, svc, err)
	}
	a.writes.Add(1)
	a.mu.Lock()
	a.slices[svc] = updated
	a.mu.Unlock()
	return nil
}

// slice returns Service svc's EndpointSlice listing pods, ready, on port http (BackendPort).
func (a *traceAPI) slice(svc string, pods []*framework.Backend) *discoveryv1.EndpointSlice {
	port, proto, ready, portName := int32(framework.BackendPort), corev1.ProtocolTCP, true, "http"
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: sliceName(svc), Namespace: a.ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	for _, p := range pods {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.IP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: a.ns, Name: p.Name},
		})
	}
	return s
}

// deleteService deletes Service svc and its EndpointSlice.
func (a *traceAPI) deleteService(ctx context.Context, svc string) error {
	if err := a.c.Kube.CoreV1().Services(a.ns).Delete(ctx, svc, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete service %s/%s: %w", a.ns, svc, err)
	}
	a.writes.Add(1)
	if err := a.c.Kube.DiscoveryV1().EndpointSlices(a.ns).Delete(ctx, sliceName(svc), metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete endpointslice of %s/%s: %w", a.ns, svc, err)
	}
	a.writes.Add(1)
	a.mu.Lock()
	delete(a.slices, svc)
	a.mu.Unlock()
	return nil
}

// createRoute creates Route name for host to Service svc (target port http); tls nil makes it plain
// HTTP.
func (a *traceAPI) createRoute(ctx context.Context, name, host, svc string, tls *routev1.TLSConfig) error {
	r := &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.ns},
		Spec: routev1.RouteSpec{
			Host: host,
			To:   routev1.RouteTargetReference{Kind: "Service", Name: svc},
			Port: &routev1.RoutePort{TargetPort: intstr.FromString("http")},
			TLS:  tls,
		},
	}
	if _, err := a.c.Routes.RouteV1().Routes(a.ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create route %s/%s: %w", a.ns, name, err)
	}
	a.writes.Add(1)
	return nil
}

// deleteRoute deletes Route name.
func (a *traceAPI) deleteRoute(ctx context.Context, name string) error {
	if err := a.c.Routes.RouteV1().Routes(a.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete route %s/%s: %w", a.ns, name, err)
	}
	a.writes.Add(1)
	return nil
}

// patchRoute applies a JSON merge patch to Route name: unlike an update, it cannot conflict with the
// router's status writes.
func (a *traceAPI) patchRoute(ctx context.Context, name string, patch map[string]any) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("patch route %s/%s: %w", a.ns, name, err)
	}
	if _, err := a.c.Routes.RouteV1().Routes(a.ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch route %s/%s: %w", a.ns, name, err)
	}
	a.writes.Add(1)
	return nil
}

// rotateCertificate replaces the certificate and key of edge Route name.
func (a *traceAPI) rotateCertificate(ctx context.Context, name string, certPEM, keyPEM []byte) error {
	return a.patchRoute(ctx, name, map[string]any{"spec": map[string]any{"tls": map[string]any{
		"certificate": string(certPEM), "key": string(keyPEM)}}})
}

// annotateRoute sets annotation key of Route name to value.
func (a *traceAPI) annotateRoute(ctx context.Context, name, key, value string) error {
	return a.patchRoute(ctx, name, map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
}

// deleteAll deletes every Route, EndpointSlice and Service of the namespace (the test API server
// runs no namespace controller, so deleting the namespace would leave them), with a bounded pool
// of workers, and checks that none is left.
func (a *traceAPI) deleteAll(ctx context.Context) error {
	routes, err := a.c.Routes.RouteV1().Routes(a.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list routes of %s: %w", a.ns, err)
	}
	services, err := a.c.Kube.CoreV1().Services(a.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list services of %s: %w", a.ns, err)
	}
	slices, err := a.c.Kube.DiscoveryV1().EndpointSlices(a.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list endpointslices of %s: %w", a.ns, err)
	}
	var deletes []func(context.Context) error
	for _, r := range routes.Items {
		deletes = append(deletes, func(ctx context.Context) error {
			return a.c.Routes.RouteV1().Routes(a.ns).Delete(ctx, r.Name, metav1.DeleteOptions{})
		})
	}
	for _, s := range services.Items {
		deletes = append(deletes, func(ctx context.Context) error {
			return a.c.Kube.CoreV1().Services(a.ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
		})
	}
	for _, s := range slices.Items {
		deletes = append(deletes, func(ctx context.Context) error {
			return a.c.Kube.DiscoveryV1().EndpointSlices(a.ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
		})
	}
	if err := forEach(ctx, len(deletes), traceWriters, func(ctx context.Context, i int) error {
		if err := deletes[i](ctx); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("clean namespace %s: %w", a.ns, err)
		}
		return nil
	}); err != nil {
		return err
	}
	left, err := a.c.Routes.RouteV1().Routes(a.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list routes of %s: %w", a.ns, err)
	}
	if len(left.Items) > 0 {
		return fmt.Errorf("clean namespace %s: %d Routes left", a.ns, len(left.Items))
	}
	return nil
}
