package mapping

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/mapping/routetest"
)

// A random universe for the Translator's sequence tests: a few namespaces, Services, EndpointSlices,
// Secrets and Routes whose values are drawn from small pools, so that hosts conflict, certificates
// overlap, Routes get rejected and duplicated, and lookups miss. Each step replaces some objects by
// modified copies (new pointers), adds and removes some, and sometimes reorders a list or adds nil
// entries and duplicates.

// universePEM is the certificate material the Routes and Secrets draw from.
type universePEM struct {
	cert, key, other, otherKey, ca string
}

// universe is the current snapshot and the randomness that changes it.
type universe struct {
	rng  *rand.Rand
	seed uint64
	pem  universePEM
	in   Input
	next int // counter for fresh UIDs and ages
}

var (
	genNamespaces = []string{"ns-a", "ns-b", "ns-c"}
	genServices   = []string{"svc-0", "svc-1", "svc-2", "svc-3"}
	genHosts      = []string{"a.example.com", "b.example.com", "x.apps.example.com", "y.apps.example.com", "*.apps.example.com",
		"", "Bad_Host", "c.other.org", "apps.example.com"}
	genPaths     = []string{"", "", "/", "/x", "/x/", "/y", "bad path"}
	genAddresses = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6", "127.0.0.1", "169.254.1.1",
		"fd00::1", "not-an-ip", "10.0.0.1"}
	genAnnotations = [][2]string{
		{AnnotationBalance, "leastconn"}, {AnnotationBalance, "bogus"}, {AnnotationTimeout, "5s"}, {AnnotationTimeout, "0"},
		{AnnotationTimeoutTunnel, "99999999999d"}, {AnnotationHealthCheckInterval, "1us"}, {AnnotationIPAllowlist, "10.0.0.0/8 192.168.1.1"},
		{AnnotationIPAllowlist, "nope"}, {AnnotationRateLimit, "true"}, {AnnotationRateLimitConcurrent, "10"},
		{AnnotationRateLimitHTTP, "5000000"}, {AnnotationDisableCookies, "true"}, {AnnotationCookieName, "sticky"},
		{AnnotationCookieSameSite, "None"}, {AnnotationHSTS, "max-age=31536000;includeSubDomains"}, {AnnotationHSTS, "max-age=x"},
		{AnnotationForwardedHeaders, "never"}, {AnnotationForwardedHeaders, "replace"}, {AnnotationRewriteTarget, "/"},
		{AnnotationRewriteTarget, "no slash"}, {AnnotationPodConcurrentConns, "3"},
	}
)

func newUniverse(seed uint64, pems universePEM) *universe {
	u := &universe{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed: seed, pem: pems}
	for _, ns := range genNamespaces {
		u.in.Namespaces = append(u.in.Namespaces, u.namespace(ns))
		for _, svc := range genServices {
			if u.rng.IntN(5) > 0 {
				u.in.Services = append(u.in.Services, u.service(ns, svc))
			}
			for i := range u.rng.IntN(3) {
				u.in.EndpointSlices = append(u.in.EndpointSlices, u.slice(ns, fmt.Sprintf("%s-%d", svc, i), svc))
			}
		}
		for _, name := range []string{"tls-example", "tls-other", "opaque"} {
			u.in.Secrets = append(u.in.Secrets, u.secret(ns, name))
		}
	}
	for range 30 {
		u.in.Routes = append(u.in.Routes, u.route())
	}
	// Two Routes whose "ns/name" is the same string (both invalid).
	for _, nn := range [][2]string{{"ns-a/x", "y"}, {"ns-a", "x/y"}} {
		u.in.Routes = append(u.in.Routes, routetest.Route(nn[0], nn[1], "a.example.com", u.rng.IntN(30), routetest.Label("shard", "x")))
	}
	// Two old Routes with certificates on one host: the second one's is not served.
	for i, path := range []string{"", "/p"} {
		r := routetest.Route("ns-a", fmt.Sprintf("cert-%d", i), "secure.example.com", 0, routetest.Path(path), routetest.To("svc-0", nil),
			routetest.Label("shard", "x"), routetest.TLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect),
			routetest.Cert(pems.cert, pems.key))
		u.in.Routes = append(u.in.Routes, r)
	}
	return u
}

