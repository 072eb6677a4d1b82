package plan

import (
	"slices"
	"sort"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// matching is the result of pairing desired backends with applied ones.
type matching struct {
	// next holds the backends of Next: one per applied backend, under the applied name.
	next []*model.Backend
	// rename maps a desired backend name to the applied name that serves it, where they differ
	// (claimed spares).
	rename map[string]string
	// reasons are the structural reasons found while matching.
	reasons []Reason
	// added are the desired backends HAProxy adds at runtime (dynamic), in name order.
	added []*model.Backend
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
// spares for new Routes whose options are the defaults, and derives Next's backends. A Route keeps
// the name its clients know (and the cookie derived from it) whenever HAProxy already serves it:
//   - a desired backend matches the applied one of the same name, or else the claimed spare serving
//     the same Route with the same kind; an idle backend of the same name (retired: its Route was
//     deleted or rejected) matches when its options fit, so a returning Route gets its own name back;
//   - a match with other options is BackendOptionsChanged (HeaderActionsChanged when only the header
//     rules differ): the reload renders the Route's own backend with its new options. Moving it to a spare instead would rename it and change its cookie (twice:
//     the next reload moves it back), so a Route that HAProxy serves never moves to a spare;
//   - a new backend of a Route HAProxy serves under another name (its termination changed) is
//     NewBackend too, for the same reason;
//   - any other new backend — a Route HAProxy does not serve yet — with spare options claims the free
//     spare of its kind and balance with the lowest name (PoolExhausted when none is left), and
//     other new backends are NewBackend;
//   - applied backends left over are released (claimed spares, back in the pool) or retired (backends
//     under their own name), without Route but with their servers as they are (retiring); free
//     spares and retired backends lose their servers, and reencrypt ones their TLS settings (their
//     Route's CA file may go).
//
// Retiring: once no map entry selects a backend, a request that looked the old entry up an instant
// before may still be on its way to a server (HAProxy runs the socket's commands on one thread and
// requests on the others). Taking the servers away in the same plan would answer it 503, where a
// reload lets the old worker finish it. So a backend that loses its Route keeps its servers, ready,
// for one plan; the next plan (Draining says when one is due) removes them.
//
// Desired backends that are themselves spare or retired (a Next given back as desired) match the
// applied backend of the same name.
//
// On an HAProxy that adds and deletes backends at runtime (dynamic), a new backend never takes a
// spare: it is added under its own name when its profile carries its options (no OwnLines; its
// Route may be served under another name, whose termination changed), and is NewBackend otherwise.
// A backend that loses its Route is retired Removing, and the plan after deletes it: it is not in
// Next, and Diff deletes it. So are free spares (a released one a plan after its release).
func matchBackends(applied, desired *model.Config, dynamic bool) matching {
	m := matching{rename: map[string]string{}}
	byName := nameIndex(applied.Backends, desired.Backends)
	claimed := map[claimKey]int{}
	free := map[spareKey][]int{}
	var servedBy map[string]string // Route → the applied backend that serves it; made when needed
	for i := range applied.Backends {
		a := applied.Backends[i]
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
			a := applied.Backends[i]
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
		d := desired.Backends[j]
		if d.Spare || d.Retired || d.Route == "" {
			i := byName[j]
			ok := i >= 0
			switch {
			case !ok || used[i]:
				m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name, Detail: "spare, retired or Route-less backend unknown to the applied state"})
			case len(optionDiff(applied.Backends[i], d)) > 0:
				m.reasons = append(m.reasons, optionsChanged(d.Name, optionDiff(applied.Backends[i], d)))
			default:
				used[i], served[i] = true, d
			}
			continue
		}
		ai := -1
		if i := byName[j]; i >= 0 && !used[i] {
			if a := applied.Backends[i]; !a.Retired || idleFits(a, d, appliedCA, modelCA) {
				ai = i
			}
		}
		if i, ok := claimed[claimKey{d.Route, d.Kind}]; ai < 0 && ok && !used[i] {
			ai = i
		}
		if ai >= 0 {
			a := applied.Backends[ai]
			used[ai] = true
			if a.Retired || len(optionDiff(a, d)) == 0 {
				served[ai] = d
				continue
			}
			if dynamic && a.Name == d.Name && a.RateLimit == nil && len(d.OwnLines()) == 0 && len(tlsFit(d, appliedCA, modelCA)) == 0 {
				// a retires (the default case below) and is deleted; its hand-over backend serves.
				if r, ok := m.handOver(applied.Backends, d, used, served); !ok {
					m.reasons = append(m.reasons, r)
				}
				continue
			}
			m.reasons = append(m.reasons, optionsChanged(d.Name, optionDiff(a, d)))
			continue
		}
		if dynamic {
			if i := byName[j]; i >= 0 {
				// The backend of that name, with other options, is being removed: the hand-over
				// backend serves meanwhile.
				if len(d.OwnLines()) > 0 || len(tlsFit(d, appliedCA, modelCA)) > 0 {
					m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name,
						Detail: "a backend of that name with other options is still being removed"})
				} else if r, ok := m.handOver(applied.Backends, d, used, served); !ok {
					m.reasons = append(m.reasons, r)
				}
				continue
			}
			if own := d.OwnLines(); len(own) > 0 {
				m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name,
					Detail: "options its profile cannot carry: " + strings.Join(own, ", ")})
				continue
			}
			if diffs := tlsFit(d, appliedCA, modelCA); len(diffs) > 0 {
				m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name, Detail: strings.Join(diffs, ", ")})
				continue
			}
			m.added = append(m.added, d)
			continue
		}
		if servedBy == nil {
			servedBy = make(map[string]string, len(applied.Backends))
			for i := range applied.Backends {
				if a := applied.Backends[i]; a.Route != "" {
					servedBy[a.Route] = a.Name
				}
			}
		}
		if other, ok := servedBy[d.Route]; ok {
			m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name,
				Detail: "route " + d.Route + " is served by " + other + "; a spare would rename it twice"})
			continue
		}
		if diffs := spareFit(&desired.Settings, d, appliedCA, modelCA); len(diffs) > 0 {
			m.reasons = append(m.reasons, Reason{Kind: NewBackend, Subject: d.Name, Detail: "non-default options: " + strings.Join(diffs, ", ")})
			continue
		}
		k := spareKey{d.Kind, d.Balance}
		pos := claimable(free[k], applied.Backends, d)
		if pos < 0 {
			detail := "no free spare for " + d.Name
			if len(free[k]) > 0 {
				detail = "the free spares for " + d.Name + " still hold servers being drained"
			}
			m.reasons = append(m.reasons, Reason{Kind: PoolExhausted, Subject: string(d.Kind) + "/" + d.Balance, Detail: detail})
			continue
		}
		ai = free[k][pos]
		free[k] = slices.Delete(slices.Clone(free[k]), pos, pos+1)
		used[ai] = true
		served[ai] = d
	}
	if len(m.reasons) > 0 {
		return m
	}

	m.next = make([]*model.Backend, len(applied.Backends), len(applied.Backends)+len(m.added))
	dropped := false
	for i, a := range applied.Backends {
		switch d := served[i]; {
		case d != nil:
			m.next[i] = nextOf(a, d)
			if a.Name != d.Name {
				m.rename[d.Name] = a.Name
			}
		case dynamic && (a.Removing || a.Spare && a.Route == ""):
			// Retired by the last plan (Removing), or its deletion deferred, or a free spare (an HAProxy
			// started before its version was known, or released by the last plan): delete it now
			// (Diff).
			dropped = true
		case a.Spare && a.Route == "", a.Retired:
			// A free spare or a retired backend keeps its options and has no servers: the servers
			// its Route left (kept one plan long, see below) and those HAProxy refused to delete
			// while connections were attached get removed now; with them goes the TLS setting of a
			// reencrypt one (without servers it needs no CA file, and its Route's may go).
			m.next[i] = a
			if len(a.Servers) > 0 || a.Servers == nil || (a.TLS != nil && (a.Spare || a.Kind == model.KindReencrypt)) {
				n := *a
				n.Servers = []model.Server{}
				if a.Spare || a.Kind == model.KindReencrypt {
					n.TLS = nil
				}
				m.next[i] = &n
			}
		case a.Spare:
			// A released spare, with the free spare's forwarded-headers policy. Its servers (and the
			// TLS settings they were added with) stay one plan long: see retiring.
			n := *a
			n.Route = ""
			n.ForwardedHeaders = spareTemplate(&desired.Settings, a.Kind, a.Balance, a.Name).ForwardedHeaders
			if len(n.Servers) == 0 {
				n.TLS, n.Servers = nil, []model.Server{}
			}
			m.next[i] = &n
		default:
			// A retired backend, its servers kept one plan long (see retiring); HAProxy 3.4+
			// deletes it with the next plan.
			n := *a
			// (HAProxy never deletes a backend with a stick-table: a rate-limited one stays
			// retired until a reload.)
			n.Route, n.Retired, n.Removing = "", true, dynamic && a.RateLimit == nil
			if len(n.Servers) == 0 {
				n.Servers = []model.Server{}
				if a.Kind == model.KindReencrypt {
					n.TLS = nil
				}
			}
			m.next[i] = &n
		}
	}
	if dropped {
		m.next = slices.DeleteFunc(m.next, func(b *model.Backend) bool { return b == nil })
	}
	if len(m.added) > 0 {
		m.next = append(m.next, m.added...)
		sortBackends(m.next)
	}
	return m
}

