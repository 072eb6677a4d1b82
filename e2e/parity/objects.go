package parity

import (
	"fmt"
	"net/netip"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/e2e/testbed"
)

// Objects are the Kubernetes objects of a corpus in one run: the same for both routers, the
// endpoints at the run's pod addresses, the certificates the run's.
type Objects struct {
	Namespaces     []*corev1.Namespace
	Secrets        []*corev1.Secret
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	// Routes are in creation order: the first is the oldest.
	Routes []*routev1.Route
	// Granted are the Secrets of Namespace that OpenShift's router service account may read
	// (ExternalCertSecret.Granted).
	Granted []string
}

// defaultWeight is the weight the API server gives a backend without one (the Route CRD's default).
const defaultWeight = 100

// epoch is the creation time of the first object in manifests (the API server sets its own); each
// later object is a second younger, so the corpus order is the "oldest wins" order in both.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Objects builds the corpus's objects with the pods at addrs and the certificates of pki.
func (c *Corpus) Objects(addrs map[string]netip.AddrPort, pki *PKI) (Objects, error) {
	var o Objects
	seq := 0
	meta := func(ns, name string) metav1.ObjectMeta {
		seq++
		return metav1.ObjectMeta{
			Namespace: ns, Name: name,
			UID:               types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", seq)),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(seq) * time.Second)),
		}
	}
	for _, ns := range []string{Namespace, OtherNamespace} {
		o.Namespaces = append(o.Namespaces, &corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: meta("", ns)})
	}
	for _, s := range c.Services() {
		svc, slice, err := serviceObjects(s, addrs, meta)
		if err != nil {
			return Objects{}, err
		}
		o.Services = append(o.Services, svc)
		o.EndpointSlices = append(o.EndpointSlices, slice)
	}
	for _, r := range c.Routes() {
		if r.Secret != nil {
			if r.Secret.Granted {
				if r.Namespace != Namespace {
					return Objects{}, fmt.Errorf("corpus: route %s/%s: a granted Secret must be in namespace %s", r.Namespace, r.Name, Namespace)
				}
				o.Granted = append(o.Granted, r.Secret.Name)
			}
			cert, key := pki.Route(r.Secret.Host)
			o.Secrets = append(o.Secrets, &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: meta(r.Namespace, r.Secret.Name),
				Type:       corev1.SecretTypeTLS,
				Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
			})
		}
		o.Routes = append(o.Routes, routeObject(r, pki, meta(r.Namespace, r.Name)))
	}
	return o, nil
}

// serviceObjects returns the Service and its EndpointSlice (the test plays the endpoint controller:
// every pod ready, its targetRef naming it, which the stock router's endpoint names use).
func serviceObjects(s Service, addrs map[string]netip.AddrPort, meta func(ns, name string) metav1.ObjectMeta) (*corev1.Service, *discoveryv1.EndpointSlice, error) {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(s.Namespace, s.Name),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Name: PortName, Port: ServicePort, Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromString(PortName)}},
		},
	}
	if s.ClusterIP != "" {
		svc.Spec.ClusterIP = s.ClusterIP
	}
	if len(s.Annotations) > 0 {
		svc.Annotations = s.Annotations
	}
	port, proto, name, ready := int32(PodPort), corev1.ProtocolTCP, PortName, true
	sm := meta(s.Namespace, s.Name+"-parity")
	sm.Labels = map[string]string{discoveryv1.LabelServiceName: s.Name}
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  sm,
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
	}
	for _, p := range s.Pods {
		a, ok := addrs[p]
		if !ok {
			return nil, nil, fmt.Errorf("corpus: service %s/%s: no address for pod %s", s.Namespace, s.Name, p)
		}
		if int(a.Port()) != PodPort {
			return nil, nil, fmt.Errorf("corpus: pod %s listens on %s, not on port %d", p, a, PodPort)
		}
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{a.Addr().String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: s.Namespace, Name: p},
		})
	}
	return svc, slice, nil
}

