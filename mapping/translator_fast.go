package mapping

import (
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// The fast path of a Translator: a call whose input differs from the previous call's only by
// EndpointSlices replaced in place (the commonest change: pods come and go) rebuilds the backends
// that looked up a changed slice and returns the previous result with those backends replaced,
// without walking the Routes.
//
// A fast call amends the previous call rather than making a new one: tr.gen stays the same, and the
// memo, the reverse index, tr.backends and prev are left as the previous call would have left them
// had it been given this input. Every memo entry validated (vgen) or built (bgen) in that call still
// has lookups that hold in the current index: those that looked up a changed key are either rebuilt
// here (bdeps) or make the call fall back to the normal path (vdeps). The next call, fast or normal,
// can therefore trust, as it always does, the lookups verified in the call numbered tr.gen that the
// indexer does not report as changed since this one. Entries not validated or not built in that call
// (duplicates, Routes rejected after an earlier admission) are not part of its result and are left
// as they are: hold checks their older lookups in full.
//
// Problems are never shared: prev.problems is a copy of what the normal path returned, and a fast
// call returns a copy of it (callers append to theirs).

// depUse says which lookups of a memo entry (see Translator.rev) hold an EndpointSlice key.
type depUse uint8

const (
	useValidate depUse = 1 << iota // the entry's vdeps
	useBackend                     // the entry's bdeps
)

// rebuild is a backend rebuilt by a fast call, not yet in the memo or the result.
type rebuild struct {
	m       *routeMemo
	pos     int // in prev.cfg.Backends
	backend *model.Backend
	deps    []dep
}

// fastTranslate returns the result of this call when, compared with the previous call:
//   - the input's Routes list holds the very same pointers in the same order (with Namespaces
//     unchanged, sharding then selects the same Routes in the same admission order);
//   - Namespaces, Services and Secrets are unchanged, and EndpointSlices were only patched in place
//     by the indexer (indexer.onlySlicesPatched), under the changed keys the indexer reports;
//   - no memo entry validated in the previous call looked up a changed key in its validation;
//   - the memo entries built in the previous call (the admitted Routes) whose backend looked up a
//     changed key had no backend warning then and have none now.
//
// Validations, admissions, claims, certificates and every problem are then those of the previous
// call: the result is the previous one with only those backends replaced by their rebuilds (the
// Backends slice is a clone of the previous one unless none was rebuilt) and a copy of the previous
// problems. It returns ok false, having changed neither the memo nor the previous result, when a
// condition fails; the normal path then runs.
func (tr *Translator) fastTranslate(in Input, idx *index) (*model.Config, []Problem, bool) {
	prev := tr.prev
	if prev.cfg == nil || !tr.ix.onlySlicesPatched() || !slices.Equal(tr.routes, in.Routes) {
		return nil, nil, false
	}
	affected, ok := tr.affected()
	if !ok {
		return nil, nil, false
	}
	// The rebuilt backends take the place of the old ones in the previous result.
	builds := make([]rebuild, 0, len(affected))
	for _, m := range affected {
		pos, found := backendPosition(prev.cfg.Backends, m.backend)
		if !found || len(m.bwarn) > 0 {
			return nil, nil, false
		}
		builds = append(builds, rebuild{m: m, pos: pos})
	}
	t := newTranslator(tr.opts, idx, tr)
	tr.rec.idx = idx
	for i := range builds {
		tr.rec.take()
		b, warnings := t.buildBackend(builds[i].m.adm)
		deps := tr.rec.take()
		if len(warnings) > 0 {
			return nil, nil, false // the problems change: the normal path sorts them
		}
		builds[i].backend, builds[i].deps = &b, deps
	}

	backends := prev.cfg.Backends
	if len(builds) > 0 {
		backends = slices.Clone(backends)
	}
	for _, b := range builds {
		backends[b.pos] = b.backend
		// tr.backends holds the previous result's backends in admission order.
		if b.pos < len(prev.order) && prev.order[b.pos] < len(tr.backends) && tr.backends[prev.order[b.pos]] == b.m.backend {
			tr.backends[prev.order[b.pos]] = b.backend
		}
		// The keys are those of the old lookups (which slices buildBackend looks up depends only on
		// the admission and the Services): link keeps the index exact all the same.
		tr.link(b.m, useBackend, b.m.bdeps, b.deps)
		b.m.backend, b.m.bwarn, b.m.bdeps = b.backend, nil, b.deps // bgen stays tr.gen: see above
	}
	cfg := &model.Config{
		Settings:     t.settings(),
		Frontends:    t.frontends(),
		Maps:         prev.cfg.Maps,
		Backends:     backends,
		Certificates: prev.cfg.Certificates,
		CAFiles:      prev.cfg.CAFiles,
		Routes:       prev.cfg.Routes,
		Listener:     idx.listener,
	}
	prev.cfg = cfg
	return cfg, slices.Clone(prev.problems), true
}

// affected returns, through the reverse index, the memo entries built in the previous call whose
// backend looked up a changed EndpointSlice key, each once; false when an entry validated in the
// previous call looked one up in its validation. Entries not built (or validated) in the previous
// call are not part of its result; their stale lookups are checked in full by the next normal call
// (hold trusts only lookups verified in the call numbered tr.gen).
func (tr *Translator) affected() ([]*routeMemo, bool) {
	tr.attempt++
	var out []*routeMemo
	for key := range tr.ix.kinds[depSlices].changed {
		for m, use := range tr.rev[key] {
			if use&useValidate != 0 && m.vgen == tr.gen {
				return nil, false
			}
			if use&useBackend != 0 && m.bgen == tr.gen && m.attempt != tr.attempt {
				m.attempt = tr.attempt
				out = append(out, m)
			}
		}
	}
	return out, true
}

// backendPosition returns the position of b in backends (sorted by name, names unique), and whether
// it is there.
func backendPosition(backends []*model.Backend, b *model.Backend) (int, bool) {
	if b == nil {
		return 0, false
	}
	i, found := slices.BinarySearchFunc(backends, b.Name, func(x *model.Backend, name string) int {
		return strings.Compare(x.Name, name)
	})
	return i, found && backends[i] == b
}

// link keeps the reverse index in step when the lookups of memo entry m change from old to deps
// (use says whether they are its vdeps or its bdeps): m is removed under the EndpointSlice keys of
// old that deps lacks, and added under those of deps. Whoever changes m.vdeps or m.bdeps, or drops
// m from the memo (deps nil), calls it, so that tr.rev[key][m] has the bit useValidate exactly when
// m.vdeps looks up key, and useBackend exactly when m.bdeps does.
func (tr *Translator) link(m *routeMemo, use depUse, old, deps []dep) {
	for i := range old {
		key := old[i].key
		if old[i].kind != depSlices || looksUp(deps, key) {
			continue
		}
		set := tr.rev[key]
		if u := set[m] &^ use; u != 0 {
			set[m] = u
			continue
		}
		delete(set, m)
		if len(set) == 0 {
			delete(tr.rev, key)
		}
	}
	for i := range deps {
		if deps[i].kind != depSlices {
			continue
		}
		set := tr.rev[deps[i].key]
		if set == nil {
			set = map[*routeMemo]depUse{}
			tr.rev[deps[i].key] = set
		}
		set[m] |= use
	}
}

// looksUp reports whether deps holds an EndpointSlice lookup of key.
func looksUp(deps []dep, key string) bool {
	for i := range deps {
		if deps[i].kind == depSlices && deps[i].key == key {
			return true
		}
	}
	return false
}
