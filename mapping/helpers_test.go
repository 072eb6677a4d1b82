package mapping

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/mapping/model"
)

// Builders for the unit tests of this package (the golden tests use YAML cases instead).

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// routeOpt changes a test Route.
type routeOpt func(*routev1.Route)

// newRoute returns an http Route ns/name for host to Service "web", created age seconds after epoch.
func newRoute(ns, name, host string, age int, opts ...routeOpt) *routev1.Route {
	r := &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ns,
			Name:              name,
			UID:               types.UID(fmt.Sprintf("uid-%s-%s", ns, name)),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second)),
		},
		Spec: routev1.RouteSpec{Host: host, To: routev1.RouteTargetReference{Kind: "Service", Name: "web"}},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func withPath(p string) routeOpt { return func(r *routev1.Route) { r.Spec.Path = p } }

func withService(name string, weight *int32) routeOpt {
	return func(r *routev1.Route) {
		r.Spec.To = routev1.RouteTargetReference{Kind: "Service", Name: name, Weight: weight}
	}
}

func withAlternate(name string, weight *int32) routeOpt {
	return func(r *routev1.Route) {
		r.Spec.AlternateBackends = append(r.Spec.AlternateBackends, routev1.RouteTargetReference{Kind: "Service", Name: name, Weight: weight})
	}
}

func withTLS(term routev1.TLSTerminationType, policy routev1.InsecureEdgeTerminationPolicyType) routeOpt {
	return func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: term, InsecureEdgeTerminationPolicy: policy}
	}
}

func withWildcard() routeOpt {
	return func(r *routev1.Route) { r.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain }
}

func withAnnotation(k, v string) routeOpt {
	return func(r *routev1.Route) {
		if r.Annotations == nil {
			r.Annotations = map[string]string{}
		}
		r.Annotations[k] = v
	}
}

func withLabel(k, v string) routeOpt {
	return func(r *routev1.Route) {
		if r.Labels == nil {
			r.Labels = map[string]string{}
		}
		r.Labels[k] = v
	}
}

func withTargetPort(tp intstr.IntOrString) routeOpt {
	return func(r *routev1.Route) { r.Spec.Port = &routev1.RoutePort{TargetPort: tp} }
}

func ptr[T any](v T) *T { return &v }

// newService returns a Service with one port "http" 80 → 8080.
func newService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		}},
	}
}

// newSlice returns an IPv4 EndpointSlice of Service svc with port "http" 8080 and one ready endpoint
// per address.
func newSlice(ns, name, svc string, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080))}},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}})
	}
	return s
}

// testOptions returns the defaults with loopback endpoints allowed.
func testOptions() Options {
	o := DefaultOptions()
	o.AllowLoopbackEndpoints = true
	return o
}

// translate runs Translate and fails the test when the model does not validate.
func translate(t testing.TB, in Input, opts Options) (*model.Config, []Problem) {
	t.Helper()
	cfg, problems := Translate(in, opts)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Translate produced an invalid model: %v", err)
	}
	return cfg, problems
}

// readTestdata returns a file of testdata/certs.
func readCert(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "certs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// problemFor returns the non-warning problem of ns/name, or nil.
func problemFor(ps []Problem, ns, name string) *Problem {
	for i := range ps {
		if ps[i].Namespace == ns && ps[i].Name == name && !ps[i].Warning {
			return &ps[i]
		}
	}
	return nil
}

// mapEntries returns the entries of a map as key → value.
func mapEntries(cfg *model.Config, name string) map[string]string {
	out := map[string]string{}
	if m := cfg.Map(name); m != nil {
		for _, e := range m.Entries {
			out[e.Key] = e.Value
		}
	}
	return out
}
