package oracle

import (
	"fmt"
	"sort"
	"strings"

	"github.com/haroute/haroute/mapping"
)

// The mutations of the walk. Each returns false when it does not apply to the current world (the
// walk then chooses among the other kinds).

func (wk *Walker) scale() (Mutation, bool) {
	keys := wk.services()
	if len(keys) == 0 {
		return Mutation{}, false
	}
	key := pick(wk.rng, keys)
	s := wk.World.Services[key]
	n := len(s.Endpoints)
	canUp := n < wk.opts.MaxEndpoints && wk.World.Free(s.TLS) > 0
	canDown := n > 1
	if !canUp && !canDown {
		return Mutation{}, false
	}
	up := canUp && (!canDown || wk.rng.IntN(2) == 0)
	k := 1 + wk.rng.IntN(2)
	if up {
		k = min(k, wk.opts.MaxEndpoints-n, wk.World.Free(s.TLS))
		for i := 0; i < k; i++ {
			s.Endpoints = append(s.Endpoints, wk.newEndpoint(s))
		}
	} else {
		k = min(k, n-1)
		for i := 0; i < k; i++ {
			j := wk.rng.IntN(len(s.Endpoints))
			wk.World.release(s.Endpoints[j].Addr)
			s.Endpoints = append(s.Endpoints[:j:j], s.Endpoints[j+1:]...)
		}
	}
	return Mutation{Kind: MutScale, Route: wk.ownerOf(key).Key(), Detail: fmt.Sprintf("service %s: %d → %d endpoints", key, n, len(s.Endpoints))}, true
}