// handOver serves desired backend d, whose name HAProxy still runs with other options (HAProxy
// 3.4+), by its hand-over backend (model.HandoverBackendName) while that one is deleted: the applied
// hand-over backend when it serves d's Route with d's options, else a new one, added from d's
// profile. The maps name the hand-over backend meanwhile; once the backend of d's name is gone, d is
// added again under its own name and the hand-over backend retires. ok is false, with the reason,
// when a hand-over backend with other options is still there (a second change in between).
func (m *matching) handOver(applied []*model.Backend, d *model.Backend, used []bool, served []*model.Backend) (Reason, bool) {
	name := model.HandoverBackendName(d.Name)
	if ti := indexOf(applied, name); ti >= 0 {
		t := applied[ti]
		if used[ti] || t.Route != d.Route || t.Retired || len(optionDiff(t, d)) > 0 {
			return Reason{Kind: BackendOptionsChanged, Subject: d.Name,
				Detail: "the options changed again while " + name + " stands in for it"}, false
		}
		used[ti], served[ti] = true, d // nextOf keeps the name: Next's maps name it (rename)
		return Reason{}, true
	}
	t := *d
	t.Name = name
	m.added = append(m.added, &t)
	m.rename[d.Name] = name
	return Reason{}, true
}

// claimable returns the position in pool (free spares of d's kind and balance, lowest name first)
// of the spare that d claims, -1 when none can serve it. A free spare may still hold servers: those
// of the Route it served until the last plan (see retiring), or deletions HAProxy deferred while
// connections were attached. A spare without any comes first; a backend with TLS settings claims
// only such a one, since the server lines of its Route carry its CA file and a server of the same
// name left from the spare's last Route would keep the old one.
func claimable(pool []int, applied []*model.Backend, d *model.Backend) int {
	for pos, i := range pool {
		if len(applied[i].Servers) == 0 {
			return pos
		}
	}
	if d.TLS != nil || len(pool) == 0 {
		return -1
	}
	return 0
}

