//go:build e2e

package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"

	"github.com/haroute/haroute/internal/testkit"
)

// CreateService creates Service svc in ns with one port named http (80 → http) and an EndpointSlice
// listing the backends (ready, port BackendPort): the test plays the endpoint controller.
func (c *Cluster) CreateService(t *testing.T, ns, svc string, backends ...*Backend) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svc, Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http"),
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s/%s: %v", ns, svc, err)
	}
	c.SetEndpoints(t, ns, svc, backends...)
}

// SetEndpoints creates or replaces the EndpointSlice "<svc>-e2e" of svc with the backends' addresses.
func (c *Cluster) SetEndpoints(t *testing.T, ns, svc string, backends ...*Backend) {
	t.Helper()
	ctx := context.Background()
	name, port, proto, ready := svc+"-e2e", int32(BackendPort), corev1.ProtocolTCP, true
	portName := "http"
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	for _, b := range backends {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{b.IP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: b.Name},
		})
	}
	slices := c.Kube.DiscoveryV1().EndpointSlices(ns)
	old, err := slices.Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		slice.ResourceVersion = old.ResourceVersion
		_, err = slices.Update(ctx, slice, metav1.UpdateOptions{})
	} else {
		_, err = slices.Create(ctx, slice, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("write endpointslice %s/%s: %v", ns, name, err)
	}
}

// RouteOption changes a Route before it is written.
type RouteOption func(*routev1.Route)

// Path sets spec.path.
func Path(p string) RouteOption { return func(r *routev1.Route) { r.Spec.Path = p } }

// Edge makes the Route edge-terminated with the given certificate, key and insecure policy.
func Edge(certPEM, keyPEM []byte, insecure routev1.InsecureEdgeTerminationPolicyType) RouteOption {
	return func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationEdge,
			Certificate: string(certPEM), Key: string(keyPEM), InsecureEdgeTerminationPolicy: insecure}
	}
}

// Passthrough makes the Route a TLS passthrough Route (HAProxy picks it by SNI).
func Passthrough() RouteOption {
	return func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationPassthrough}
	}
}

// Reencrypt makes the Route re-encrypting: HAProxy serves certPEM/keyPEM and verifies the backend
// against destCA.
func Reencrypt(certPEM, keyPEM, destCA []byte) RouteOption {
	return func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt,
			Certificate: string(certPEM), Key: string(keyPEM), DestinationCACertificate: string(destCA)}
	}
}

// Weight sets the weight of spec.to.
func Weight(w int32) RouteOption { return func(r *routev1.Route) { r.Spec.To.Weight = &w } }

// Alternate adds an alternateBackends entry.
func Alternate(svc string, weight int32) RouteOption {
	return func(r *routev1.Route) {
		r.Spec.AlternateBackends = append(r.Spec.AlternateBackends,
			routev1.RouteTargetReference{Kind: "Service", Name: svc, Weight: &weight})
	}
}

// Wildcard sets wildcardPolicy Subdomain.
func Wildcard() RouteOption {
	return func(r *routev1.Route) { r.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain }
}

// Labels adds labels (key, value, key, value, …).
func Labels(kv ...string) RouteOption {
	return func(r *routev1.Route) { r.Labels = addPairs(r.Labels, kv) }
}

// Annotations adds annotations (key, value, key, value, …).
func Annotations(kv ...string) RouteOption {
	return func(r *routev1.Route) { r.Annotations = addPairs(r.Annotations, kv) }
}

func addPairs(m map[string]string, kv []string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// CreateRoute creates Route name in ns for host to Service svc (target port http), unsecured unless
// an option says otherwise.
func (c *Cluster) CreateRoute(t *testing.T, ns, name, host, svc string, opts ...RouteOption) *routev1.Route {
	t.Helper()
	route := &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: routev1.RouteSpec{
			Host: host,
			To:   routev1.RouteTargetReference{Kind: "Service", Name: svc},
			Port: &routev1.RoutePort{TargetPort: intstr.FromString("http")},
		},
	}
	for _, o := range opts {
		o(route)
	}
	r, err := c.Routes.RouteV1().Routes(ns).Create(context.Background(), route, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create route %s/%s: %v", ns, name, err)
	}
	return r
}

// UpdateRoute applies opts to the current Route ns/name and writes it (retried on conflicts, which the
// router's status updates cause).
func (c *Cluster) UpdateRoute(t *testing.T, ns, name string, opts ...RouteOption) {
	t.Helper()
	routes := c.Routes.RouteV1().Routes(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r, err := routes.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, o := range opts {
			o(r)
		}
		_, err = routes.Update(context.Background(), r, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update route %s/%s: %v", ns, name, err)
	}
}

// DeleteRoute deletes Route ns/name.
func (c *Cluster) DeleteRoute(t *testing.T, ns, name string) {
	t.Helper()
	if err := c.Routes.RouteV1().Routes(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete route %s/%s: %v", ns, name, err)
	}
}

// Admission is a Route's Admitted condition as written by a router.
type Admission struct {
	RouterName, Status, Reason, Message string
}

// WaitAdmitted waits until Route ns/name has an ingress entry whose Admitted condition has status
// ("True" or "False") and, when reason is not empty, that reason; it returns the entry.
func (c *Cluster) WaitAdmitted(t *testing.T, ns, name, status, reason string) Admission {
	t.Helper()
	return c.WaitAdmittedBy(t, ns, name, "", status, reason)
}

// WaitAdmittedBy is WaitAdmitted for the ingress entry of one router (any router when routerName is
// empty).
func (c *Cluster) WaitAdmittedBy(t *testing.T, ns, name, routerName, status, reason string) Admission {
	t.Helper()
	var got Admission
	err := testkit.Eventually(WaitTimeout, waitInterval, func() error {
		var seen []string
		for _, a := range c.Admissions(t, ns, name) {
			if routerName != "" && a.RouterName != routerName {
				continue
			}
			got = a
			if a.Status == status && (reason == "" || a.Reason == reason) {
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s: %s %s %q", a.RouterName, a.Status, a.Reason, a.Message))
		}
		return fmt.Errorf("admitted conditions: [%s]", strings.Join(seen, "; "))
	})
	if err != nil {
		t.Fatalf("route %s/%s: want Admitted=%s %s from router %q: %v", ns, name, status, reason, routerName, err)
	}
	return got
}

// Admissions returns the Admitted condition of every ingress entry of Route ns/name.
func (c *Cluster) Admissions(t *testing.T, ns, name string) []Admission {
	t.Helper()
	r, err := c.Routes.RouteV1().Routes(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get route %s/%s: %v", ns, name, err)
	}
	var out []Admission
	for _, in := range r.Status.Ingress {
		for _, cond := range in.Conditions {
			if cond.Type == routev1.RouteAdmitted {
				out = append(out, Admission{in.RouterName, string(cond.Status), cond.Reason, cond.Message})
			}
		}
	}
	return out
}

// WaitNoEntry waits until Route ns/name has no status.ingress entry from routerName.
func (c *Cluster) WaitNoEntry(t *testing.T, ns, name, routerName string) {
	t.Helper()
	if err := testkit.Eventually(WaitTimeout, waitInterval, func() error {
		for _, a := range c.Admissions(t, ns, name) {
			if a.RouterName == routerName {
				return fmt.Errorf("entry from %s: %+v", routerName, a)
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("route %s/%s: %v", ns, name, err)
	}
}
