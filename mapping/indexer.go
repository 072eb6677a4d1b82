package mapping

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// indexer keeps a Translator's index from one call to the next. Snapshots list each kind in a stable
// order (the cluster source sorts them by namespace and name), so an updated object usually stands at
// the same position of a list of the same length. Such a replacement is patched into the index when
// its key (namespace and name, and for an EndpointSlice its Service) stays the same and no other
// entry of the list has that key: the new object is then what newIndex would keep, at the place it
// would keep it. Any other change rebuilds that kind's part of the index with newIndex's code.
//
// The indexer also says which keys changed since the previous call, so that a memoized lookup
// verified in the previous call is known to hold without looking it up again.
type indexer struct {
	x          *index
	namespaces kindList[*corev1.Namespace]
	services   kindList[*corev1.Service]
	secrets    kindList[*corev1.Secret]
	slices     kindList[*discoveryv1.EndpointSlice]
	// kinds[k] tells, for the lookups of depKind k, what changed since the previous call.
	kinds [depSlices + 1]kindChange
	// namespacesChanged tells whether the Namespaces index was rebuilt or patched since the previous
	// call (Namespaces are not looked up by the per-Route work, only by sharding).
	namespacesChanged bool
}

// kindList is the last input list of one kind, and how many entries of it hold each index key.
type kindList[T comparable] struct {
	list   []T // a copy of the caller's list
	counts map[string]int
}

// kindChange is what changed in one kind's part of the index since the previous call.
type kindChange struct {
	rebuilt bool            // built anew (or never built before): no lookup is known to hold
	changed map[string]bool // keys whose value was replaced
}

// update brings the index to in and returns it.
func (ix *indexer) update(in Input) *index {
	first := ix.x == nil
	if first {
		ix.x = &index{}
	}
	for k := range ix.kinds {
		ix.kinds[k].rebuilt = first
		clear(ix.kinds[k].changed)
	}
	x := ix.x
	x.listener = in.Listener
	ix.namespacesChanged = first
	if first || !patch(&ix.namespaces, in.Namespaces, func(o, n *corev1.Namespace) bool {
		if o == nil || n == nil || o.Name != n.Name || ix.namespaces.counts[n.Name] != 1 {
			return false
		}
		x.namespaces[n.Name] = n
		ix.namespacesChanged = true
		return true
	}) {
		ix.namespaces = kindList[*corev1.Namespace]{list: slices.Clone(in.Namespaces), counts: map[string]int{}}
		x.namespaces = namespaceIndex(in.Namespaces, ix.namespaces.counts)
		ix.namespacesChanged = true
	}
	if first || !patch(&ix.services, in.Services, replaceObject(&ix.services, x.services, &ix.kinds[depService])) {
		ix.services = kindList[*corev1.Service]{list: slices.Clone(in.Services), counts: map[string]int{}}
		x.services = objectIndex(in.Services, ix.services.counts)
		ix.kinds[depService].rebuilt = true
	}
	if first || !patch(&ix.secrets, in.Secrets, replaceObject(&ix.secrets, x.secrets, &ix.kinds[depSecret])) {
		ix.secrets = kindList[*corev1.Secret]{list: slices.Clone(in.Secrets), counts: map[string]int{}}
		x.secrets = objectIndex(in.Secrets, ix.secrets.counts)
		ix.kinds[depSecret].rebuilt = true
	}
	if first || !patch(&ix.slices, in.EndpointSlices, ix.replaceSlice) {
		ix.slices = kindList[*discoveryv1.EndpointSlice]{list: slices.Clone(in.EndpointSlices), counts: map[string]int{}}
		x.slices = sliceIndex(in.EndpointSlices, ix.slices.counts)
		ix.kinds[depSlices].rebuilt = true
	}
	return x
}

// patch applies list to the index through replace, called for each position where list differs from
// the previous list. It returns false, leaving the index to be rebuilt, when the lengths differ or
// replace refuses a position (replace refuses before changing anything, so a refusal leaves only
// complete replacements behind, which the rebuild supersedes).
func patch[T comparable](k *kindList[T], list []T, replace func(o, n T) bool) bool {
	if len(list) != len(k.list) {
		return false
	}
	for i, n := range list {
		if o := k.list[i]; o != n {
			if !replace(o, n) {
				return false
			}
			k.list[i] = n
		}
	}
	return true
}

// replaceObject returns the replace function of patch for the Services or Secrets index m.
func replaceObject[T interface {
	comparable
	metav1.Object
}](k *kindList[T], m map[string]T, c *kindChange) func(o, n T) bool {
	var zero T
	return func(o, n T) bool {
		if o == zero || n == zero || o.GetNamespace() != n.GetNamespace() || o.GetName() != n.GetName() {
			return false
		}
		key := n.GetNamespace() + "/" + n.GetName()
		if k.counts[key] != 1 {
			return false
		}
		m[key] = n
		c.mark(key)
		return true
	}
}

// replaceSlice patches the replacement of EndpointSlice o by n.
func (ix *indexer) replaceSlice(o, n *discoveryv1.EndpointSlice) bool {
	if o == nil || n == nil || o.Namespace != n.Namespace || o.Name != n.Name {
		return false
	}
	svc := n.Labels[discoveryv1.LabelServiceName]
	if svc == "" || o.Labels[discoveryv1.LabelServiceName] != svc || ix.slices.counts[n.Namespace+"/"+n.Name] != 1 {
		return false
	}
	key := sliceServiceKey(n)
	group := ix.x.slices[key]
	i := slices.Index(group, o)
	if i < 0 {
		return false
	}
	group = slices.Clone(group) // memoized lookups hold the old group
	group[i] = n
	ix.x.slices[key] = group
	ix.kinds[depSlices].mark(key)
	return true
}

func (c *kindChange) mark(key string) {
	if c.changed == nil {
		c.changed = map[string]bool{}
	}
	c.changed[key] = true
}

// onlySlicesPatched reports whether the latest update changed nothing but EndpointSlices, and
// those only by patching replacements in place (their changed keys are kinds[depSlices].changed):
// Namespaces, Services and Secrets are the same objects under the same keys as in the previous call.
func (ix *indexer) onlySlicesPatched() bool {
	for _, k := range []depKind{depService, depSecret} {
		if c := &ix.kinds[k]; c.rebuilt || len(c.changed) > 0 {
			return false
		}
	}
	return !ix.namespacesChanged && !ix.kinds[depSlices].rebuilt
}

// known reports whether a lookup verified in the previous call is known to return the same now.
func (ix *indexer) known(d *dep) bool {
	c := &ix.kinds[d.kind]
	return !c.rebuilt && !c.changed[d.key]
}