func (wk *Walker) podIP() (Mutation, bool) {
	var keys []string
	for _, key := range wk.services() {
		if wk.World.Free(wk.World.Services[key].TLS) > 0 {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return Mutation{}, false
	}
	key := pick(wk.rng, keys)
	s := wk.World.Services[key]
	j := wk.rng.IntN(len(s.Endpoints))
	old := s.Endpoints[j].Addr
	s.Endpoints[j].Addr = wk.World.take(s.TLS, wk.rng.IntN(wk.World.Free(s.TLS)))
	wk.World.release(old)
	return Mutation{Kind: MutPodIP, Route: wk.ownerOf(key).Key(),
		Detail: fmt.Sprintf("pod %s: %s → %s", s.Endpoints[j].Pod, old.Name, s.Endpoints[j].Addr.Name)}, true
}

func (wk *Walker) weight() (Mutation, bool) {
	rs := wk.routes(func(*Route) bool { return true })
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	i := wk.rng.IntN(len(r.Services))
	choices := []int32{0, 1, 10, 50, 100, 256}
	if wk.stable[r.Key()] {
		choices = choices[1:]
	}
	old := r.Services[i].Weight
	w := old
	for w == old {
		w = wk.pick(choices)
	}
	r.Services[i].Weight = w
	return Mutation{Kind: MutWeight, Route: r.Key(), Detail: fmt.Sprintf("service %s weight %d → %d", r.Services[i].Name, old, w)}, true
}

// randomHost returns a host from the pools and whether it is a wildcard Route's.
func (wk *Walker) randomHost() (string, bool) {
	switch x := wk.rng.IntN(20); {
	case x < 13:
		return fmt.Sprintf("h%d.%s", wk.rng.IntN(exactHosts), appsDomain), false
	case x < 16:
		d := wk.rng.IntN(wildcardDomains)
		return fmt.Sprintf("e%d.w%d.%s", d, d, appsDomain), false
	default:
		d := fmt.Sprintf("w%d.%s", wk.rng.IntN(wildcardDomains), appsDomain)
		if wk.rng.IntN(2) == 0 {
			return "*." + d, true
		}
		return "www." + d, true
	}
}

func (wk *Walker) randomPolicy(k Kind) string {
	switch k {
	case KindEdge, KindReencrypt:
		return pick(wk.rng, []string{"", "None", "Allow", "Redirect"})
	case KindPassthrough:
		return pick(wk.rng, []string{"", "None", "Redirect"})
	}
	return ""
}

// addedOfKind counts the Routes of the kind that are not stable.
func (wk *Walker) addedOfKind(k Kind) int {
	return len(wk.routes(func(r *Route) bool { return r.Kind == k && wk.unstable(r) }))
}

func (wk *Walker) addRandomRoute() (Mutation, bool) {
	if len(wk.World.Routes) >= wk.opts.MaxRoutes {
		return Mutation{}, false
	}
	var kinds []Kind
	for _, kw := range []struct {
		k Kind
		w int
	}{{KindHTTP, 8}, {KindEdge, 6}, {KindPassthrough, 3}, {KindReencrypt, 3}} {
		if wk.World.Free(kw.k.tlsBackends()) == 0 {
			continue
		}
		if wk.opts.MaxAddedPerKind > 0 && wk.addedOfKind(kw.k) >= wk.opts.MaxAddedPerKind {
			continue
		}
		for i := 0; i < kw.w; i++ {
			kinds = append(kinds, kw.k)
		}
	}
	if len(kinds) == 0 {
		return Mutation{}, false
	}
	spec := RouteSpec{Kind: pick(wk.rng, kinds), Namespace: pick(wk.rng, wk.opts.Namespaces)}
	spec.Name = fmt.Sprintf("r%d", wk.World.seq+1)
	if len(wk.deleted) > 0 && wk.rng.IntN(10) == 0 {
		// Re-create a deleted Route under its old name (its backend may be retired in A).
		key := pick(wk.rng, wk.deleted)
		if wk.World.Route(key) == nil {
			spec.Namespace, spec.Name, _ = strings.Cut(key, "/")
		}
	}
	overlapOn := wk.routes(func(r *Route) bool { return r.Kind != KindPassthrough && wk.unstable(r) })
	if spec.Kind != KindPassthrough && len(overlapOn) > 0 && wk.rng.IntN(4) == 0 {
		// An overlapping path on an existing host, in the host's namespace.
		o := pick(wk.rng, overlapOn)
		spec.Namespace, spec.Host, spec.Wildcard = o.Namespace, o.Host, o.Wildcard
		for spec.Path = o.Path; spec.Path == o.Path; {
			spec.Path = pick(wk.rng, pathPool[1:])
		}
		if wk.World.Route(spec.Namespace+"/"+spec.Name) != nil {
			spec.Name = fmt.Sprintf("r%d", wk.World.seq+1)
		}
	} else {
		spec.Host, spec.Wildcard = wk.randomHost()
		if o := wk.onHost(spec.Host, spec.Wildcard); o != nil && wk.rng.IntN(5) != 0 {
			// Mostly in the namespace that owns the host (another one is refused: HostAlreadyClaimed).
			spec.Namespace = o.Namespace
			if wk.World.Route(spec.Namespace+"/"+spec.Name) != nil {
				spec.Name = fmt.Sprintf("r%d", wk.World.seq+1)
			}
		}
		if spec.Kind != KindPassthrough && wk.rng.IntN(2) == 0 {
			spec.Path = pick(wk.rng, pathPool)
		}
	}
	spec.Insecure = wk.randomPolicy(spec.Kind)
	spec.OwnCert = wk.rng.IntN(4) != 0
	tls := spec.Kind.tlsBackends()
	free := wk.World.Free(tls)
	services := 1
	if !wk.opts.SingleService && free >= 2 && wk.rng.IntN(4) == 0 {
		services = 2
	}
	for i := 0; i < services; i++ {
		n := min(1+wk.rng.IntN(3), free-(services-1-i))
		spec.Endpoints = append(spec.Endpoints, n)
		free -= n
	}
	r, err := wk.AddRoute(spec)
	if err != nil {
		return Mutation{}, false
	}
	wk.deleted = removeString(wk.deleted, r.Key())
	return Mutation{Kind: MutAddRoute, Route: r.Key(), Detail: describeRoute(r)}, true
}

// onHost returns a Route with the same effective host, or nil.
func (wk *Walker) onHost(host string, wildcard bool) *Route {
	probe := Route{Host: host, Wildcard: wildcard}
	for _, r := range wk.World.Routes {
		if r.effectiveHost() == probe.effectiveHost() {
			return r
		}
	}
	return nil
}

// describeRoute summarises a Route for logs.
func describeRoute(r *Route) string {
	s := fmt.Sprintf("%s %s%s", r.Kind, r.Host, r.Path)
	if r.Wildcard {
		s += " (wildcard)"
	}
	if r.Insecure != "" {
		s += " insecure=" + r.Insecure
	}
	if len(r.CertPEM) > 0 {
		s += " own-cert"
	}
	if n := len(r.RequestHeaders) + len(r.ResponseHeaders); n > 0 {
		s += fmt.Sprintf(" header-actions=%d", n)
	}
	return s + fmt.Sprintf(" services=%d", len(r.Services))
}

func removeString(xs []string, x string) []string {
	out := xs[:0]
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

func (wk *Walker) deleteRoute() (Mutation, bool) {
	if len(wk.World.Routes) <= wk.opts.MinRoutes {
		return Mutation{}, false
	}
	rs := wk.routes(wk.unstable)
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	for _, ref := range r.Services {
		wk.removeService(r.Namespace, ref.Name)
	}
	kept := wk.World.Routes[:0]
	for _, x := range wk.World.Routes {
		if x != r {
			kept = append(kept, x)
		}
	}
	wk.World.Routes = kept
	wk.deleted = append(wk.deleted, r.Key())
	sort.Strings(wk.deleted)
	return Mutation{Kind: MutDeleteRoute, Route: r.Key(), Detail: describeRoute(r)}, true
}

func (wk *Walker) changeHost() (Mutation, bool) {
	rs := wk.routes(wk.unstable)
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	old := r.effectiveHost()
	for r.effectiveHost() == old {
		r.Host, r.Wildcard = wk.randomHost()
	}
	if len(r.CertPEM) > 0 {
		r.CertPEM, r.KeyPEM = wk.opts.IssueCert(r.effectiveHost())
	}
	return Mutation{Kind: MutHost, Route: r.Key(), Detail: fmt.Sprintf("host %s → %s", old, r.effectiveHost())}, true
}

func (wk *Walker) changePath() (Mutation, bool) {
	rs := wk.routes(func(r *Route) bool { return wk.unstable(r) && r.Kind != KindPassthrough })
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	old := r.Path
	for r.Path == old {
		r.Path = pick(wk.rng, pathPool)
	}
	return Mutation{Kind: MutPath, Route: r.Key(), Detail: fmt.Sprintf("path %q → %q", old, r.Path)}, true
}

func (wk *Walker) flipInsecure() (Mutation, bool) {
	rs := wk.routes(func(r *Route) bool { return wk.unstable(r) && r.Kind != KindHTTP })
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	old := r.Insecure
	for r.Insecure == old {
		r.Insecure = wk.randomPolicy(r.Kind)
	}
	return Mutation{Kind: MutInsecure, Route: r.Key(), Detail: fmt.Sprintf("insecure %q → %q", old, r.Insecure)}, true
}

func (wk *Walker) alternate() (Mutation, bool) {
	rs := wk.routes(wk.unstable)
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	canAdd := len(r.Services) < 3 && wk.World.Free(r.Kind.tlsBackends()) > 0
	if len(r.Services) > 1 && (!canAdd || wk.rng.IntN(2) == 0) {
		last := r.Services[len(r.Services)-1]
		wk.removeService(r.Namespace, last.Name)
		r.Services = r.Services[:len(r.Services)-1]
		return Mutation{Kind: MutAlternate, Route: r.Key(), Detail: fmt.Sprintf("remove alternate %s (%d services left)", last.Name, len(r.Services))}, true
	}
	if !canAdd {
		return Mutation{}, false
	}
	n := min(1+wk.rng.IntN(2), wk.World.Free(r.Kind.tlsBackends()))
	ref := ServiceRef{Name: wk.newService(r, n), Weight: wk.pick([]int32{100, 50, 10, 0})}
	r.Services = append(r.Services, ref)
	return Mutation{Kind: MutAlternate, Route: r.Key(), Detail: fmt.Sprintf("add alternate %s weight %d with %d endpoints", ref.Name, ref.Weight, n)}, true
}

func (wk *Walker) rotateCert() (Mutation, bool) {
	rs := wk.routes(func(r *Route) bool { return r.Kind.terminated() })
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	switch {
	case len(r.CertPEM) > 0 && wk.rng.IntN(6) == 0:
		r.CertPEM, r.KeyPEM = nil, nil
		return Mutation{Kind: MutCert, Route: r.Key(), Detail: "own certificate removed (default certificate)"}, true
	case len(r.CertPEM) > 0:
		r.CertPEM, r.KeyPEM = wk.opts.IssueCert(r.effectiveHost())
		return Mutation{Kind: MutCert, Route: r.Key(), Detail: "new key and certificate for " + r.effectiveHost()}, true
	}
	r.CertPEM, r.KeyPEM = wk.opts.IssueCert(r.effectiveHost())
	return Mutation{Kind: MutCert, Route: r.Key(), Detail: "own certificate added for " + r.effectiveHost()}, true
}

// effectiveBalance is the balance Translate gives the Route.
func (wk *Walker) effectiveBalance(r *Route) string {
	if v, ok := r.Annotations[mapping.AnnotationBalance]; ok {
		return v
	}
	if len(r.Services) > 1 {
		return "roundrobin"
	}
	if r.Kind == KindPassthrough {
		return wk.opts.DefaultTCPBalance
	}
	return wk.opts.DefaultBalance
}

func (wk *Walker) annotate() (Mutation, bool) {
	rs := wk.routes(wk.unstable)
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	if r.Annotations == nil {
		r.Annotations = map[string]string{}
	}
	if wk.rng.IntN(2) == 0 {
		old := wk.effectiveBalance(r)
		if _, set := r.Annotations[mapping.AnnotationBalance]; set && wk.rng.IntN(3) == 0 {
			delete(r.Annotations, mapping.AnnotationBalance)
			if nb := wk.effectiveBalance(r); nb != old {
				return Mutation{Kind: MutAnnotation, Route: r.Key(), Detail: fmt.Sprintf("balance annotation removed (%s → %s)", old, nb)}, true
			}
		}
		v := old
		for v == old {
			v = pick(wk.rng, []string{"roundrobin", "leastconn", "random", "source"})
		}
		r.Annotations[mapping.AnnotationBalance] = v
		return Mutation{Kind: MutAnnotation, Route: r.Key(), Detail: fmt.Sprintf("balance %s → %s", old, v)}, true
	}
	old, set := r.Annotations[mapping.AnnotationTimeout]
	if set && wk.rng.IntN(3) == 0 {
		delete(r.Annotations, mapping.AnnotationTimeout)
		return Mutation{Kind: MutAnnotation, Route: r.Key(), Detail: fmt.Sprintf("timeout annotation %s removed", old)}, true
	}
	v := old
	for v == old {
		v = pick(wk.rng, []string{"20s", "45s", "2m"})
	}
	r.Annotations[mapping.AnnotationTimeout] = v
	return Mutation{Kind: MutAnnotation, Route: r.Key(), Detail: fmt.Sprintf("timeout %q → %s", old, v)}, true
}

// forwarded sets, changes or removes the forwarded-headers annotation of a Route that terminates
// HTTP (a passthrough Route has no such policy).
func (wk *Walker) forwarded() (Mutation, bool) {
	return wk.httpAnnotation(MutForwarded, mapping.AnnotationForwardedHeaders, []string{"append", "replace", "if-none", "never"})
}

// cookieName sets, changes or removes the cookie_name annotation of a Route that terminates HTTP
// (a passthrough Route has no cookie).
func (wk *Walker) cookieName() (Mutation, bool) {
	return wk.httpAnnotation(MutCookieName, mapping.AnnotationCookieName, []string{"session", "shop_id", "sticky-1"})
}

// httpAnnotation sets annotation name of a Route that terminates HTTP to one of values other than
// its own, or removes it now and then.
func (wk *Walker) httpAnnotation(kind MutationKind, name string, values []string) (Mutation, bool) {
	var rs []*Route
	for _, r := range wk.routes(wk.unstable) {
		if r.Kind != KindPassthrough {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	if r.Annotations == nil {
		r.Annotations = map[string]string{}
	}
	old, set := r.Annotations[name]
	if set && wk.rng.IntN(3) == 0 {
		delete(r.Annotations, name)
		return Mutation{Kind: kind, Route: r.Key(), Detail: fmt.Sprintf("annotation %s removed", old)}, true
	}
	v := old
	for v == old {
		v = pick(wk.rng, values)
	}
	r.Annotations[name] = v
	return Mutation{Kind: kind, Route: r.Key(), Detail: fmt.Sprintf("%q → %s", old, v)}, true
}
