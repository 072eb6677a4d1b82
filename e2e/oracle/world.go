package oracle

import (
	"fmt"
	"sort"
	"strings"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// Kind is a Route's termination as the walk chooses it.
type Kind string

// Route kinds.
const (
	KindHTTP        Kind = "http"
	KindEdge        Kind = "edge"
	KindReencrypt   Kind = "reencrypt"
	KindPassthrough Kind = "passthrough"
)

// terminated reports whether HAProxy terminates TLS for the kind (edge, reencrypt).
func (k Kind) terminated() bool { return k == KindEdge || k == KindReencrypt }

// tlsBackends reports whether the kind's Services need TLS backends (passthrough, reencrypt).
func (k Kind) tlsBackends() bool { return k == KindPassthrough || k == KindReencrypt }

// Addr is one backend a pod can stand for: a named loopback server. Each Addr is an endpoint of at
// most one Service at a time.
type Addr struct {
	Name string
	IP   string
	Port int
	TLS  bool
}

// Endpoint is one pod of a Service.
type Endpoint struct {
	Pod  string
	Addr Addr
}

// Service is a Service of one Route with its endpoints.
type Service struct {
	Namespace, Name string
	TLS             bool
	Endpoints       []Endpoint
}

// ServiceRef is spec.to or an alternate backend of a Route.
type ServiceRef struct {
	Name   string
	Weight int32
}

// Route is one Route of the world. Host is spec.host as written ("*.d" or "x.d" for a wildcard
// Route, whose effective host is "*.d").
type Route struct {
	Namespace, Name string
	Host            string
	Wildcard        bool
	Path            string
	Kind            Kind
	Insecure        string // "", None, Allow, Redirect
	Services        []ServiceRef
	// CertPEM and KeyPEM are the Route's own certificate (edge, reencrypt); empty serves the default.
	CertPEM, KeyPEM []byte
	Annotations     map[string]string
	// RequestHeaders and ResponseHeaders are the Route's header actions (spec.httpHeaders.actions).
	RequestHeaders, ResponseHeaders []HeaderAct
	// Seq orders Routes by creation (oldest first) and makes timestamps and UIDs.
	Seq int
}

// Key returns "<ns>/<name>", the Route identity used throughout the oracle.
func (r *Route) Key() string { return r.Namespace + "/" + r.Name }

// effectiveHost returns the host Translate serves: the host, or "*.<domain>" for a wildcard Route.
func (r *Route) effectiveHost() string {
	if !r.Wildcard {
		return r.Host
	}
	if strings.HasPrefix(r.Host, "*.") {
		return r.Host
	}
	_, domain, _ := strings.Cut(r.Host, ".")
	return "*." + domain
}

// World is the input of one router as the walk evolves it: Routes in creation order, each with
// Services of its own, each Service with endpoints of its own, and the backends still free.
type World struct {
	Routes   []*Route
	Services map[string]*Service // by "<ns>/<name>"
	free     map[bool][]Addr     // by TLS: unused backends, sorted by name
	// DestinationCAPEM verifies reencrypt backends (spec.tls.destinationCACertificate).
	DestinationCAPEM string
	// Listener are the router's own TLS files the input carries (mapping.Input.Listener).
	Listener model.ListenerFiles
	seq      int
}

// epoch is the creation time of the oldest object; each later object is a second younger.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// NewWorld returns an empty world over the given backends.
func NewWorld(addrs []Addr, destinationCAPEM string) *World {
	w := &World{Services: map[string]*Service{}, free: map[bool][]Addr{}, DestinationCAPEM: destinationCAPEM}
	for _, a := range addrs {
		w.free[a.TLS] = append(w.free[a.TLS], a)
	}
	for k := range w.free {
		sortAddrs(w.free[k])
	}
	return w
}

func sortAddrs(a []Addr) { sort.Slice(a, func(i, j int) bool { return a[i].Name < a[j].Name }) }

// next returns a new sequence number (creation order, unique names).
func (w *World) next() int {
	w.seq++
	return w.seq
}

// Free returns how many backends of the kind (TLS or not) are unused.
func (w *World) Free(tls bool) int { return len(w.free[tls]) }

// take removes the i-th free backend of the kind and returns it.
func (w *World) take(tls bool, i int) Addr {
	a := w.free[tls][i]
	w.free[tls] = append(w.free[tls][:i:i], w.free[tls][i+1:]...)
	return a
}

// release returns a backend to the free list.
func (w *World) release(a Addr) {
	w.free[a.TLS] = append(w.free[a.TLS], a)
	sortAddrs(w.free[a.TLS])
}

// Route returns the Route with the key, or nil.
func (w *World) Route(key string) *Route {
	for _, r := range w.Routes {
		if r.Key() == key {
			return r
		}
	}
	return nil
}

// service returns the Service ns/name, or nil.
func (w *World) service(ns, name string) *Service { return w.Services[ns+"/"+name] }

// Owners maps every backend in use (Addr.Name) to the key of the Route whose Service it serves.
func (w *World) Owners() map[string]string {
	owners := map[string]string{}
	for _, r := range w.Routes {
		for _, ref := range r.Services {
			if s := w.service(r.Namespace, ref.Name); s != nil {
				for _, e := range s.Endpoints {
					owners[e.Addr.Name] = r.Key()
				}
			}
		}
	}
	return owners
}

// EndpointNames returns the backend names of every endpoint of the Route's Services.
func (w *World) EndpointNames(key string) map[string]bool {
	out := map[string]bool{}
	r := w.Route(key)
	if r == nil {
		return out
	}
	for _, ref := range r.Services {
		if s := w.service(r.Namespace, ref.Name); s != nil {
			for _, e := range s.Endpoints {
				out[e.Addr.Name] = true
			}
		}
	}
	return out
}

// Check verifies the world's invariants: unique Routes and Services, every Service owned by exactly
// one Route, every backend used at most once and never while free, endpoints of the right kind.
func (w *World) Check(maxRoutes, maxEndpoints int) error {
	if len(w.Routes) > maxRoutes {
		return fmt.Errorf("%d routes, more than %d", len(w.Routes), maxRoutes)
	}
	used := map[string]string{}
	for _, list := range w.free {
		for _, a := range list {
			used[a.Name] = "free"
		}
	}
	owner := map[string]string{}
	routes := map[string]bool{}
	for i, r := range w.Routes {
		if routes[r.Key()] {
			return fmt.Errorf("route %s twice", r.Key())
		}
		routes[r.Key()] = true
		if i > 0 && w.Routes[i-1].Seq >= r.Seq {
			return fmt.Errorf("routes not in creation order at %s", r.Key())
		}
		if len(r.Services) == 0 || len(r.Services) > 4 {
			return fmt.Errorf("route %s has %d services", r.Key(), len(r.Services))
		}
		if r.Kind == KindPassthrough && r.Path != "" {
			return fmt.Errorf("passthrough route %s has path %q", r.Key(), r.Path)
		}
		for _, ref := range r.Services {
			key := r.Namespace + "/" + ref.Name
			s := w.Services[key]
			if s == nil {
				return fmt.Errorf("route %s: service %s missing", r.Key(), key)
			}
			if o, dup := owner[key]; dup {
				return fmt.Errorf("service %s used by %s and %s", key, o, r.Key())
			}
			owner[key] = r.Key()
			if s.TLS != r.Kind.tlsBackends() {
				return fmt.Errorf("route %s (%s): service %s has TLS=%v", r.Key(), r.Kind, key, s.TLS)
			}
			if len(s.Endpoints) < 1 || len(s.Endpoints) > maxEndpoints {
				return fmt.Errorf("service %s has %d endpoints, want 1-%d", key, len(s.Endpoints), maxEndpoints)
			}
			for _, e := range s.Endpoints {
				if u, dup := used[e.Addr.Name]; dup {
					return fmt.Errorf("backend %s of service %s is also %s", e.Addr.Name, key, u)
				}
				used[e.Addr.Name] = "endpoint of " + key
				if e.Addr.TLS != s.TLS {
					return fmt.Errorf("service %s: backend %s has TLS=%v", key, e.Addr.Name, e.Addr.TLS)
				}
			}
		}
	}
	for key := range w.Services {
		if _, ok := owner[key]; !ok {
			return fmt.Errorf("service %s belongs to no route", key)
		}
	}
	return nil
}

// Input builds the Kubernetes objects of the world: Routes (creation times in creation order),
// Namespaces, Services with one named port, and one EndpointSlice per endpoint (every backend
// listens on its own port).
func (w *World) Input() mapping.Input {
	in := mapping.Input{Listener: w.Listener}
	namespaces := map[string]bool{}
	for _, r := range w.Routes {
		namespaces[r.Namespace] = true
		in.Routes = append(in.Routes, w.routeObject(r))
	}
	for _, ns := range sortedKeys(namespaces) {
		in.Namespaces = append(in.Namespaces, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns},
		})
	}
	for _, key := range sortedKeys(w.Services) {
		s := w.Services[key]
		in.Services = append(in.Services, &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
				Name: portName, Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromString(portName),
			}}},
		})
		for _, e := range s.Endpoints {
			in.EndpointSlices = append(in.EndpointSlices, endpointSlice(s, e))
		}
	}
	return in
}

