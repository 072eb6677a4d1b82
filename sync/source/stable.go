package source

import (
	"reflect"

	"github.com/haroute/haroute/mapping"
)

// Stable hands on, from one input to the next, the previous object in place of an equal one: what
// an informer's cache does by itself (an unchanged object keeps its pointer). It gives inputs that are
// made afresh every time (a re-read folder) the pointer stability mapping.Translator keys on. The
// objects it returns are shared between inputs: read-only. The zero value is ready; not safe for
// concurrent use.
type Stable struct {
	prev map[stableKey]any
}

// stableKey identifies an object: its kind, namespace and name.
type stableKey struct {
	kind, namespace, name string
}

// Input returns in with every object equal (reflect.DeepEqual) to the one of the same kind,
// namespace and name in the previous input replaced by that previous object. in's lists are not
// modified: the result has its own.
func (s *Stable) Input(in mapping.Input) mapping.Input {
	next := make(map[stableKey]any, len(in.Routes)+len(in.Services)+len(in.EndpointSlices)+len(in.Namespaces)+len(in.Secrets))
	out := mapping.Input{
		Routes:         stableList(s.prev, next, "Route", in.Routes),
		Services:       stableList(s.prev, next, "Service", in.Services),
		EndpointSlices: stableList(s.prev, next, "EndpointSlice", in.EndpointSlices),
		Namespaces:     stableList(s.prev, next, "Namespace", in.Namespaces),
		Secrets:        stableList(s.prev, next, "Secret", in.Secrets),
		Listener:       in.Listener,
	}
	s.prev = next
	return out
}

// stableList returns objs with the objects equal to their entry in prev replaced by it, and records
// every object of the result in next. A nil entry stays nil.
func stableList[T interface {
	comparable
	GetNamespace() string
	GetName() string
}](prev, next map[stableKey]any, kind string, objs []T) []T {
	if objs == nil {
		return nil
	}
	var zero T
	out := make([]T, len(objs))
	for i, obj := range objs {
		out[i] = obj
		if obj == zero {
			continue
		}
		k := stableKey{kind: kind, namespace: obj.GetNamespace(), name: obj.GetName()}
		if old, ok := prev[k].(T); ok && (old == obj || reflect.DeepEqual(old, obj)) {
			out[i] = old
		}
		next[k] = out[i]
	}
	return out
}
