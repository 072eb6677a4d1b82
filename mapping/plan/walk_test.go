package plan_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
)

// The random walk: a world of Routes, Services and endpoints changes one thing per step; every step
// is translated and planned from the previous Next. Runtime plans must simulate to Next and serve
// what Translate says; each step kind must give its kind of outcome.

const (
	walkSteps    = 400
	walkPoolSize = 2
)

var walkNamespaces = []string{"ns-a", "ns-b"}

const walkServices = 4 // svc-0 … svc-3 in every namespace

type walkRef struct {
	svc    string
	weight int32
}

type walkRoute struct {
	ns, name, host, path string
	term                 routev1.TLSTerminationType
	policy               routev1.InsecureEdgeTerminationPolicyType
	refs                 []walkRef
	balance              string // annotation; "" for none
	cert                 int    // 0 none, 1 example, 2 other (edge and reencrypt)
	age                  int
	// headers, when set, gives the Route one request Set action (a literal value, or a dynamic one)
	// and one response Delete action.
	headers *walkHeaders
}

type walkHeaders struct {
	value   string
	dynamic bool
}

// headerOpt returns the Route's header actions.
func (r *walkRoute) headerOpt() routeOpt {
	value := r.headers.value
	if r.headers.dynamic {
		value = "%[req.hdr(Host),lower]"
	}
	return withHeaders([]string{"X-Walk=" + value}, []string{"Server"})
}

// headerRulesFit reports whether backend b has the header rules r needs (the literal value aside,
// which the map carries).
func (r *walkRoute) headerRulesFit(b *model.Backend) bool {
	if r.headers == nil {
		return len(b.RequestHeaders) == 0 && len(b.ResponseHeaders) == 0
	}
	return len(b.RequestHeaders) == 1 && len(b.ResponseHeaders) == 1 && (b.RequestHeaders[0].Key == "") == r.headers.dynamic
}

func (r *walkRoute) key() string { return r.ns + "/" + r.name }

func (r *walkRoute) kind() model.BackendKind {
	switch r.term {
	case routev1.TLSTerminationEdge:
		return model.KindEdge
	case routev1.TLSTerminationReencrypt:
		return model.KindReencrypt
	case routev1.TLSTerminationPassthrough:
		return model.KindPassthrough
	}
	return model.KindHTTP
}

// balanceOf returns the balance Translate gives the Route.
func (r *walkRoute) balanceOf(s *model.Settings) string {
	switch {
	case r.balance != "":
		return r.balance
	case len(r.refs) > 1:
		return "roundrobin"
	case r.term == routev1.TLSTerminationPassthrough:
		return s.TCPBalanceScheme
	}
	return s.LoadBalanceAlgorithm
}

type walkWorld struct {
	rng       *rand.Rand
	certs     testCerts
	opts      mapping.Options
	routes    map[string]*walkRoute
	deleted   []*walkRoute // for re-adding a Route under a retired backend's name
	endpoints map[string][]string
	id        int
}

func newWalkWorld(seed int64, certs testCerts) *walkWorld {
	w := &walkWorld{
		rng:       rand.New(rand.NewSource(seed)),
		certs:     certs,
		opts:      testOptions(walkPoolSize),
		routes:    map[string]*walkRoute{},
		endpoints: map[string][]string{},
	}
	for _, ns := range walkNamespaces {
		for i := 0; i < walkServices; i++ {
			svc := fmt.Sprintf("%s/svc-%d", ns, i)
			for j := 0; j < 1+i%3; j++ {
				w.endpoints[svc] = append(w.endpoints[svc], w.newAddr())
			}
		}
	}
	return w
}

func (w *walkWorld) next() int { w.id++; return w.id }

func (w *walkWorld) newAddr() string {
	n := w.next()
	return fmt.Sprintf("10.%d.%d.%d", 1+n>>16&0x7f, n>>8&0xff, n&0xff)
}

