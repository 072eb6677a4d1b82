package plan

import (
	"sort"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// matching is the result of pairing desired backends with applied ones.
type matching struct {
	// next holds the backends of Next: one per applied backend, under the applied name.
	next []model.Backend
	// rename maps a desired backend name to the applied name that serves it, where they differ
	// (claimed spares).
	rename map[string]string
	// reasons are the structural reasons found while matching.
	reasons []Reason
}

// spareKey identifies a pool: a kind and a balance algorithm.
type spareKey struct {
	kind    model.BackendKind
	balance string
}

// claimKey identifies a claimed spare: the Route it serves and its kind.
type claimKey struct {
	route string
	kind  model.BackendKind
}

// matchBackends pairs every desired backend with the applied backend that serves it, claiming free
// spares for new Routes whose options are the defaults, and derives Next's backends:
//   - a desired backend matches the applied one of the same name that is not retired, or else the
//     claimed spare serving the same Route with the same kind;
//   - a match with other options moves to a free spare when the new options are a spare template
//     (the old backend is released or retired), and is BackendOptionsChanged otherwise;
//   - a new backend with spare options claims the free spare of its kind and balance with the lowest
//     name (PoolExhausted when none is left), other new backends are NewBackend;
//   - applied backends left over are released (claimed spares, back in the pool) or retired (backends
//     under their own name), without servers and without Route (reencrypt ones without TLS settings,
//     since their Route's CA file may go); free spares and retired backends stay as they are.
//
// Desired backends that are themselves spare or retired (a Next given back as desired) match the
// applied backend of the same name.
func matchBackends(applied, desired *model.Config) matching {
	m := matching{rename: map[string]string{}}
	byName := make(map[string]int, len(applied.Backends))
	claimed := map[claimKey]int{}
	free := map[spareKey][]int{}
	for i := range applied.Backends {
		a := &applied.Backends[i]
		byName[a.Name] = i
		switch {
		case a.Spare && a.Route == "":
			k := spareKey{a.Kind, a.Balance}
			free[k] = append(free[k], i) // applied backends are sorted: lowest name first
		case a.Spare:
			k := claimKey{a.Route, a.Kind}
			if _, dup := claimed[k]; !dup {
				claimed[k] = i
			}
		}
	}
	appliedCA := func(path string) bool {
		for i := range applied.Backends {
			a := &applied.Backends[i]
			if a.Route != "" && a.TLS != nil && a.TLS.CAFile == path {
				return true
			}
		}
		return false
	}
	modelCA := func(name string) bool {
		i := sort.Search(len(desired.CAFiles), func(i int) bool { return desired.CAFiles[i].Name >= name })
		return i < len(desired.CAFiles) && desired.CAFiles[i].Name == name
	}

	used := make([]bool, len(applied.Backends))
	served := make([]*model.Backend, len(applied.Backends)) // desired backend served by applied i
	for j := range desired.Backends {
		d := &desired.Backends[j]
		ai := -1
		if i, ok := byName[d.Name]; ok && !used[i] && (!applied.Backends[i].Retired || d.Retired || d.Spare) {
			ai = i
		} else if i, ok := claimed[claimKey{d.Route, d.Kind}]; ok && d.Route != "" && !used[i] && !d.Spare && !d.Retired {
			ai = i
		}
		if ai >= 0 {
			a := &applied.Backends[ai]
			used[ai] = true
			diffs := optionDiff(a, d)
			if len(diffs) == 0 {
				served[ai] = d
				continue
			}
			// Options changed: HAProxy cannot change them at runtime, but when the new options are a
			// spare template (a Route that went from one Service to several switches to roundrobin, or
			// back) the Route moves to a free spare of the new variant and its old backend is released
			// or retired — the same as a new Route, with no reload.
			k := spareKey{d.Kind, d.Balance}
			if d.Spare || d.Retired || d.Route == "" || len(free[k]) == 0 || len(spareFit(&desired.Settings, d, appliedCA, modelCA)) > 0 {
				m.reasons = append(m.reasons, Reason{Kind: BackendOptionsChanged, Subject: d.Name, Detail: strings.Join(diffs, ", ")})
				continue
			}
			ai, free[k] = free[k][0], free[k][1:]
			used[ai] = true
			served[ai] = d
			continue
		}
		if d.Spare || d.Retired || d.Route == "" {
			m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name, Detail: "spare, retired or Route-less backend unknown to the applied state"})
			continue
		}
		if diffs := spareFit(&desired.Settings, d, appliedCA, modelCA); len(diffs) > 0 {
			m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name, Detail: "non-default options: " + strings.Join(diffs, ", ")})
			continue
		}
		k := spareKey{d.Kind, d.Balance}
		pool := free[k]
		if len(pool) == 0 {
			m.reasons = append(m.reasons, Reason{Kind: PoolExhausted, Subject: string(d.Kind) + "/" + d.Balance, Detail: "no free spare for " + d.Name})
			continue
		}
		ai, free[k] = pool[0], pool[1:]
		used[ai] = true
		served[ai] = d
	}
	if len(m.reasons) > 0 {
		return m
	}

	m.next = make([]model.Backend, len(applied.Backends))
	for i := range applied.Backends {
		a := &applied.Backends[i]
		n := *a // options as applied (equal to desired's where matched)
		switch d := served[i]; {
		case d != nil:
			n.Route, n.Spare, n.Retired, n.TLS = d.Route, a.Spare || d.Spare, d.Retired, d.TLS
			n.Servers = keepServerIDs(a.Servers, d.Servers)
			if a.Name != d.Name {
				m.rename[d.Name] = a.Name
			}
		case a.Spare && a.Route == "", a.Retired:
			// A free spare or a retired backend keeps its options and has no servers: servers left
			// there (deletions HAProxy deferred while connections were attached) get removed again.
			n.Servers = []model.Server{}
		case a.Spare:
			// A released spare: no TLS settings (a backend without servers needs no CA file).
			n.Route, n.TLS, n.Servers = "", nil, []model.Server{}
		default:
			n.Route, n.Retired, n.Servers = "", true, []model.Server{}
			if a.Kind == model.KindReencrypt {
				n.TLS = nil // its Route's CA file may go; without servers it needs none
			}
		}
		if n.Servers == nil {
			n.Servers = []model.Server{}
		}
		m.next[i] = n
	}
	return m
}