func (u *universe) pick(pool []string) string { return pool[u.rng.IntN(len(pool))] }

func (u *universe) fresh() int {
	u.next++
	return u.next
}

func (u *universe) namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": u.pick([]string{"a", "b"})}}}
}

func (u *universe) service(ns, name string) *corev1.Service {
	s := routetest.Service(ns, name)
	if u.rng.IntN(3) == 0 {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromString("tls")})
	}
	return s
}

func (u *universe) slice(ns, name, svc string) *discoveryv1.EndpointSlice {
	var addrs []string
	for range 1 + u.rng.IntN(3) {
		addrs = append(addrs, u.pick(genAddresses))
	}
	s := routetest.Slice(ns, name, svc, addrs...)
	if u.rng.IntN(3) == 0 {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: routetest.Ptr("tls"), Port: routetest.Ptr(int32(8443))})
	}
	if u.rng.IntN(6) == 0 {
		s.AddressType = discoveryv1.AddressTypeIPv6
	}
	if u.rng.IntN(2) == 0 {
		s.Labels[discoveryv1.LabelManagedBy] = endpointSliceController
	}
	for i := range s.Endpoints {
		switch u.rng.IntN(6) {
		case 0:
			s.Endpoints[i].Conditions.Ready = routetest.Ptr(false)
		case 1:
			s.Endpoints[i].Conditions.Terminating = routetest.Ptr(true)
		case 2:
			s.Endpoints[i].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("pod-%d", i), Namespace: u.pick(genNamespaces)}
		}
	}
	return s
}

func (u *universe) secret(ns, name string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS}
	switch name {
	case "tls-example":
		s.Data = map[string][]byte{corev1.TLSCertKey: []byte(u.pem.cert), corev1.TLSPrivateKeyKey: []byte(u.pem.key)}
	case "tls-other":
		s.Data = map[string][]byte{corev1.TLSCertKey: []byte(u.pem.other), corev1.TLSPrivateKeyKey: []byte(u.pem.otherKey)}
		if u.rng.IntN(3) == 0 {
			delete(s.Data, corev1.TLSPrivateKeyKey)
		}
	default:
		s.Type = corev1.SecretTypeOpaque
	}
	return s
}

// route returns a new Route: mostly a fresh ns/name, sometimes one already used (a duplicate). Most
// are valid; tweaks make some invalid.
func (u *universe) route() *routev1.Route {
	n := u.fresh()
	ns, name := u.pick(genNamespaces), fmt.Sprintf("r%d", u.rng.IntN(60))
	r := routetest.Route(ns, name, u.pick(genHosts[:4]), u.rng.IntN(30))
	if u.rng.IntN(8) == 0 {
		r.Spec.Host, r.Spec.WildcardPolicy = u.pick([]string{"*.apps.example.com", "z.apps.example.com"}), routev1.WildcardPolicySubdomain
	}
	r.UID = types.UID(fmt.Sprintf("uid-%d", n))
	if u.rng.IntN(4) > 0 {
		routetest.Label("shard", "x")(r)
	}
	if u.rng.IntN(2) == 0 {
		r.Spec.Path = u.pick(genPaths[:6])
	}
	if u.rng.IntN(2) == 0 {
		u.tweakTLS(r)
	}
	if u.rng.IntN(2) == 0 {
		a := genAnnotations[u.rng.IntN(len(genAnnotations))]
		routetest.Annotation(a[0], a[1])(r)
	}
	u.tweakServices(r)
	for range u.rng.IntN(3) {
		u.tweak(r)
	}
	u.headers(r, n)
	return r
}

