package testbed

import (
	"bytes"
	"fmt"
	"net/netip"
	"strconv"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/routetest"
)

// PortName is the name of the one port of every Service and EndpointSlice the builder makes; Routes
// select it by name (spec.port.targetPort).
const PortName = "http"

// servicePort is the Service's own port number (the endpoints' ports differ per backend).
const servicePort = 8080

// epochUnix (2024-01-01T00:00:00Z) is the creation time of the first object; later objects are a
// second younger each, so the order of Route calls is the "oldest wins" order.
const epochUnix = 1704067200

// Manifests builds Routes, Services, EndpointSlices and Namespaces for a test. Routes get creation
// times in call order (the first Route is the oldest). Use Input to decode them the way the manifest
// folder is read, YAML for the text, Objects for the typed objects without a decode round trip.
type Manifests struct {
	routes     []*routev1.Route
	services   []*corev1.Service
	slices     []*discoveryv1.EndpointSlice
	namespaces []*corev1.Namespace
	seen       map[string]bool // namespaces already added
	seq        int
}

// RouteOption changes a Route built by Manifests.Route.
type RouteOption func(*routev1.Route)

// Route adds a Route ns/name for host and path (either may be "") to Service svc, with options.
func (m *Manifests) Route(ns, name, host, path, svc string, opts ...RouteOption) *Manifests {
	m.namespace(ns)
	r := &routev1.Route{
		TypeMeta:   metav1.TypeMeta{APIVersion: "route.openshift.io/v1", Kind: "Route"},
		ObjectMeta: m.meta(ns, name),
		Spec: routev1.RouteSpec{
			Host: host,
			Path: path,
			To:   routev1.RouteTargetReference{Kind: "Service", Name: svc},
			Port: &routev1.RoutePort{TargetPort: intstr.FromString(PortName)},
		},
	}
	for _, o := range opts {
		o(r)
	}
	m.routes = append(m.routes, r)
	return m
}

// Weight sets the weight of the Route's main Service.
func Weight(w int32) RouteOption {
	return func(r *routev1.Route) { r.Spec.To.Weight = &w }
}

// Alternate adds an alternate backend Service with a weight.
func Alternate(svc string, w int32) RouteOption {
	return func(r *routev1.Route) {
		r.Spec.AlternateBackends = append(r.Spec.AlternateBackends,
			routev1.RouteTargetReference{Kind: "Service", Name: svc, Weight: &w})
	}
}

// Edge terminates TLS at HAProxy with the given certificate and key (nil: the default certificate).
func Edge(certPEM, keyPEM []byte) RouteOption {
	return func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{
			Termination: routev1.TLSTerminationEdge,
			Certificate: string(certPEM),
			Key:         string(keyPEM),
		}
	}
}

// Reencrypt terminates TLS at HAProxy with certPEM/keyPEM (nil: the default certificate) and opens TLS
// to the backend, verified against destCAPEM.
func Reencrypt(certPEM, keyPEM, destCAPEM []byte) RouteOption {
	return func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{
			Termination:              routev1.TLSTerminationReencrypt,
			Certificate:              string(certPEM),
			Key:                      string(keyPEM),
			DestinationCACertificate: string(destCAPEM),
		}
	}
}

// Passthrough hands the TLS connection to the backend, selected by SNI.
func Passthrough() RouteOption {
	return func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationPassthrough}
	}
}

// Insecure sets spec.tls.insecureEdgeTerminationPolicy (None, Allow or Redirect); use after the TLS
// option.
func Insecure(policy string) RouteOption {
	return func(r *routev1.Route) {
		if r.Spec.TLS == nil {
			r.Spec.TLS = &routev1.TLSConfig{}
		}
		r.Spec.TLS.InsecureEdgeTerminationPolicy = routev1.InsecureEdgeTerminationPolicyType(policy)
	}
}

// Wildcard sets wildcardPolicy Subdomain.
func Wildcard() RouteOption { return RouteOption(routetest.Wildcard()) }

// Annotate sets an annotation.
func Annotate(key, value string) RouteOption { return RouteOption(routetest.Annotation(key, value)) }