// sortedRoutes returns the Routes in key order, optionally filtered.
func (w *walkWorld) sortedRoutes(keep func(*walkRoute) bool) []*walkRoute {
	var out []*walkRoute
	for _, r := range w.routes {
		if keep == nil || keep(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

func (w *walkWorld) pick(keep func(*walkRoute) bool) *walkRoute {
	rs := w.sortedRoutes(keep)
	if len(rs) == 0 {
		return nil
	}
	return rs[w.rng.Intn(len(rs))]
}

// pickService returns a random Service name not among exclude.
func (w *walkWorld) pickService(exclude []walkRef) string {
	for {
		svc := fmt.Sprintf("svc-%d", w.rng.Intn(walkServices))
		used := false
		for _, r := range exclude {
			used = used || r.svc == svc
		}
		if !used {
			return svc
		}
	}
}

func (w *walkWorld) policyFor(term routev1.TLSTerminationType) routev1.InsecureEdgeTerminationPolicyType {
	switch term {
	case "":
		return ""
	case routev1.TLSTerminationPassthrough:
		return []routev1.InsecureEdgeTerminationPolicyType{"", routev1.InsecureEdgeTerminationPolicyRedirect}[w.rng.Intn(2)]
	}
	return []routev1.InsecureEdgeTerminationPolicyType{"", routev1.InsecureEdgeTerminationPolicyNone,
		routev1.InsecureEdgeTerminationPolicyAllow, routev1.InsecureEdgeTerminationPolicyRedirect}[w.rng.Intn(4)]
}

// newRoute returns a Route with default options (one Service, sometimes two) and a fresh host; now and
// then it shares the host of a terminated or plain Route of its namespace with its own path, or takes
// the name of a deleted Route.
func (w *walkWorld) newRoute() *walkRoute {
	terms := []routev1.TLSTerminationType{"", routev1.TLSTerminationEdge, routev1.TLSTerminationReencrypt, routev1.TLSTerminationPassthrough}
	id := w.next()
	r := &walkRoute{ns: walkNamespaces[w.rng.Intn(len(walkNamespaces))], name: fmt.Sprintf("r%d", id), term: terms[w.rng.Intn(len(terms))], age: id}
	if len(w.deleted) > 0 && w.rng.Intn(4) == 0 {
		old := w.deleted[w.rng.Intn(len(w.deleted))]
		if _, live := w.routes[old.key()]; !live {
			r.ns, r.name = old.ns, old.name
		}
	}
	r.host = fmt.Sprintf("h%d.%s.example.com", id, r.ns)
	if r.term != routev1.TLSTerminationPassthrough && w.rng.Intn(4) == 0 {
		if sib := w.pick(func(o *walkRoute) bool { return o.ns == r.ns && o.term != routev1.TLSTerminationPassthrough }); sib != nil {
			r.host, r.path = sib.host, fmt.Sprintf("/p%d", id)
		}
	}
	r.policy = w.policyFor(r.term)
	r.refs = []walkRef{{svc: w.pickService(nil), weight: 100}}
	if w.rng.Intn(5) == 0 {
		r.refs = append(r.refs, walkRef{svc: w.pickService(r.refs), weight: int32(w.rng.Intn(257))})
	}
	if (r.term == routev1.TLSTerminationEdge || r.term == routev1.TLSTerminationReencrypt) && w.rng.Intn(2) == 0 {
		r.cert = 1 + w.rng.Intn(2)
	}
	return r
}

// input builds the Translate input of the world.
func (w *walkWorld) input() mapping.Input {
	var in mapping.Input
	for _, r := range w.sortedRoutes(nil) {
		opts := []routeOpt{withService(r.refs[0].svc), withPath(r.path)}
		if r.refs[0].weight != 100 {
			weight := r.refs[0].weight
			opts = append(opts, func(rt *routev1.Route) { rt.Spec.To.Weight = &weight })
		}
		for _, ref := range r.refs[1:] {
			opts = append(opts, withAlternate(ref.svc, ref.weight))
		}
		if r.term != "" {
			opts = append(opts, withTLS(r.term, r.policy))
		}
		switch r.cert {
		case 1:
			opts = append(opts, withCert(w.certs.example))
		case 2:
			opts = append(opts, withCert(w.certs.other))
		}
		if r.term == routev1.TLSTerminationReencrypt {
			opts = append(opts, withDestCA(w.certs.ca))
		}
		if r.balance != "" {
			opts = append(opts, withAnnotation(mapping.AnnotationBalance, r.balance))
		}
		if r.headers != nil {
			opts = append(opts, r.headerOpt())
		}
		in.Routes = append(in.Routes, newRoute(r.ns, r.name, r.host, r.age, opts...))
	}
	var svcs []string
	for svc := range w.endpoints {
		svcs = append(svcs, svc)
	}
	sort.Strings(svcs)
	for _, key := range svcs {
		ns, name, _ := strings.Cut(key, "/")
		in.Services = append(in.Services, newService(ns, name))
		in.EndpointSlices = append(in.EndpointSlices, newSlice(ns, name, w.endpoints[key]...))
	}
	return in
}

// expectation is the outcome a step must have: runtime (""), or a reload for one reason kind.
type expectation plan.ReasonKind

const expectRuntime expectation = ""

// step changes the world once and returns its kind and expected outcome, given the applied state.
func (w *walkWorld) step(applied *model.Config) (string, expectation) {
	s := &applied.Settings
	for {
		switch n := w.rng.Intn(100); {
		case n < 18: // add a Route with default options
			r := w.newRoute()
			w.routes[r.key()] = r
			switch {
			case idleOwn(applied, r, s):
				return "route add (own idle backend)", expectRuntime
			case freeSpares(applied, r.kind(), r.balanceOf(s)) == 0:
				return "route add (pool empty)", expectation(plan.PoolExhausted)
			}
			return "route add", expectRuntime
		case n < 20: // add a Route with a balance annotation
			r := w.newRoute()
			r.balance = "leastconn"
			w.routes[r.key()] = r
			if idleOwn(applied, r, s) {
				return "route add (annotated, own idle backend)", expectRuntime
			}
			return "route add (annotated)", expectation(plan.NewBackend)
		case n < 30:
			r := w.pick(nil)
			if r == nil {
				continue
			}
			delete(w.routes, r.key())
			w.deleted = append(w.deleted, r)
			return "route delete", expectRuntime
		case n < 33:
			r := w.pick(nil)
			if r == nil {
				continue
			}
			r.host = fmt.Sprintf("h%d.%s.example.com", w.next(), r.ns)
			return "host change", expectRuntime
		case n < 35:
			// Blue/green: two Routes of one namespace, termination and path swap their hosts; the map entries
			// keep their keys and change value.
			a := w.pick(nil)
			if a == nil {
				continue
			}
			b := w.pick(func(o *walkRoute) bool {
				return o != a && o.ns == a.ns && o.term == a.term && o.path == a.path && o.host != a.host
			})
			if b == nil {
				continue
			}
			a.host, b.host = b.host, a.host
			return "host swap", expectRuntime
		case n < 40:
			r := w.pick(func(r *walkRoute) bool { return r.term != routev1.TLSTerminationPassthrough })
			if r == nil {
				continue
			}
			r.path = []string{"", "/", fmt.Sprintf("/q%d", w.next()), fmt.Sprintf("/q%d/", w.next())}[w.rng.Intn(4)]
			if (r.path == "" || r.path == "/") && w.pick(func(o *walkRoute) bool { return o != r && o.host == r.host }) != nil {
				r.path = fmt.Sprintf("/q%d", w.next()) // the root of a shared host may be taken
			}
			return "path change", expectRuntime
		case n < 46:
			r := w.pick(func(r *walkRoute) bool { return r.term != "" })
			if r == nil {
				continue
			}
			old := r.policy
			for r.policy == old {
				r.policy = w.policyFor(r.term)
			}
			return "insecure policy flip", expectRuntime
		case n < 50:
			r := w.pick(func(r *walkRoute) bool { return len(r.refs) > 1 })
			if r == nil {
				continue
			}
			r.refs[w.rng.Intn(len(r.refs))].weight = int32(w.rng.Intn(257))
			return "weights", expectRuntime
		case n < 54:
			r := w.pick(nil)
			if r == nil {
				continue
			}
			before := r.balanceOf(s)
			if len(r.refs) > 1 && (len(r.refs) == 4 || w.rng.Intn(2) == 0) {
				r.refs = r.refs[:len(r.refs)-1]
			} else {
				r.refs = append(r.refs, walkRef{svc: w.pickService(r.refs), weight: int32(1 + w.rng.Intn(256))})
			}
			if r.balanceOf(s) != before {
				// A served Route never moves to a spare: its own backend is reloaded.
				return "alternate backends (balance changes)", expectation(plan.BackendOptionsChanged)
			}
			return "alternate backends", expectRuntime
		case n < 68:
			svc := fmt.Sprintf("%s/svc-%d", walkNamespaces[w.rng.Intn(len(walkNamespaces))], w.rng.Intn(walkServices))
			eps := w.endpoints[svc]
			if len(eps) > 0 && (len(eps) >= 6 || w.rng.Intn(2) == 0) {
				i := w.rng.Intn(len(eps))
				w.endpoints[svc] = append(eps[:i:i], eps[i+1:]...)
				return "scale down", expectRuntime
			}
			w.endpoints[svc] = append(eps[:len(eps):len(eps)], w.newAddr())
			return "scale up", expectRuntime
		case n < 80:
			svc := fmt.Sprintf("%s/svc-%d", walkNamespaces[w.rng.Intn(len(walkNamespaces))], w.rng.Intn(walkServices))
			eps := w.endpoints[svc]
			if len(eps) == 0 {
				continue
			}
			eps = append([]string{}, eps...)
			eps[w.rng.Intn(len(eps))] = w.newAddr()
			w.endpoints[svc] = eps
			return "pod IP change", expectRuntime
		case n < 86:
			r := w.pick(func(r *walkRoute) bool {
				return r.term == routev1.TLSTerminationEdge || r.term == routev1.TLSTerminationReencrypt
			})
			if r == nil {
				continue
			}
			r.cert = []int{1, 2, 0}[(r.cert+w.rng.Intn(2))%3]
			return "certificate rotation", expectRuntime
		case n < 91:
			// A new termination: another backend kind and name. A served Route does not go through a
			// spare (it would be renamed twice): a reload, unless its own backend of that kind is
			// idle from an earlier termination and fits.
			r := w.pick(func(r *walkRoute) bool { return r.term != routev1.TLSTerminationPassthrough })
			if r == nil {
				continue
			}
			terms := []routev1.TLSTerminationType{"", routev1.TLSTerminationEdge, routev1.TLSTerminationReencrypt}
			old := r.term
			for r.term == old {
				r.term = terms[w.rng.Intn(len(terms))]
			}
			r.policy = w.policyFor(r.term)
			if r.term == "" {
				r.cert = 0
			}
			if idleOwn(applied, r, s) {
				return "termination change (own idle backend)", expectRuntime
			}
			return "termination change", expectation(plan.NewBackend)
		case n < 94:
			r := w.pick(nil)
			if r == nil {
				continue
			}
			before := r.balanceOf(s)
			if r.balance == "" {
				r.balance = "leastconn"
			} else {
				r.balance = ""
			}
			if r.balanceOf(s) == before {
				return "balance annotation (same balance)", expectRuntime
			}
			return "balance annotation", expectation(plan.BackendOptionsChanged)
		case n < 95:
			if w.opts.CheckInterval == "5000ms" {
				w.opts.CheckInterval = "4s"
			} else {
				w.opts.CheckInterval = "5000ms"
			}
			return "settings", expectation(plan.GlobalChanged)
		case n < 99:
			return w.headerStep()
		default:
			return "no change", expectRuntime
		}
	}
}

// headerStep changes the header actions of a Route that is not passthrough: a new literal value is a
// map entry; a first action, a dynamic value and the actions removed are HeaderActionsChanged.
func (w *walkWorld) headerStep() (string, expectation) {
	r := w.pick(func(r *walkRoute) bool { return r.headers != nil })
	if r == nil || w.rng.Intn(4) == 0 {
		r = w.pick(func(r *walkRoute) bool { return r.term != routev1.TLSTerminationPassthrough })
	}
	switch {
	case r == nil:
		return "no change", expectRuntime
	case r.headers == nil:
		r.headers = &walkHeaders{value: fmt.Sprintf("v%d", w.next())}
		return "header actions added", expectation(plan.HeaderActionsChanged)
	case r.headers.dynamic:
		r.headers.dynamic = false
		return "header value made literal", expectation(plan.HeaderActionsChanged)
	}
	switch n := w.rng.Intn(5); {
	case n < 3:
		r.headers.value = fmt.Sprintf("v%d %%%% 'x'", w.next())
		return "header value", expectRuntime
	case n < 4:
		r.headers.dynamic = true
		return "header value made dynamic", expectation(plan.HeaderActionsChanged)
	}
	r.headers = nil
	return "header actions removed", expectation(plan.HeaderActionsChanged)
}

// idleOwn reports whether the applied state holds r's own backend of its kind idle (retired) with the
// balance and header rules r now has, which serves r again without a reload (the walk's other options
// are defaults).
func idleOwn(applied *model.Config, r *walkRoute, s *model.Settings) bool {
	b := applied.Backend(model.BackendName(r.kind(), r.ns, r.name))
	return b != nil && b.Retired && b.Balance == r.balanceOf(s) && r.headerRulesFit(b)
}

// freeSpares counts the unclaimed spares of a kind and balance.
func freeSpares(c *model.Config, k model.BackendKind, balance string) int {
	n := 0
	for _, b := range c.Backends {
		if b.Spare && b.Route == "" && b.Kind == k && b.Balance == balance {
			n++
		}
	}
	return n
}

func TestRandomWalk(t *testing.T) {
	certs := loadCerts(t)
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			walk(t, seed, certs)
		})
	}
}

