package oracle

import (
	"fmt"
	"math/rand/v2"
)

// MutationKind names one kind of step of the walk.
type MutationKind string

// Mutation kinds. MutAnnotation is the structural one (a balance or timeout annotation changes a
// backend's options); the others change what the runtime path owns, but some of them can still be
// structural (a second Service changes the default balance to roundrobin, a new Route may find the
// spare pool empty): the plan decides, and the oracle checks that A reloaded exactly then.
const (
	MutScale       MutationKind = "scale"
	MutPodIP       MutationKind = "pod-ip"
	MutWeight      MutationKind = "weight"
	MutAddRoute    MutationKind = "add-route"
	MutDeleteRoute MutationKind = "delete-route"
	MutHost        MutationKind = "host"
	MutPath        MutationKind = "path"
	MutInsecure    MutationKind = "insecure-policy"
	MutAlternate   MutationKind = "alternate-backend"
	MutCert        MutationKind = "cert-rotation"
	MutAnnotation  MutationKind = "annotation"
	// MutForwarded sets, changes or removes a Route's forwarded-headers annotation: a runtime change
	// (a map entry), whose effect the backends report (testkit.ForwardedSummary).
	MutForwarded MutationKind = "forwarded-headers"
	// MutHeaders changes a Route's header actions (headers): mostly a literal value (a map entry),
	// now and then the actions themselves (a reload); the backends report what they received.
	MutHeaders MutationKind = "header-actions"
	// MutCookieName sets, changes or removes a Route's cookie_name annotation: a runtime change (a
	// map entry), which the probes see in the cookies A and B hand out.
	MutCookieName MutationKind = "cookie-name"
	// MutListener rotates the router's own TLS files (WalkOptions.Listener): the default
	// certificate or the client CRLs (runtime), now and then the client CA (a reload).
	MutListener MutationKind = "listener-files"
)

// mutationOrder fixes the order in which weights are read, so a seed always gives the same walk.
var mutationOrder = []MutationKind{
	MutScale, MutPodIP, MutWeight, MutAddRoute, MutDeleteRoute, MutHost, MutPath, MutInsecure,
	MutAlternate, MutCert, MutAnnotation, MutForwarded, MutListener, MutHeaders, MutCookieName,
}

// Weights are the step weights of the equivalence walk (they sum to 100; MutAnnotation, the
// structural kind, has 5).
func Weights() map[MutationKind]int {
	return map[MutationKind]int{
		MutScale: 10, MutPodIP: 8, MutWeight: 8, MutAddRoute: 15, MutDeleteRoute: 10, MutHost: 7,
		MutPath: 7, MutInsecure: 6, MutAlternate: 3, MutCert: 9, MutAnnotation: 5, MutForwarded: 4,
		MutHeaders: 5, MutCookieName: 3,
	}
}

// ChurnWeights are the step weights of the churn test: runtime-only mutations.
func ChurnWeights() map[MutationKind]int {
	return map[MutationKind]int{MutScale: 35, MutPodIP: 20, MutWeight: 15, MutAddRoute: 15, MutDeleteRoute: 15}
}

// Mutation is one step of the walk.
type Mutation struct {
	Kind   MutationKind
	Route  string // the Route concerned ("<ns>/<name>")
	Detail string
}

func (m Mutation) String() string { return fmt.Sprintf("%s %s: %s", m.Kind, m.Route, m.Detail) }

// WalkOptions shape the walk.
type WalkOptions struct {
	Weights      map[MutationKind]int
	Namespaces   []string
	MaxRoutes    int // at most this many Routes at once
	MinRoutes    int // no delete below this many
	MaxEndpoints int // per Service
	// MaxAddedPerKind bounds the Routes per kind that are not stable (0: no bound). Together with
	// SingleService it keeps runtime adds within a spare pool of that size.
	MaxAddedPerKind int
	// SingleService makes added Routes use one Service (so they use the default balance).
	SingleService bool
	// DefaultBalance and DefaultTCPBalance are the router's defaults (to make annotation steps real
	// changes).
	DefaultBalance, DefaultTCPBalance string
	// IssueCert returns a certificate and key for the names, from the router's CA.
	IssueCert func(names ...string) (certPEM, keyPEM []byte)
	// Listener gives the router's own TLS files to rotate among (MutListener); nil: none.
	Listener *ListenerPool
}

// Walker applies seeded random mutations to a World.
type Walker struct {
	World   *World
	opts    WalkOptions
	rng     *rand.Rand
	stable  map[string]bool
	deleted []string // keys of deleted Routes, for re-creating one under the same name
}

// NewWalker returns a walker over w; the same seed and the same world give the same walk.
func NewWalker(seed uint64, w *World, opts WalkOptions) *Walker {
	return &Walker{World: w, opts: opts, rng: rand.New(rand.NewPCG(seed, 0x0a11ce)), stable: map[string]bool{}}
}

// Host pools: exact hosts, exact hosts inside the wildcard domains, wildcard domains. Stable Routes
// of the churn test use "stable-N.apps.test", which no pool produces.
const (
	exactHosts      = 16
	wildcardDomains = 2
	appsDomain      = "apps.test"
)

var pathPool = []string{"", "/", "/api", "/api/", "/api/v2", "/static", "/a/b"}

// RouteSpec describes a Route to add.
type RouteSpec struct {
	Namespace, Name, Host, Path string
	Wildcard                    bool
	Kind                        Kind
	Insecure                    string
	OwnCert                     bool
	Endpoints                   []int // endpoints per Service (spec.to first)
	Stable                      bool
}

