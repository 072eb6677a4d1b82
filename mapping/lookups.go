package mapping

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// objects is what the per-Route work (validate, buildBackend) reads of the input besides the Route
// itself and the options. Translate reads the index directly; a Translator reads it through a
// recorder, to know what a memoized result depends on.
type objects interface {
	service(ns, name string) *corev1.Service
	secret(ns, name string) *corev1.Secret
	endpointSlices(ns, svc string) []*discoveryv1.EndpointSlice
}

// depKind says which index lookup a dep records.
type depKind uint8

const (
	depService depKind = iota
	depSecret
	depSlices
)

// dep is one lookup a Route's translation made and what it returned (nil included).
type dep struct {
	kind   depKind
	key    string // "ns/name" (for depSlices: "ns/service")
	svc    *corev1.Service
	secret *corev1.Secret
	slices []*discoveryv1.EndpointSlice
}

// holds reports whether the lookup returns the very same objects in x as when it was recorded. A
// translation is a deterministic function of its Route, the options and what its lookups return: when
// they all return the same (immutable) objects, it takes the same path and gives the same result.
func (d *dep) holds(x *index) bool {
	switch d.kind {
	case depService:
		return x.services[d.key] == d.svc
	case depSecret:
		return x.secrets[d.key] == d.secret
	case depSlices:
		return slices.Equal(x.slices[d.key], d.slices)
	}
	return false
}

// recorder reads an index and records every lookup.
type recorder struct {
	idx  *index
	deps []dep
}

func (r *recorder) service(ns, name string) *corev1.Service {
	key := ns + "/" + name
	s := r.idx.services[key]
	r.deps = append(r.deps, dep{kind: depService, key: key, svc: s})
	return s
}

func (r *recorder) secret(ns, name string) *corev1.Secret {
	key := ns + "/" + name
	s := r.idx.secrets[key]
	r.deps = append(r.deps, dep{kind: depSecret, key: key, secret: s})
	return s
}

func (r *recorder) endpointSlices(ns, svc string) []*discoveryv1.EndpointSlice {
	key := ns + "/" + svc
	s := r.idx.slices[key]
	r.deps = append(r.deps, dep{kind: depSlices, key: key, slices: s})
	return s
}

// take returns the lookups recorded since the last take and starts a new record.
func (r *recorder) take() []dep {
	d := r.deps
	r.deps = nil
	return d
}