func walk(t *testing.T, seed int64, certs testCerts) {
	w := newWalkWorld(seed, certs)
	d := translate(t, w.input(), w.opts)
	applied := plan.Compute(nil, d).Next
	outcomes := map[string]int{}
	kinds := map[string]int{}
	runtime, structural, ops := 0, 0, 0
	opKinds := map[string]int{}
	for i := 0; i < walkSteps; i++ {
		kind, want := w.step(applied)
		kinds[kind]++
		d := translate(t, w.input(), w.opts)
		p := plan.Compute(applied, d)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d step %d (%s): %s", seed, i, kind, fmt.Sprintf(format, args...))
		}
		got := expectRuntime
		if p.NeedsReload() {
			ks := reasonKinds(p)
			if len(ks) != 1 {
				fail("reasons %v", p.Structural)
			}
			got = expectation(ks[0])
		}
		if got != want {
			fail("outcome %q, want %q (reasons %v)", got, want, p.Structural)
		}
		if err := p.Next.Validate(); err != nil {
			fail("Next does not validate: %v", err)
		}
		if _, err := renderNext(p.Next, certs); err != nil {
			fail("render: %v", err)
		}
		if p.NeedsReload() {
			structural++
			if p.Ops != nil || !reflect.DeepEqual(p.Next, plan.WithPool(d)) {
				fail("a reload plan must have no ops and Next = WithPool(desired)")
			}
			if again := plan.Compute(p.Next, d); again.NeedsReload() || len(again.Ops) > 0 {
				fail("planning again after the reload: %v, %d ops", again.Structural, len(again.Ops))
			}
		} else {
			runtime++
			ops += len(p.Ops)
			for _, op := range p.Ops {
				opKinds[strings.TrimPrefix(fmt.Sprintf("%T", op), "plan.")]++
			}
			checkRuntimePlan(t, applied, d, p)
		}
		outcomes[string(got)]++
		applied = p.Next
	}
	t.Logf("seed %d: %d steps: %d runtime (%d ops), %d structural; outcomes %v", seed, walkSteps, runtime, ops, structural, outcomes)
	t.Logf("seed %d: step kinds %v", seed, kinds)
	t.Logf("seed %d: ops %v", seed, opKinds)
	for _, k := range []string{"AddServer", "DelServer", "SetServerWeight", "AddMapEntry", "SetMapEntry",
		"DelMapEntry", "SetCertificate", "AddCrtListEntry", "DelCrtListEntry", "DelCertificate", "SetCAFile", "DelCAFile"} {
		if opKinds[k] == 0 {
			t.Errorf("the walk never produced a %s op", k)
		}
	}
	for _, k := range []plan.ReasonKind{plan.PoolExhausted, plan.BackendOptionsChanged, plan.NewBackend, plan.HeaderActionsChanged} {
		if outcomes[string(k)] == 0 {
			t.Errorf("the walk never produced %s: it does not cover what it should", k)
		}
	}
	if runtime < walkSteps/2 {
		t.Errorf("only %d runtime steps of %d", runtime, walkSteps)
	}
}

// renderNext renders a config for the walk.
func renderNext(cfg *model.Config, certs testCerts) ([]render.File, error) {
	return render.Render(cfg, render.Options{Dir: "/var/lib/haproxy", DefaultCertificatePEM: defaultCertPEM(certs)})
}