// tweakServices draws spec.to and the alternate backends.
func (u *universe) tweakServices(r *routev1.Route) {
	weight := func() *int32 {
		switch u.rng.IntN(12) {
		case 0:
			return routetest.Ptr(int32(0))
		case 1, 2, 3:
			return routetest.Ptr(int32(u.rng.IntN(257)))
		case 4:
			return routetest.Ptr(int32(-1))
		}
		return nil
	}
	services := slices.Clone(genServices)
	u.rng.Shuffle(len(services), func(i, j int) { services[i], services[j] = services[j], services[i] })
	if u.rng.IntN(10) == 0 {
		services[1] = services[0] // listed twice: invalid
	}
	r.Spec.To = routev1.RouteTargetReference{Kind: "Service", Name: services[0], Weight: weight()}
	r.Spec.AlternateBackends = nil
	for i := range u.rng.IntN(3) {
		r.Spec.AlternateBackends = append(r.Spec.AlternateBackends, routev1.RouteTargetReference{Kind: "Service", Name: services[i+1], Weight: weight()})
	}
}

// tweak changes one aspect of a Route.
func (u *universe) tweak(r *routev1.Route) {
	switch u.rng.IntN(11) {
	case 0:
		r.Spec.Host = u.pick(genHosts)
	case 1:
		r.Spec.Path = u.pick(genPaths)
	case 2:
		u.tweakTLS(r)
	case 3:
		u.tweakServices(r)
	case 4, 5:
		a := genAnnotations[u.rng.IntN(len(genAnnotations))]
		routetest.Annotation(a[0], a[1])(r)
	case 6:
		r.Annotations = nil
	case 7:
		r.Spec.WildcardPolicy = routev1.WildcardPolicyType(u.pick([]string{"", "None", "Subdomain", "Subdomain", "Bogus"}))
	case 8:
		switch u.rng.IntN(4) {
		case 0:
			r.Spec.Port = nil
		case 1:
			routetest.TargetPort(intstr.FromInt32(8080))(r)
		case 2:
			routetest.TargetPort(intstr.FromString(u.pick([]string{"http", "tls", "8443", "bad;port"})))(r)
		default:
			routetest.TargetPort(intstr.FromInt32(443))(r)
		}
	case 9:
		routetest.Label("shard", u.pick([]string{"x", "y"}))(r)
	default:
		r.CreationTimestamp = metav1.NewTime(routetest.Epoch.Add(time.Duration(u.rng.IntN(30)) * time.Second))
	}
}

// headers draws spec.httpHeaders for the n-th new Route: none, literal and dynamic values (the map
// carries the literal ones), or an action the Route API refuses. It draws from a generator of its own
// (seeded by n), so that the universe's other draws stay as they were before Routes had headers.
func (u *universe) headers(r *routev1.Route, n int) {
	rng := rand.New(rand.NewPCG(u.seed, uint64(n)))
	set, del := routetest.SetHeader, routetest.DeleteHeader
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	switch rng.IntN(8) {
	case 0, 1, 2:
	case 3:
		routetest.Headers([]routev1.RouteHTTPHeader{set("X-A", pick("one", "two words", "100%% 'q'"))}, nil)(r)
	case 4, 5:
		routetest.Headers([]routev1.RouteHTTPHeader{set("X-A", "%[req.hdr(Host),lower]"), del("X-B")},
			[]routev1.RouteHTTPHeader{set("X-Frame-Options", pick("DENY", "SAMEORIGIN")), del("Server")})(r)
	case 6:
		routetest.Headers(nil, []routev1.RouteHTTPHeader{set("X-Up", "%[res.hdr(Server)]")})(r)
	default:
		routetest.Headers(nil, []routev1.RouteHTTPHeader{set(pick("Set-Cookie", "X-Up"), pick("a=b", "%[req.hdr(Host)]"))})(r)
	}
}