// nameIndex returns, for each desired backend, the index of the applied backend of the same name
// (-1 when there is none). Both lists are sorted by name (model.Config), so one merge walk finds them
// without hashing every name; lists that are not sorted are indexed through a map instead.
func nameIndex(applied, desired []*model.Backend) []int {
	out := make([]int, len(desired))
	sorted := func(bs []*model.Backend) bool {
		for i := 1; i < len(bs); i++ {
			if bs[i-1].Name >= bs[i].Name {
				return false
			}
		}
		return true
	}
	if !sorted(applied) || !sorted(desired) {
		byName := make(map[string]int, len(applied))
		for i := range applied {
			if _, dup := byName[applied[i].Name]; !dup {
				byName[applied[i].Name] = i
			}
		}
		for j := range desired {
			if i, ok := byName[desired[j].Name]; ok {
				out[j] = i
			} else {
				out[j] = -1
			}
		}
		return out
	}
	i := 0
	for j := range desired {
		for i < len(applied) && applied[i].Name < desired[j].Name {
			i++
		}
		if i < len(applied) && applied[i].Name == desired[j].Name {
			out[j] = i
		} else {
			out[j] = -1
		}
	}
	return out
}

// nextOf returns Next's backend for applied backend a serving desired backend d with the same
// options: a's options and name, d's Route and servers. It is a itself when nothing changes, and
// otherwise keeps a's strings and pointers where they are equal, so that later comparisons of Next
// with the applied state (render's block reuse, the next plan) find them identical at once.
func nextOf(a, d *model.Backend) *model.Backend {
	route, tls, fh := a.Route, a.TLS, a.ForwardedHeaders
	if route != d.Route {
		route = d.Route
	}
	if !equalPtr(tls, d.TLS) {
		tls = d.TLS
	}
	if fh != d.ForwardedHeaders {
		fh = d.ForwardedHeaders
	}
	spare, retired, removing := a.Spare || d.Spare, d.Retired, d.Removing
	servers := a.Servers // kept when equal: Diff then skips the backend's servers at once
	if !same(a.Servers, d.Servers) && !slices.Equal(a.Servers, d.Servers) {
		servers = keepServerIDs(a.Servers, d.Servers)
	}
	if servers == nil {
		servers = []model.Server{}
	}
	if route == a.Route && tls == a.TLS && fh == a.ForwardedHeaders && spare == a.Spare && retired == a.Retired &&
		removing == a.Removing && same(servers, a.Servers) && a.Servers != nil {
		return a
	}
	n := *a
	n.Route, n.TLS, n.ForwardedHeaders, n.Spare, n.Retired, n.Removing, n.Servers = route, tls, fh, spare, retired, removing, servers
	return &n
}
