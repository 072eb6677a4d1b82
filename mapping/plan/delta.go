package plan

import (
	"slices"
	"sort"

	"github.com/haroute/haroute/mapping/model"
)

// maxDeltaShare is the largest share of backends ComputeDelta plans alone: beyond it, comparing
// them one by one saves nothing over ComputeWith.
const maxDeltaShare = 8

// ComputeDelta is ComputeWith for the common case of a few changed backends, in time that grows
// with what changed rather than with the number of Routes. It needs to know where applied comes
// from: base is the desired state of the plan whose Next applied is (unchanged since, except the
// backends named in dirty: deferred deletions and the like), and desired shares with base whatever
// did not change (mapping.Translator hands on unchanged backends and lists as they are).
//
// It returns ok=false, and the caller plans with ComputeWith, unless:
//   - the settings, frontends and listener files of applied and desired are equal;
//   - desired's map files, Routes, certificates and CA files are the very same lists as base's;
//   - desired and base have the same backends by name, and the ones that differ (Equal) or are
//     dirty are few, are served by applied under their own name (no spare, not retired, same
//     Route) and keep their options.
//
// When ok, the plan equals ComputeWith(applied, desired, o): the same Next (by value) and Ops, or
// the same structural reasons (ReloadMode, PoolRefill). Next shares every unchanged backend with
// applied.
func ComputeDelta(applied, base, desired *model.Config, dirty map[string]bool, o Options) (Plan, bool) {
	if applied == nil || base == nil || desired == nil || len(desired.Backends) != len(base.Backends) {
		return Plan{}, false
	}
	if len(settingsReasons(&applied.Settings, &desired.Settings)) > 0 || len(frontendReasons(applied.Frontends, desired.Frontends)) > 0 ||
		applied.Listener != desired.Listener {
		return Plan{}, false
	}
	if !same(desired.Maps, base.Maps) || !same(desired.Routes, base.Routes) ||
		!same(desired.Certificates, base.Certificates) || !same(desired.CAFiles, base.CAFiles) {
		return Plan{}, false
	}
	limit := len(desired.Backends)/maxDeltaShare + 1
	var changed []int // indices in desired, in name order
	for j, d := range desired.Backends {
		b := base.Backends[j]
		if d == b && (dirty == nil || !dirty[d.Name]) {
			continue // the base's backend itself (the common case: no need to read it)
		}
		if d.Name != b.Name {
			return Plan{}, false
		}
		if !dirty[d.Name] && d.Equal(b) {
			continue
		}
		if changed = append(changed, j); len(changed) > limit {
			return Plan{}, false
		}
	}
	// Dirty backends that desired lacks (a deferred deletion in a backend that goes) need the full
	// plan.
	for name := range dirty {
		if indexOf(desired.Backends, name) < 0 {
			return Plan{}, false
		}
	}

	backends := slices.Clone(applied.Backends)
	var ops, late []Op
	for _, j := range changed {
		d := desired.Backends[j]
		ai := indexOf(applied.Backends, d.Name)
		if ai < 0 {
			return Plan{}, false
		}
		a := applied.Backends[ai]
		if a.Spare || a.Retired || d.Spare || d.Retired || d.Route == "" || a.Route != d.Route || !sameOptions(a, d) {
			return Plan{}, false
		}
		backends[ai] = nextOf(a, d)
		early, l := backendServerOps(a, backends[ai])
		ops, late = append(ops, early...), append(late, l...)
	}
	ops = append(ops, late...) // Diff's order: removals of Route-less backends come last
	next := &model.Config{
		Settings:     desired.Settings,
		Frontends:    desired.Frontends,
		Maps:         applied.Maps,
		Backends:     backends,
		Certificates: desired.Certificates,
		CAFiles:      desired.CAFiles,
		Routes:       applied.Routes,
		Listener:     applied.Listener,
	}
	if o.Refill && !o.DynamicBackends {
		if reasons := refillReasons(next.Backends, &desired.Settings, o.PoolSizes); len(reasons) > 0 {
			return Plan{Next: WithPoolSizes(desired, o.PoolSizes), Structural: sortReasons(reasons)}, true
		}
	}
	if len(ops) == 0 {
		ops = nil
	}
	if o.ReloadEveryChange && len(ops) > 0 && !OnlyDormantChecks(ops) {
		return Reload(desired, o, reloadModeReason(ops)), true
	}
	return Plan{Next: next, Ops: ops}, true
}

// indexOf returns the index of the backend named name in backends, sorted by name (model.Config),
// or -1.
func indexOf(backends []*model.Backend, name string) int {
	i := sort.Search(len(backends), func(i int) bool { return backends[i].Name >= name })
	if i < len(backends) && backends[i].Name == name {
		return i
	}
	return -1
}

// same reports whether a and b are the very same list (same array, same length).
func same[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