// tweakTLS draws spec.tls.
func (u *universe) tweakTLS(r *routev1.Route) {
	term := u.pick([]string{"", "edge", "edge", "edge", "reencrypt", "reencrypt", "passthrough", "bogus"})
	if term == "" {
		r.Spec.TLS = nil
		return
	}
	r.Spec.TLS = &routev1.TLSConfig{
		Termination:                   routev1.TLSTerminationType(term),
		InsecureEdgeTerminationPolicy: routev1.InsecureEdgeTerminationPolicyType(u.pick([]string{"", "None", "Allow", "Redirect"})),
	}
	switch u.rng.IntN(6) {
	case 0, 3:
		r.Spec.TLS.Certificate, r.Spec.TLS.Key = u.pem.cert, u.pem.key
	case 1:
		r.Spec.TLS.Certificate, r.Spec.TLS.Key = u.pem.other, u.pem.otherKey
	case 2:
		r.Spec.TLS.ExternalCertificate = &routev1.LocalObjectReference{Name: u.pick([]string{"tls-example", "tls-other", "opaque", "missing"})}
	}
	if term == "reencrypt" && u.rng.IntN(2) == 0 {
		r.Spec.TLS.DestinationCACertificate = u.pem.ca
	}
}

// step changes the universe as one sync might see it: a few objects replaced by modified or equal
// copies, added or removed; often only EndpointSlices replaced in place; sometimes nothing at all. It
// returns the kinds of change it made (stepKinds), for the tests' statistics.
func (u *universe) step() []string {
	switch u.rng.IntN(8) {
	case 0:
		return []string{"none"} // the same snapshot again
	case 1, 2, 3:
		u.replaceSlices()
		return []string{"slices"}
	}
	var kinds []string
	for range 1 + u.rng.IntN(3) {
		k := u.rng.IntN(20)
		kinds = append(kinds, stepKind(k))
		switch {
		case k < 5:
			u.in.EndpointSlices = changeList(u, u.in.EndpointSlices, func(s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
				if u.rng.IntN(4) == 0 {
					return s.DeepCopy()
				}
				return u.slice(s.Namespace, s.Name, s.Labels[discoveryv1.LabelServiceName])
			}, func() *discoveryv1.EndpointSlice {
				svc := u.pick(genServices)
				return u.slice(u.pick(genNamespaces), fmt.Sprintf("%s-%d", svc, u.rng.IntN(3)), svc)
			})
		case k < 11:
			u.in.Routes = changeList(u, u.in.Routes, func(r *routev1.Route) *routev1.Route {
				c := r.DeepCopy()
				if u.rng.IntN(4) > 0 {
					u.tweak(c)
				}
				return c
			}, u.route)
		case k < 14:
			u.in.Services = changeList(u, u.in.Services, func(s *corev1.Service) *corev1.Service {
				return u.service(s.Namespace, s.Name)
			}, func() *corev1.Service { return u.service(u.pick(genNamespaces), u.pick(genServices)) })
		case k < 16:
			u.in.Secrets = changeList(u, u.in.Secrets, func(s *corev1.Secret) *corev1.Secret {
				return u.secret(s.Namespace, s.Name)
			}, func() *corev1.Secret {
				return u.secret(u.pick(genNamespaces), u.pick([]string{"tls-example", "tls-other", "opaque"}))
			})
		case k < 17:
			u.in.Namespaces = changeList(u, u.in.Namespaces, func(n *corev1.Namespace) *corev1.Namespace {
				return u.namespace(n.Name)
			}, func() *corev1.Namespace { return u.namespace(u.pick(genNamespaces)) })
		case k < 18:
			u.in = u.in.DeepCopy() // every object a new pointer with the same content
		default:
			u.rng.Shuffle(len(u.in.Routes), func(i, j int) { u.in.Routes[i], u.in.Routes[j] = u.in.Routes[j], u.in.Routes[i] })
		}
	}
	return kinds
}

// stepKinds are the kinds of change step makes: the same snapshot, EndpointSlices only replaced in
// place, then those of the general case (see stepKind).
var stepKinds = []string{"none", "slices", "slice list", "routes", "services", "secrets", "namespaces", "deep copy", "shuffle"}

