package mapping

import (
	"bytes"
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/haroute/haroute/mapping/model"
)

// index gives Translate keyed, read-only access to the objects of an Input. When the input holds the
// same object twice (same namespace and name), one is chosen by a fixed rule (oldest, then UID, then
// content), so the result never depends on the order of the input slices.
type index struct {
	namespaces map[string]*corev1.Namespace
	services   map[string]*corev1.Service              // "ns/name"
	secrets    map[string]*corev1.Secret               // "ns/name"
	slices     map[string][]*discoveryv1.EndpointSlice // "ns/service" (kubernetes.io/service-name label) → slices sorted by name
	// listener is the input's listener files, passed through to the state as they are.
	listener model.ListenerFiles
}

func newIndex(in Input) *index {
	return &index{
		namespaces: namespaceIndex(in.Namespaces, nil),
		services:   objectIndex(in.Services, nil),
		secrets:    objectIndex(in.Secrets, nil),
		slices:     sliceIndex(in.EndpointSlices, nil),
		listener:   in.Listener,
	}
}

// namespaceIndex indexes Namespaces by name. counts, when not nil, gets the number of entries of each
// name (for a Translator's indexer).
func namespaceIndex(list []*corev1.Namespace, counts map[string]int) map[string]*corev1.Namespace {
	m := make(map[string]*corev1.Namespace, len(list))
	for _, ns := range list {
		if ns != nil {
			keep(m, ns.Name, ns)
			count(counts, ns.Name)
		}
	}
	return m
}

// objectIndex indexes namespaced objects by "ns/name"; counts as for namespaceIndex.
func objectIndex[T interface {
	comparable
	metav1.Object
}](list []T, counts map[string]int) map[string]T {
	var zero T
	m := make(map[string]T, len(list))
	for _, obj := range list {
		if obj != zero {
			key := obj.GetNamespace() + "/" + obj.GetName()
			keep(m, key, obj)
			count(counts, key)
		}
	}
	return m
}

// sliceIndex indexes the EndpointSlices that name their Service by "ns/service", each Service's
// slices sorted by "ns/name" (the key they are kept under); counts as for namespaceIndex, by
// "ns/name".
func sliceIndex(list []*discoveryv1.EndpointSlice, counts map[string]int) map[string][]*discoveryv1.EndpointSlice {
	byName := make(map[string]*discoveryv1.EndpointSlice, len(list))
	for _, s := range list {
		if s != nil && s.Labels[discoveryv1.LabelServiceName] != "" {
			key := s.Namespace + "/" + s.Name
			keep(byName, key, s)
			count(counts, key)
		}
	}
	out := make(map[string][]*discoveryv1.EndpointSlice, len(byName))
	for _, s := range byName {
		key := sliceServiceKey(s)
		out[key] = append(out[key], s)
	}
	for _, group := range out {
		if len(group) > 1 {
			sort.Slice(group, func(i, j int) bool {
				return group[i].Namespace+"/"+group[i].Name < group[j].Namespace+"/"+group[j].Name
			})
		}
	}
	return out
}

// sliceServiceKey is the "ns/service" an EndpointSlice is indexed under.
func sliceServiceKey(s *discoveryv1.EndpointSlice) string {
	return s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
}

func count(counts map[string]int, key string) {
	if counts != nil {
		counts[key]++
	}
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