// Service adds Service ns/name with one named port and, per backend, an EndpointSlice with one ready
// endpoint (backends listen on different ports, and a slice has one port list). Without backends the
// Service has no endpoints.
func (m *Manifests) Service(ns, name string, backends ...*testkit.Backend) *Manifests {
	eps := make([]netip.AddrPort, len(backends))
	for i, b := range backends {
		eps[i] = b.AddrPort()
	}
	return m.ServiceAt(ns, name, eps...)
}

// ServiceAt is Service with endpoint addresses instead of running backends.
func (m *Manifests) ServiceAt(ns, name string, endpoints ...netip.AddrPort) *Manifests {
	m.namespace(ns)
	m.services = append(m.services, &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: m.meta(ns, name),
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{
				Name:       PortName,
				Protocol:   corev1.ProtocolTCP,
				Port:       servicePort,
				TargetPort: intstr.FromString(PortName),
			}},
		},
	})
	for i, ep := range endpoints {
		family := discoveryv1.AddressTypeIPv4
		if ep.Addr().Is6() {
			family = discoveryv1.AddressTypeIPv6
		}
		pod := name + "-" + strconv.Itoa(i)
		meta := m.meta(ns, pod)
		meta.Labels = map[string]string{discoveryv1.LabelServiceName: name}
		ready := true
		m.slices = append(m.slices, &discoveryv1.EndpointSlice{
			TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			ObjectMeta:  meta,
			AddressType: family,
			Endpoints: []discoveryv1.Endpoint{{
				Addresses:  []string{ep.Addr().String()},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod},
			}},
			Ports: []discoveryv1.EndpointPort{{
				Name:     ptr(PortName),
				Protocol: ptr(corev1.ProtocolTCP),
				Port:     ptr(int32(ep.Port())),
			}},
		})
	}
	return m
}

func (m *Manifests) namespace(ns string) {
	if m.seen == nil {
		m.seen = map[string]bool{}
	}
	if m.seen[ns] {
		return
	}
	m.seen[ns] = true
	m.namespaces = append(m.namespaces, &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: m.meta("", ns),
	})
}

// meta returns object metadata with a creation time and UID that grow with every object.
func (m *Manifests) meta(ns, name string) metav1.ObjectMeta {
	m.seq++
	return metav1.ObjectMeta{
		Namespace:         ns,
		Name:              name,
		UID:               types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", m.seq)),
		CreationTimestamp: metav1.NewTime(time.Unix(epochUnix+int64(m.seq), 0).UTC()),
	}
}

// Objects returns the typed objects as a mapping.Input (shared, not copied).
func (m *Manifests) Objects() mapping.Input {
	return mapping.Input{
		Routes:         m.routes,
		Services:       m.services,
		EndpointSlices: m.slices,
		Namespaces:     m.namespaces,
	}
}

// YAML returns every object as a multi-document YAML file: namespaces, services, endpoint slices,
// routes, each group in call order.
func (m *Manifests) YAML() ([]byte, error) {
	var objs []any
	for _, o := range m.namespaces {
		objs = append(objs, o)
	}
	for _, o := range m.services {
		objs = append(objs, o)
	}
	for _, o := range m.slices {
		objs = append(objs, o)
	}
	for _, o := range m.routes {
		objs = append(objs, o)
	}
	return YAMLDocuments(objs)
}

// YAMLDocuments writes objs as a multi-document YAML file, in order, as a manifest folder is read.
func YAMLDocuments(objs []any) ([]byte, error) {
	var buf bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("manifests: marshal %T: %w", o, err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// Input renders the objects to YAML and decodes them with mapping.DecodeManifests, as the manifest
// folder mode reads them. The YAML is logged when the test fails.
func (m *Manifests) Input(t testing.TB) mapping.Input {
	t.Helper()
	data, err := m.YAML()
	if err != nil {
		t.Fatalf("testbed: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manifests:\n%s", data)
		}
	})
	in, err := mapping.DecodeManifests("testbed.yaml", data)
	if err != nil {
		t.Fatalf("testbed: decode manifests: %v\n%s", err, data)
	}
	return in
}

func ptr[T any](v T) *T { return &v }