// stepKind names the change of draw k (0-19) in the general case of step.
func stepKind(k int) string {
	switch {
	case k < 5:
		return "slice list"
	case k < 11:
		return "routes"
	case k < 14:
		return "services"
	case k < 16:
		return "secrets"
	case k < 17:
		return "namespaces"
	case k < 18:
		return "deep copy"
	}
	return "shuffle"
}

// replaceSlices replaces EndpointSlices in place by copies (new pointers, same namespace, name and
// Service), of a Route's Service or of any: most often every slice of one Service with valid addresses (so that the backends of
// the Service lose their refused endpoints, if they had any), sometimes one slice unchanged or drawn
// anew (which may refuse endpoints).
func (u *universe) replaceSlices() {
	u.in.EndpointSlices = slices.Clone(u.in.EndpointSlices)
	if len(u.in.EndpointSlices) == 0 {
		return
	}
	i := u.rng.IntN(len(u.in.EndpointSlices))
	if len(u.in.Routes) > 0 && u.rng.IntN(4) > 0 {
		// Most often a slice of the Service of a Route, which is more likely to have a backend.
		if r := u.in.Routes[u.rng.IntN(len(u.in.Routes))]; r != nil {
			if j := slices.IndexFunc(u.in.EndpointSlices, func(s *discoveryv1.EndpointSlice) bool {
				return s != nil && s.Namespace == r.Namespace && s.Labels[discoveryv1.LabelServiceName] == r.Spec.To.Name
			}); j >= 0 {
				i = j
			}
		}
	}
	s := u.in.EndpointSlices[i]
	if s == nil {
		return
	}
	svc := s.Labels[discoveryv1.LabelServiceName]
	switch u.rng.IntN(5) {
	case 0:
		u.in.EndpointSlices[i] = u.slice(s.Namespace, s.Name, svc)
	case 1:
		u.in.EndpointSlices[i] = s.DeepCopy()
	default:
		for j, o := range u.in.EndpointSlices {
			if o != nil && o.Namespace == s.Namespace && o.Labels[discoveryv1.LabelServiceName] == svc {
				u.in.EndpointSlices[j] = u.cleanSlice(o)
			}
		}
	}
}

// cleanSlice returns a copy of s whose endpoints have valid addresses of its family, name no pod of
// another namespace, and are sometimes not ready.
func (u *universe) cleanSlice(s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	s = s.DeepCopy()
	for j := range s.Endpoints {
		ep := &s.Endpoints[j]
		addr := u.pick([]string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"})
		if s.AddressType == discoveryv1.AddressTypeIPv6 {
			addr = u.pick([]string{"fd00::1", "fd00::2", "fd00::3"})
		}
		ep.Addresses = []string{addr}
		if ep.TargetRef != nil {
			ep.TargetRef.Namespace = s.Namespace
		}
		ep.Conditions.Ready = nil
		if u.rng.IntN(4) == 0 {
			ep.Conditions.Ready = routetest.Ptr(false)
		}
	}
	return s
}

// changeList returns a new list with one change: an entry replaced (in place, as a sorted snapshot
// has it), added, removed, duplicated or a nil entry added or removed. The old list is not modified.
func changeList[T comparable](u *universe, list []T, modify func(T) T, create func() T) []T {
	out := slices.Clone(list)
	var zero T
	i := 0
	if len(out) > 0 {
		i = u.rng.IntN(len(out))
	}
	switch k := u.rng.IntN(12); {
	case k < 6 && len(out) > 0:
		if out[i] != zero {
			out[i] = modify(out[i])
		}
	case k < 8:
		out = slices.Insert(out, i, create())
	case k < 10 && len(out) > 0:
		out = slices.Delete(out, i, i+1)
	case k < 11 && len(out) > 0:
		out = slices.Insert(out, u.rng.IntN(len(out)+1), out[i]) // the same pointer twice
	default:
		if j := slices.Index(out, zero); j >= 0 {
			out = slices.Delete(out, j, j+1)
		} else {
			out = slices.Insert(out, i, zero)
		}
	}
	return out
}
