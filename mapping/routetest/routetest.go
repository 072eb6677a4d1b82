// Package routetest builds the Kubernetes and OpenShift objects that the tests of mapping and
// mapping/plan feed to Translate: Routes with options, Services and EndpointSlices. It has no
// dependency on mapping, so mapping's own tests can use it too.
package routetest

import (
	"fmt"
	"strings"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Epoch is the creationTimestamp of a Route of age 0.
var Epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Opt changes a Route.
type Opt func(*routev1.Route)

// Route returns an http Route ns/name for host to Service "web", created age seconds after Epoch,
// with UID "uid-<ns>-<name>".
func Route(ns, name, host string, age int, opts ...Opt) *routev1.Route {
	r := &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ns,
			Name:              name,
			UID:               types.UID(fmt.Sprintf("uid-%s-%s", ns, name)),
			CreationTimestamp: metav1.NewTime(Epoch.Add(time.Duration(age) * time.Second)),
		},
		Spec: routev1.RouteSpec{Host: host, To: routev1.RouteTargetReference{Kind: "Service", Name: "web"}},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Path sets spec.path.
func Path(p string) Opt { return func(r *routev1.Route) { r.Spec.Path = p } }

// To sets spec.to to Service name with weight (nil: unset).
func To(name string, weight *int32) Opt {
	return func(r *routev1.Route) {
		r.Spec.To = routev1.RouteTargetReference{Kind: "Service", Name: name, Weight: weight}
	}
}

// Alternate adds an alternateBackends entry with weight (nil: unset).
func Alternate(name string, weight *int32) Opt {
	return func(r *routev1.Route) {
		r.Spec.AlternateBackends = append(r.Spec.AlternateBackends,
			routev1.RouteTargetReference{Kind: "Service", Name: name, Weight: weight})
	}
}

// TLS sets the termination and insecure policy, keeping the other TLS fields.
func TLS(term routev1.TLSTerminationType, policy routev1.InsecureEdgeTerminationPolicyType) Opt {
	return func(r *routev1.Route) {
		if r.Spec.TLS == nil {
			r.Spec.TLS = &routev1.TLSConfig{}
		}
		r.Spec.TLS.Termination, r.Spec.TLS.InsecureEdgeTerminationPolicy = term, policy
	}
}

// Cert sets the TLS certificate and key (after TLS).
func Cert(cert, key string) Opt {
	return func(r *routev1.Route) { r.Spec.TLS.Certificate, r.Spec.TLS.Key = cert, key }
}

// DestCA sets the destination CA certificate (after TLS).
func DestCA(pem string) Opt {
	return func(r *routev1.Route) { r.Spec.TLS.DestinationCACertificate = pem }
}

// Wildcard sets wildcardPolicy Subdomain.
func Wildcard() Opt {
	return func(r *routev1.Route) { r.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain }
}

// Annotation sets an annotation.
func Annotation(k, v string) Opt {
	return func(r *routev1.Route) {
		if r.Annotations == nil {
			r.Annotations = map[string]string{}
		}
		r.Annotations[k] = v
	}
}

// Label sets a label.
func Label(k, v string) Opt {
	return func(r *routev1.Route) {
		if r.Labels == nil {
			r.Labels = map[string]string{}
		}
		r.Labels[k] = v
	}
}

// TargetPort sets spec.port.targetPort.
func TargetPort(tp intstr.IntOrString) Opt {
	return func(r *routev1.Route) { r.Spec.Port = &routev1.RoutePort{TargetPort: tp} }
}

// SetHeader and DeleteHeader build one header action of spec.httpHeaders.actions.
func SetHeader(name, value string) routev1.RouteHTTPHeader {
	return routev1.RouteHTTPHeader{Name: name, Action: routev1.RouteHTTPHeaderActionUnion{Type: routev1.Set, Set: &routev1.RouteSetHTTPHeader{Value: value}}}
}

// DeleteHeader builds a Delete header action.
func DeleteHeader(name string) routev1.RouteHTTPHeader {
	return routev1.RouteHTTPHeader{Name: name, Action: routev1.RouteHTTPHeaderActionUnion{Type: routev1.Delete}}
}

// Headers sets spec.httpHeaders.actions.
func Headers(request, response []routev1.RouteHTTPHeader) Opt {
	return func(r *routev1.Route) {
		r.Spec.HTTPHeaders = &routev1.RouteHTTPHeaders{Actions: routev1.RouteHTTPHeaderActions{Request: request, Response: response}}
	}
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// Service returns a Service with one port "http" 80 → 8080.
func Service(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		}},
	}
}

// Slice returns an IPv4 EndpointSlice name of Service svc with port "http" 8080 and one ready endpoint
// per address, without pod references.
func Slice(ns, name, svc string, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: Ptr("http"), Port: Ptr(int32(8080))}},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: Ptr(true)}})
	}
	return s
}

// PodSlice is Slice named "<svc>-1" whose endpoints reference pods named after the Service and the
// address ("<svc>-10-0-0-1").
func PodSlice(ns, svc string, addrs ...string) *discoveryv1.EndpointSlice {
	s := Slice(ns, svc+"-1", svc, addrs...)
	for i, a := range addrs {
		s.Endpoints[i].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: svc + "-" + strings.ReplaceAll(a, ".", "-")}
	}
	return s
}
