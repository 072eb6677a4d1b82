package mapping

import (
	"slices"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

// Translator translates successive snapshots incrementally: each call of Translate returns what the
// function Translate returns for the same input and options (reflect.DeepEqual, problems included),
// but reuses the work of the previous call where the input has not changed.
//
// Memoization is by pointer identity. An object passed in (a Route, Service, EndpointSlice,
// Namespace or Secret) must never be modified afterwards: a changed object must come as a new
// pointer, as informer caches give them. A Route's validation and backend are reused when its pointer
// and every object its translation looked up (its Services, their EndpointSlices, its Secret, and the
// lookups that found nothing) are the very same pointers as in the previous call; the reused backend
// shares its memory (strings, Servers, Cookie, TLS, RateLimit, Rewrite, Allowlist) with the previous
// result. When the admitted Routes are the same admissions in the same order as in the previous call,
// the Maps, Certificates, CAFiles and Routes slices of the previous result are returned as they are,
// and Backends too when no backend changed.
//
// When only EndpointSlices changed since the previous call (see fastTranslate), the call costs little
// more than comparing the Routes list: it rebuilds the backends that looked up a changed slice, found
// through a reverse index, and returns the previous result with those backends replaced.
//
// Results therefore share memory with earlier ones and with later ones: callers must treat them as
// read-only (model.Config.Clone gives a copy to modify). The memo holds only the Routes of the latest
// input. A Translator keeps no global state and is not safe for concurrent use.
type Translator struct {
	opts Options
	ix   indexer
	rec  recorder
	gen  uint64 // numbers the calls that take the normal path; a fast call amends the latest one
	memo map[*routev1.Route]*routeMemo
	used int // memo entries used by the current call
	// rev is the reverse index of the memo: for an EndpointSlice lookup key ("ns/service"), the memo
	// entries whose vdeps or bdeps hold a lookup of it (see link).
	rev map[string]map[*routeMemo]depUse
	// routes is a copy of the Routes list of the latest input.
	routes []*routev1.Route
	// fastCalls counts the calls answered by fastTranslate (for tests).
	fastCalls int
	// attempt numbers the calls of affected, which marks each entry it lists (routeMemo.attempt).
	attempt uint64

	// The per-call state of the translation, emptied and reused by every call.
	seen     map[string]bool
	claims   *claims
	backends []*model.Backend

	// admitted are the memoized admissions admitted by the current call, in admission order.
	admitted []*admission
	prev     *previous
}

// routeMemo is the memoized per-Route work of one Route pointer.
type routeMemo struct {
	gen uint64 // the last call that used the entry
	key string // "ns/name"

	validated bool
	adm       *admission // never modified once memoized
	rej       *rejection
	vdeps     []dep  // lookups of validate
	vgen      uint64 // the last call that verified vdeps

	built   bool           // backend, bwarn and bdeps are those of adm
	backend *model.Backend // handed out in results: never modified, a new one per build
	bwarn   []*rejection
	bdeps   []dep  // lookups of buildBackend
	bgen    uint64 // the last call that verified bdeps

	attempt uint64 // the last affected call that listed the entry
}

// previous is what the previous call returned and what it depended on.
type previous struct {
	routes   []*routev1.Route // the Routes of this shard, in input order
	sorted   []*routev1.Route // the same in admission order
	admitted []*admission     // memoized admissions admitted, in admission order
	order    []int            // cfg.Backends[i] is the backend of admitted[order[i]]
	cfg      *model.Config    // nil before the first call
	problems []Problem        // a copy of the problems returned with cfg
}

// NewTranslator returns a Translator for the given options (assumed valid, see Options.Validate);
// they stay fixed for its lifetime.
func NewTranslator(opts Options) *Translator {
	opts.AllowedDomains = slices.Clone(opts.AllowedDomains)
	opts.DeniedDomains = slices.Clone(opts.DeniedDomains)
	opts.RouterAddresses = slices.Clone(opts.RouterAddresses)
	return &Translator{opts: opts, memo: map[*routev1.Route]*routeMemo{}, rev: map[string]map[*routeMemo]depUse{}, prev: &previous{}}
}

// Translate turns a snapshot into the desired HAProxy state and the per-Route problems, as the
// function Translate does with the Translator's options, reusing the previous call's results where
// the objects are the same pointers. The result must not be modified (see Translator).
func (tr *Translator) Translate(in Input) (*model.Config, []Problem) {
	idx := tr.ix.update(in)
	if cfg, problems, ok := tr.fastTranslate(in, idx); ok {
		tr.fastCalls++
		return cfg, problems
	}
	tr.gen++
	tr.rec = recorder{idx: idx}
	tr.admitted = tr.admitted[:0]
	tr.used = 0
	t := newTranslator(tr.opts, idx, tr)
	cfg, problems := t.run(tr.sortedRoutes(t, in.Routes))
	tr.backends = t.backends
	tr.sweep()
	clear(tr.routes) // no stale pointer keeps a removed Route alive
	tr.routes = append(tr.routes[:0], in.Routes...)
	tr.prev.problems = slices.Clone(problems) // the caller may append to (or reorder) its own
	return cfg, problems
}

// newTranslator returns the state of one translation; inc is nil for the function Translate.
func newTranslator(opts Options, idx *index, inc *Translator) *translator {
	t := &translator{
		opts: opts,
		idx:  idx,
		objs: idx,
		inc:  inc,
		maps: newMapBuilder(opts.ForwardedHeaders),

		certOwner: map[string]string{},
	}
	if inc != nil {
		t.objs = &inc.rec
	}
	return t
}

// sortedRoutes returns t.selectRoutes(all), taking the previous call's order when this shard's
// Routes are the same pointers in the same order (sorting the same sequence gives the same result).
func (tr *Translator) sortedRoutes(t *translator, all []*routev1.Route) []*routev1.Route {
	routes := t.shardRoutes(all)
	if tr.prev.cfg != nil && slices.Equal(tr.prev.routes, routes) {
		return tr.prev.sorted
	}
	sorted := slices.Clone(routes)
	sortRoutes(sorted)
	tr.prev.routes, tr.prev.sorted = routes, sorted
	return sorted
}

// scratch returns the per-call state of a translation of n Routes, empty, reusing the memory of the
// previous call (nothing of it outlives the call).
func (tr *Translator) scratch(n int) (map[string]bool, *claims, []*model.Backend) {
	if tr.claims == nil {
		tr.seen = make(map[string]bool, n)
		tr.claims = newClaims(!tr.opts.DisableNamespaceOwnershipCheck, n)
	}
	clear(tr.seen)
	tr.claims.reset()
	clear(tr.backends) // no stale pointer keeps an old backend alive
	tr.backends = slices.Grow(tr.backends[:0], n)
	return tr.seen, tr.claims, tr.backends
}

// memoEntry returns the memo entry of a Route for this call (nil for the function Translate).
func (t *translator) memoEntry(r *routev1.Route) *routeMemo {
	if t.inc == nil {
		return nil
	}
	m := t.inc.memo[r]
	if m == nil {
		m = &routeMemo{key: r.Namespace + "/" + r.Name}
		t.inc.memo[r] = m
	}
	if m.gen != t.inc.gen {
		m.gen = t.inc.gen
		t.inc.used++
	}
	return m
}

// validated is validate(r), taken from the memo when its lookups return the same objects.
func (t *translator) validated(r *routev1.Route, m *routeMemo) (*admission, *rejection) {
	if m == nil {
		return t.validate(r)
	}
	if m.validated && t.inc.hold(m.vdeps, m.vgen) {
		m.vgen = t.inc.gen
		return m.adm, m.rej
	}
	t.inc.rec.take()
	a, rej := t.validate(r)
	vdeps := t.inc.rec.take()
	t.inc.link(m, useValidate, m.vdeps, vdeps)
	t.inc.link(m, useBackend, m.bdeps, nil) // the backend goes with the old validation
	*m = routeMemo{gen: m.gen, key: m.key, validated: true, adm: a, rej: rej, vdeps: vdeps, vgen: t.inc.gen}
	return a, rej
}

// built is buildBackend(a), taken from the memo when a is the memoized admission and the lookups
// return the same objects. The result is shared with the memo and earlier results: it must not be
// modified.
func (t *translator) built(a *admission, m *routeMemo) (*model.Backend, []*rejection) {
	if m == nil {
		t.rebuilt++
		b, warnings := t.buildBackend(a)
		return &b, warnings
	}
	if m.built && m.adm == a && t.inc.hold(m.bdeps, m.bgen) {
		m.bgen = t.inc.gen
		return m.backend, m.bwarn
	}
	t.rebuilt++
	t.inc.rec.take()
	b, warnings := t.buildBackend(a)
	bdeps := t.inc.rec.take()
	t.inc.link(m, useBackend, m.bdeps, bdeps)
	m.built, m.backend, m.bwarn, m.bdeps, m.bgen = true, &b, warnings, bdeps, t.inc.gen
	return m.backend, warnings
}

// hold reports whether every recorded lookup returns the same objects in this call's index. A lookup
// verified in the previous call (verified) holds unless the indexer rebuilt or changed its key (the
// previous call as amended by the fast calls after it, whose changes it leaves no lookup depending on:
// see translator_fast.go).
func (tr *Translator) hold(deps []dep, verified uint64) bool {
	last := verified+1 == tr.gen
	for i := range deps {
		if last && tr.ix.known(&deps[i]) {
			continue
		}
		if !deps[i].holds(tr.ix.x) {
			return false
		}
	}
	return true
}

// recordAdmission notes the memoized admission of an admitted Route.
func (t *translator) recordAdmission(a *admission) {
	if t.inc != nil {
		t.inc.admitted = append(t.inc.admitted, a)
	}
}

// reusable returns the previous call when this call admitted the same memoized admissions in the same
// order. Maps, certificates (which Route owns an SNI name goes by admission order), CA files and Route
// records are functions of that sequence alone (the options being fixed), and so is the backend order.
func (t *translator) reusable() *previous {
	if t.inc == nil {
		return nil
	}
	prev := t.inc.prev
	if prev.cfg == nil || !slices.Equal(prev.admitted, t.inc.admitted) {
		return nil
	}
	return prev
}

// remember keeps this call's result for the next call.
func (t *translator) remember(cfg *model.Config, order []int) {
	if t.inc == nil {
		return
	}
	tr, prev := t.inc, t.inc.prev
	if !slices.Equal(prev.admitted, tr.admitted) {
		prev.admitted, tr.admitted = tr.admitted, prev.admitted[:0]
	}
	prev.order, prev.cfg = order, cfg
}

// sweep drops the memo entries of Routes this call did not translate.
func (tr *Translator) sweep() {
	if tr.used == len(tr.memo) {
		return
	}
	for r, m := range tr.memo {
		if m.gen != tr.gen {
			tr.link(m, useValidate, m.vdeps, nil)
			tr.link(m, useBackend, m.bdeps, nil)
			delete(tr.memo, r)
		}
	}
}