// routeObject returns the Route as the API server stores it: with the defaults it fills in
// (spec.to.kind, weights, wildcardPolicy) written out, so that the replay reads the same Route.
func routeObject(r Route, pki *PKI, meta metav1.ObjectMeta) *routev1.Route {
	if len(r.Annotate) > 0 {
		meta.Annotations = r.Annotate
	}
	rt := &routev1.Route{
		TypeMeta:   metav1.TypeMeta{APIVersion: "route.openshift.io/v1", Kind: "Route"},
		ObjectMeta: meta,
		Spec: routev1.RouteSpec{
			Host: r.Host, Subdomain: r.Subdomain, Path: r.Path,
			To:             target(r.To),
			WildcardPolicy: routev1.WildcardPolicyNone,
		},
	}
	for _, b := range r.Alternates {
		rt.Spec.AlternateBackends = append(rt.Spec.AlternateBackends, target(b))
	}
	switch tp := r.TargetPort; {
	case tp == nil:
		rt.Spec.Port = &routev1.RoutePort{TargetPort: intstr.FromString(PortName)}
	case tp.None:
	case tp.Name != "":
		rt.Spec.Port = &routev1.RoutePort{TargetPort: intstr.FromString(tp.Name)}
	default:
		rt.Spec.Port = &routev1.RoutePort{TargetPort: intstr.FromInt32(tp.Number)}
	}
	if r.Wildcard {
		rt.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain
	}
	if t := r.TLS; t != nil {
		rt.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationType(t.Termination),
			InsecureEdgeTerminationPolicy: routev1.InsecureEdgeTerminationPolicyType(t.Insecure)}
		if t.OwnCert {
			cert, key := pki.Route(r.Host)
			rt.Spec.TLS.Certificate, rt.Spec.TLS.Key = string(cert), string(key)
		}
		if t.CAChain {
			rt.Spec.TLS.CACertificate = string(pki.RouteCA.PEM())
		}
		if t.DestCA {
			rt.Spec.TLS.DestinationCACertificate = string(pki.BackendCA.PEM())
		}
		if t.External != "" {
			rt.Spec.TLS.ExternalCertificate = &routev1.LocalObjectReference{Name: t.External}
		}
	}
	if h := r.Headers; h != nil {
		rt.Spec.HTTPHeaders = &routev1.RouteHTTPHeaders{Actions: routev1.RouteHTTPHeaderActions{
			Request: headerActions(h.Request), Response: headerActions(h.Response)}}
	}
	return rt
}

func target(b Backend) routev1.RouteTargetReference {
	w := int32(defaultWeight)
	if b.Weight != nil {
		w = *b.Weight
	}
	return routev1.RouteTargetReference{Kind: "Service", Name: b.Service, Weight: &w}
}

func headerActions(as []HeaderAction) []routev1.RouteHTTPHeader {
	var out []routev1.RouteHTTPHeader
	for _, a := range as {
		h := routev1.RouteHTTPHeader{Name: a.Name, Action: routev1.RouteHTTPHeaderActionUnion{Type: routev1.Set,
			Set: &routev1.RouteSetHTTPHeader{Value: a.Value}}}
		if a.Delete {
			h.Action = routev1.RouteHTTPHeaderActionUnion{Type: routev1.Delete}
		}
		out = append(out, h)
	}
	return out
}

// YAML writes every object as a multi-document YAML file, the way the manifest folder is read.
func (o Objects) YAML() ([]byte, error) {
	var all []any
	for _, x := range o.Namespaces {
		all = append(all, x)
	}
	for _, x := range o.Secrets {
		all = append(all, x)
	}
	for _, x := range o.Services {
		all = append(all, x)
	}
	for _, x := range o.EndpointSlices {
		all = append(all, x)
	}
	for _, x := range o.Routes {
		all = append(all, x)
	}
	return testbed.YAMLDocuments(all)
}