// AddRoute adds a Route with Services and endpoints taken from the free backends (it fails when
// too few are free). Stable Routes are never deleted and keep their host and path, and their
// Service weights stay above 0.
func (wk *Walker) AddRoute(spec RouteSpec) (*Route, error) {
	need := 0
	for _, n := range spec.Endpoints {
		need += n
	}
	tls := spec.Kind.tlsBackends()
	if need > wk.World.Free(tls) || len(spec.Endpoints) == 0 {
		return nil, fmt.Errorf("add route %s/%s: %d backends needed, %d free", spec.Namespace, spec.Name, need, wk.World.Free(tls))
	}
	r := &Route{
		Namespace: spec.Namespace, Name: spec.Name, Host: spec.Host, Wildcard: spec.Wildcard,
		Path: spec.Path, Kind: spec.Kind, Insecure: spec.Insecure, Seq: wk.World.next(),
	}
	for i, n := range spec.Endpoints {
		weight := int32(100)
		if i > 0 {
			weight = wk.pick([]int32{100, 50, 10, 1})
		}
		r.Services = append(r.Services, ServiceRef{Name: wk.newService(r, n), Weight: weight})
	}
	if spec.OwnCert && spec.Kind.terminated() {
		r.CertPEM, r.KeyPEM = wk.opts.IssueCert(r.effectiveHost())
	}
	wk.World.Routes = append(wk.World.Routes, r)
	if spec.Stable {
		wk.stable[r.Key()] = true
	}
	return r, nil
}

// newService creates a Service of r with n endpoints and returns its name.
func (wk *Walker) newService(r *Route, n int) string {
	s := &Service{Namespace: r.Namespace, Name: fmt.Sprintf("s%d", wk.World.next()), TLS: r.Kind.tlsBackends()}
	for i := 0; i < n; i++ {
		s.Endpoints = append(s.Endpoints, wk.newEndpoint(s))
	}
	wk.World.Services[s.Namespace+"/"+s.Name] = s
	return s.Name
}

// newEndpoint takes a random free backend for a new pod of s (the caller checks that one is free).
func (wk *Walker) newEndpoint(s *Service) Endpoint {
	a := wk.World.take(s.TLS, wk.rng.IntN(wk.World.Free(s.TLS)))
	return Endpoint{Pod: fmt.Sprintf("%s-%d", s.Name, wk.World.next()), Addr: a}
}

// removeService deletes a Service and frees its backends.
func (wk *Walker) removeService(ns, name string) {
	key := ns + "/" + name
	if s := wk.World.Services[key]; s != nil {
		for _, e := range s.Endpoints {
			wk.World.release(e.Addr)
		}
	}
	delete(wk.World.Services, key)
}

// Stable reports whether the Route is stable.
func (wk *Walker) Stable(key string) bool { return wk.stable[key] }

// Step applies one mutation, chosen by weight among the kinds that apply to the current world.
func (wk *Walker) Step() Mutation {
	weights := map[MutationKind]int{}
	for k, w := range wk.opts.Weights {
		weights[k] = w
	}
	for {
		total := 0
		for _, k := range mutationOrder {
			total += weights[k]
		}
		if total == 0 {
			return Mutation{Kind: "none", Detail: "no mutation applies"}
		}
		n := wk.rng.IntN(total)
		var kind MutationKind
		for _, k := range mutationOrder {
			if n < weights[k] {
				kind = k
				break
			}
			n -= weights[k]
		}
		if m, ok := wk.apply(kind); ok {
			return m
		}
		weights[kind] = 0 // does not apply now; choose among the others
	}
}

func (wk *Walker) apply(kind MutationKind) (Mutation, bool) {
	switch kind {
	case MutScale:
		return wk.scale()
	case MutPodIP:
		return wk.podIP()
	case MutWeight:
		return wk.weight()
	case MutAddRoute:
		return wk.addRandomRoute()
	case MutDeleteRoute:
		return wk.deleteRoute()
	case MutHost:
		return wk.changeHost()
	case MutPath:
		return wk.changePath()
	case MutInsecure:
		return wk.flipInsecure()
	case MutAlternate:
		return wk.alternate()
	case MutCert:
		return wk.rotateCert()
	case MutAnnotation:
		return wk.annotate()
	case MutForwarded:
		return wk.forwarded()
	case MutCookieName:
		return wk.cookieName()
	case MutListener:
		return wk.rotateListener()
	case MutHeaders:
		return wk.headers()
	}
	return Mutation{}, false
}

// pick returns a random element of xs.
func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func (wk *Walker) pick(xs []int32) int32 { return pick(wk.rng, xs) }

// routes returns the Routes that satisfy keep, in creation order.
func (wk *Walker) routes(keep func(*Route) bool) []*Route {
	var out []*Route
	for _, r := range wk.World.Routes {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func (wk *Walker) unstable(r *Route) bool { return !wk.stable[r.Key()] }

// services returns the keys of every Service, sorted.
func (wk *Walker) services() []string { return sortedKeys(wk.World.Services) }

// ownerOf returns the Route of a Service key.
func (wk *Walker) ownerOf(key string) *Route {
	for _, r := range wk.World.Routes {
		for _, ref := range r.Services {
			if r.Namespace+"/"+ref.Name == key {
				return r
			}
		}
	}
	return nil
}
