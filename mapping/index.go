package mapping

import (
	"bytes"
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// index gives Translate keyed, read-only access to the objects of an Input. When the input holds the
// same object twice (same namespace and name), one is chosen by a fixed rule (oldest, then UID, then
// content), so the result never depends on the order of the input slices.
type index struct {
	namespaces map[string]*corev1.Namespace
	services   map[string]*corev1.Service              // "ns/name"
	secrets    map[string]*corev1.Secret               // "ns/name"
	slices     map[string][]*discoveryv1.EndpointSlice // "ns/service" (kubernetes.io/service-name label) → slices sorted by name
}

func newIndex(in Input) *index {
	x := &index{
		namespaces: map[string]*corev1.Namespace{},
		services:   map[string]*corev1.Service{},
		secrets:    map[string]*corev1.Secret{},
		slices:     map[string][]*discoveryv1.EndpointSlice{},
	}
	for _, ns := range in.Namespaces {
		if ns != nil {
			keep(x.namespaces, ns.Name, ns)
		}
	}
	for _, s := range in.Services {
		if s != nil {
			keep(x.services, s.Namespace+"/"+s.Name, s)
		}
	}
	for _, s := range in.Secrets {
		if s != nil {
			keep(x.secrets, s.Namespace+"/"+s.Name, s)
		}
	}
	byName := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range in.EndpointSlices {
		if s != nil && s.Labels[discoveryv1.LabelServiceName] != "" {
			keep(byName, s.Namespace+"/"+s.Name, s)
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := byName[name]
		key := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
		x.slices[key] = append(x.slices[key], s)
	}
	return x
}

// keep stores obj under key unless an object that sorts before it is already there.
func keep[T metav1.Object](m map[string]T, key string, obj T) {
	old, ok := m[key]
	if !ok || objectLess(obj, old) {
		m[key] = obj
	}
}

// objectLess orders two versions of the same object: oldest first, then by UID, then by content.
func objectLess(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	if a.GetUID() != b.GetUID() {
		return a.GetUID() < b.GetUID()
	}
	return contentLess(a, b)
}

// contentLess is the last tie-break between two objects: their JSON encodings compared bytewise. It is
// only reached for objects that agree on every key field, which a real cluster never produces.
func contentLess(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	return bytes.Compare(ja, jb) < 0
}

func (x *index) namespace(name string) *corev1.Namespace { return x.namespaces[name] }

func (x *index) service(ns, name string) *corev1.Service { return x.services[ns+"/"+name] }

func (x *index) secret(ns, name string) *corev1.Secret { return x.secrets[ns+"/"+name] }

func (x *index) endpointSlices(ns, svc string) []*discoveryv1.EndpointSlice {
	return x.slices[ns+"/"+svc]
}

func labelSet(m map[string]string) labels.Set { return labels.Set(m) }