// portName is the one port name of every Service, EndpointSlice and Route.
const portName = "http"

func (w *World) routeObject(r *Route) *routev1.Route {
	ts := metav1.NewTime(epoch.Add(time.Duration(r.Seq) * time.Second))
	obj := &routev1.Route{
		TypeMeta: metav1.TypeMeta{APIVersion: "route.openshift.io/v1", Kind: "Route"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         r.Namespace,
			Name:              r.Name,
			UID:               types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", r.Seq)),
			CreationTimestamp: ts,
		},
		Spec: routev1.RouteSpec{
			Host: r.Host,
			Path: r.Path,
			Port: &routev1.RoutePort{TargetPort: intstr.FromString(portName)},
		},
	}
	if len(r.Annotations) > 0 {
		obj.Annotations = map[string]string{}
		for k, v := range r.Annotations {
			obj.Annotations[k] = v
		}
	}
	if r.Wildcard {
		obj.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain
	}
	obj.Spec.HTTPHeaders = r.headerActions()
	for i, ref := range r.Services {
		weight := ref.Weight
		target := routev1.RouteTargetReference{Kind: "Service", Name: ref.Name, Weight: &weight}
		if i == 0 {
			obj.Spec.To = target
		} else {
			obj.Spec.AlternateBackends = append(obj.Spec.AlternateBackends, target)
		}
	}
	switch r.Kind {
	case KindEdge, KindReencrypt, KindPassthrough:
		obj.Spec.TLS = &routev1.TLSConfig{
			Termination:                   map[Kind]routev1.TLSTerminationType{KindEdge: routev1.TLSTerminationEdge, KindReencrypt: routev1.TLSTerminationReencrypt, KindPassthrough: routev1.TLSTerminationPassthrough}[r.Kind],
			InsecureEdgeTerminationPolicy: routev1.InsecureEdgeTerminationPolicyType(r.Insecure),
			Certificate:                   string(r.CertPEM),
			Key:                           string(r.KeyPEM),
		}
		if r.Kind == KindReencrypt {
			obj.Spec.TLS.DestinationCACertificate = w.DestinationCAPEM
		}
	}
	return obj
}

func endpointSlice(s *Service, e Endpoint) *discoveryv1.EndpointSlice {
	ready := true
	port := int32(e.Addr.Port)
	name, proto := portName, corev1.ProtocolTCP
	family := discoveryv1.AddressTypeIPv4
	if strings.Contains(e.Addr.IP, ":") {
		family = discoveryv1.AddressTypeIPv6
	}
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace,
			Name:      e.Pod,
			Labels:    map[string]string{discoveryv1.LabelServiceName: s.Name},
		},
		AddressType: family,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{e.Addr.IP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: s.Namespace, Name: e.Pod},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}},
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
