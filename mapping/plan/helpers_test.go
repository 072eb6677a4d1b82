package plan_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/plan/plantest"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/mapping/routetest"
)

// Builders of Translate inputs for the tests of this package.

type routeOpt = routetest.Opt

// The builders of mapping/routetest, under this package's short names.
var (
	newRoute       = routetest.Route
	withPath       = routetest.Path
	withTLS        = routetest.TLS
	withDestCA     = routetest.DestCA
	withAnnotation = routetest.Annotation
	newService     = routetest.Service
	newSlice       = routetest.PodSlice
)

func withService(name string) routeOpt { return routetest.To(name, nil) }

func withAlternate(name string, weight int32) routeOpt { return routetest.Alternate(name, &weight) }

func withCert(c keyPair) routeOpt { return routetest.Cert(c.cert, c.key) }

// keyPair is a serving certificate and its key (PEM).
type keyPair struct{ cert, key string }

// testCerts are the fixed certificates of mapping/testdata/certs.
type testCerts struct {
	example, other keyPair
	ca             string
}

func loadCerts(t testing.TB) testCerts {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "certs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return testCerts{
		example: keyPair{read("example.crt"), read("example.key")},
		other:   keyPair{read("other.crt"), read("other.key")},
		ca:      read("ca.crt"),
	}
}

// defaultCertPEM is the router's default certificate for rendering.
func defaultCertPEM(c testCerts) []byte { return []byte(c.example.cert + c.example.key) }

// testOptions returns the defaults with loopback endpoints allowed and the given pool size.
func testOptions(pool int) mapping.Options {
	o := mapping.DefaultOptions()
	o.AllowLoopbackEndpoints = true
	o.SparePoolSize = pool
	return o
}

// translate runs Translate and fails the test on an invalid model or on rejected Routes.
func translate(t testing.TB, in mapping.Input, opts mapping.Options) *model.Config {
	t.Helper()
	cfg, problems := mapping.Translate(in, opts)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Translate produced an invalid model: %v", err)
	}
	for _, p := range problems {
		if !p.Warning {
			t.Fatalf("unexpected problem: %v", p)
		}
	}
	return cfg
}

// renderCheck renders cfg with the default template and returns the files.
func renderCheck(t testing.TB, cfg *model.Config, dir string, c testCerts) []render.File {
	t.Helper()
	files, err := render.Render(cfg, render.Options{Dir: dir, DefaultCertificatePEM: defaultCertPEM(c)})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return files
}

// checkSimulates checks that p is a runtime plan whose Next validates and whose ops, simulated from
// applied, give Next's runtime view.
func checkSimulates(t testing.TB, applied *model.Config, p plan.Plan) {
	t.Helper()
	if p.NeedsReload() {
		t.Fatalf("want a runtime plan, got %v", p.Structural)
	}
	if err := p.Next.Validate(); err != nil {
		t.Fatalf("Next does not validate: %v", err)
	}
	sim, err := plantest.Simulate(applied, p.Ops)
	if err != nil {
		t.Fatalf("Simulate: %v\nops:\n%s", err, opsText(p.Ops))
	}
	if got, want := plantest.RuntimeView(sim), plantest.RuntimeView(p.Next); !reflect.DeepEqual(got, want) {
		t.Fatalf("Simulate(applied, ops) differs from Next:\n%s\nops:\n%s", viewDiff(got, want), opsText(p.Ops))
	}
}

// checkRuntimePlan checks a runtime plan from applied: Next validates, Simulate(applied, Ops) gives
// Next's runtime view, Next serves what desired says, and planning again from Next changes nothing.
func checkRuntimePlan(t testing.TB, applied, desired *model.Config, p plan.Plan) {
	t.Helper()
	checkSimulates(t, applied, p)
	checkServes(t, applied, p.Next, desired)
	checkOrder(t, p.Ops, p.Next)
	again := plan.Compute(p.Next, desired)
	if again.NeedsReload() {
		t.Fatalf("planning again from Next: reasons %v", again.Structural)
	}
	if len(plan.Draining(p.Next)) == 0 {
		if len(again.Ops) > 0 {
			t.Fatalf("planning again from Next: ops:\n%s", opsText(again.Ops))
		}
		return
	}
	// The servers kept on backends that lost their Route go at the next plan, and nothing else.
	for _, op := range again.Ops {
		switch o := op.(type) {
		case plan.DelServer, plan.DelCAFile:
		case plan.SetServerState:
			if o.State != model.StateMaint {
				t.Fatalf("planning again from Next with draining servers: %v", op)
			}
		default:
			t.Fatalf("planning again from Next with draining servers: %v; ops:\n%s", op, opsText(again.Ops))
		}
	}
	if n := plan.Draining(again.Next); len(n) != 0 {
		t.Fatalf("backends %v still draining after the second plan", n)
	}
	if third := plan.Compute(again.Next, desired); third.NeedsReload() || len(third.Ops) > 0 {
		t.Fatalf("planning a third time: reasons %v, ops:\n%s", third.Structural, opsText(third.Ops))
	}
}

// checkServes checks that next serves what desired describes: each desired Route's backend is served
// by the backend next's RouteInfo names, with the same servers, and the maps are desired's with
// backend names replaced accordingly. No other backend of next has a Route, and only those that
// served one in applied (retiring, kept one plan long) have servers.
func checkServes(t testing.TB, applied, next, desired *model.Config) {
	t.Helper()
	if len(next.Routes) != len(desired.Routes) {
		t.Fatalf("next has %d routes, desired %d", len(next.Routes), len(desired.Routes))
	}
	rename := map[string]string{}
	serving := map[string]bool{}
	for i, dr := range desired.Routes {
		nr := next.Routes[i]
		nr.Backend = dr.Backend
		if nr != dr {
			t.Fatalf("route %d: next %+v, desired %+v", i, next.Routes[i], dr)
		}
		rename[dr.Backend] = next.Routes[i].Backend
		serving[next.Routes[i].Backend] = true
		db, nb := desired.Backend(dr.Backend), next.Backend(next.Routes[i].Backend)
		if db == nil || nb == nil {
			t.Fatalf("route %s/%s: backend missing (desired %v, next %v)", dr.Namespace, dr.Name, db != nil, nb != nil)
		}
		if !reflect.DeepEqual(plantest.RuntimeView(&model.Config{Backends: []*model.Backend{{Servers: db.Servers}}}),
			plantest.RuntimeView(&model.Config{Backends: []*model.Backend{{Servers: nb.Servers}}})) {
			t.Fatalf("route %s/%s: %s serves %v, desired %s %v", dr.Namespace, dr.Name, nb.Name, nb.Servers, db.Name, db.Servers)
		}
		if nb.Route != db.Route || nb.Retired || nb.Balance != db.Balance || !reflect.DeepEqual(nb.TLS, db.TLS) {
			t.Fatalf("route %s/%s: backend %s is %+v, desired %+v", dr.Namespace, dr.Name, nb.Name, *nb, *db)
		}
	}
	for _, b := range next.Backends {
		retiring := false
		if a := applied.Backend(b.Name); a != nil && a.Route != "" {
			retiring = reflect.DeepEqual(a.Servers, b.Servers)
		}
		if !serving[b.Name] && (b.Route != "" || (len(b.Servers) > 0 && !retiring)) {
			t.Fatalf("backend %s serves no Route but has Route %q and %d servers", b.Name, b.Route, len(b.Servers))
		}
	}
	want := make([]model.MapFile, len(desired.Maps))
	for i, m := range desired.Maps {
		entries := make([]model.MapEntry, len(m.Entries))
		for j, e := range m.Entries {
			if v, ok := rename[e.Value]; ok {
				e.Value = v
			}
			if k, ok := rename[e.Key]; ok {
				e.Key = k
			}
			entries[j] = e
		}
		sort.Slice(entries, func(a, b int) bool { return entries[a].Key < entries[b].Key })
		want[i] = model.MapFile{Name: m.Name, Entries: entries}
	}
	if !reflect.DeepEqual(plantest.RuntimeView(&model.Config{Maps: next.Maps}), plantest.RuntimeView(&model.Config{Maps: want})) {
		t.Fatalf("next's maps are not desired's under the served names:\nnext %v\nwant %v", next.Maps, want)
	}
	// CA files: desired's, and those the servers of a retiring backend still verify with.
	wantCAs := map[string]bool{}
	for _, c := range desired.CAFiles {
		wantCAs[c.Name] = true
	}
	for _, b := range next.Backends {
		if !serving[b.Name] && b.TLS != nil && len(b.Servers) > 0 {
			wantCAs[b.TLS.CAFile] = true
		}
	}
	gotCAs := map[string]bool{}
	for _, c := range next.CAFiles {
		gotCAs[c.Name] = true
	}
	if !reflect.DeepEqual(next.Certificates, desired.Certificates) || !reflect.DeepEqual(gotCAs, wantCAs) {
		t.Fatalf("next's certificates or CA files differ from desired's (CA files %v, want %v)", gotCAs, wantCAs)
	}
}

// opsText formats ops one per line.
func opsText(ops []plan.Op) string {
	var b strings.Builder
	for i, op := range ops {
		fmt.Fprintf(&b, "  %3d %s\n", i, op)
	}
	return b.String()
}

// viewDiff describes the first differences between two runtime views.
func viewDiff(got, want *model.Config) string {
	var out []string
	gb, wb := map[string]*model.Backend{}, map[string]*model.Backend{}
	for _, b := range got.Backends {
		gb[b.Name] = b
	}
	for _, b := range want.Backends {
		wb[b.Name] = b
	}
	for name, b := range wb {
		if g, ok := gb[name]; !ok || !reflect.DeepEqual(g, b) {
			out = append(out, fmt.Sprintf("backend %s: got %+v, want %+v", name, g.Servers, b.Servers))
		}
	}
	for name := range gb {
		if _, ok := wb[name]; !ok {
			out = append(out, "extra backend "+name)
		}
	}
	if !reflect.DeepEqual(got.Maps, want.Maps) {
		out = append(out, fmt.Sprintf("maps: got %v, want %v", got.Maps, want.Maps))
	}
	if !reflect.DeepEqual(got.Certificates, want.Certificates) {
		out = append(out, "certificates differ")
	}
	if !reflect.DeepEqual(got.CAFiles, want.CAFiles) {
		out = append(out, "CA files differ")
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// indexOf returns the index of the first op for which match is true, or -1.
func indexOf(ops []plan.Op, match func(plan.Op) bool) int {
	for i, op := range ops {
		if match(op) {
			return i
		}
	}
	return -1
}

// lastIndexOf returns the index of the last op for which match is true, or -1.
func lastIndexOf(ops []plan.Op, match func(plan.Op) bool) int {
	for i := len(ops) - 1; i >= 0; i-- {
		if match(ops[i]) {
			return i
		}
	}
	return -1
}

// reasonKinds returns the distinct kinds of a plan's reasons, sorted.
func reasonKinds(p plan.Plan) []plan.ReasonKind {
	seen := map[plan.ReasonKind]bool{}
	var out []plan.ReasonKind
	for _, r := range p.Structural {
		if !seen[r.Kind] {
			seen[r.Kind] = true
			out = append(out, r.Kind)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// opPhase returns the ordering group of an op in a plan towards next (see Diff and mapOps): 1 CA
// sets, 2 certificate stores, 3 crt-list changes, 4 server ops of backends with a Route, 5 map adds
// and sets of haroute_forwarded.map and of redirecting ("1") entries of the redirect map, 6 those of
// the other maps, 7 those of "0" entries of the redirect map, 8 map deletes of the lookup maps, 9
// those of haroute_forwarded.map, 10 server removals of backends without a Route, 11 crt-list and
// certificate removals, 12 CA file removals. A delete of the redirect map returns redirectDel: it
// goes anywhere among the map deletes (before or after the lookup maps' as its old value says),
// after every add.
func opPhase(op plan.Op, next *model.Config, removedCert map[string]bool) int {
	routed := func(backend string) bool { b := next.Backend(backend); return b != nil && b.Route != "" }
	switch o := op.(type) {
	case plan.SetListenerFile:
		return 1
	case plan.SetCAFile:
		return 1
	case plan.SetCertificate:
		return 2
	case plan.AddCrtListEntry:
		return 3
	case plan.DelCrtListEntry:
		if removedCert[o.Cert] {
			return 11
		}
		return 3
	case plan.AddServer:
		return 4
	case plan.EnableHealth, plan.DisableHealth, plan.SetServerWeight:
		return 4
	case plan.SetServerState:
		if routed(o.Backend) {
			return 4
		}
		return 10
	case plan.DelServer:
		if routed(o.Backend) {
			return 4
		}
		return 10
	case plan.AddMapEntry:
		return mapAddPhase(o.Map, o.Value)
	case plan.SetMapEntry:
		return mapAddPhase(o.Map, o.Value)
	case plan.DelMapEntry:
		switch o.Map {
		case model.MapHTTPRedirect:
			return redirectDel
		case model.MapForwardedHeaders, model.MapCookieSameSite, model.MapCookieNames, model.MapHeaderValues:
			return 9
		}
		return 8
	case plan.DelCertificate:
		return 11
	case plan.DelCAFile:
		return 12
	}
	return 0
}

// redirectDel is opPhase's answer for a delete of the redirect map: any phase from 7 to 9.
const redirectDel = -1

// mapAddPhase is opPhase for a map add or set.
func mapAddPhase(m, value string) int {
	switch {
	case m == model.MapForwardedHeaders, m == model.MapCookieSameSite, m == model.MapCookieNames, m == model.MapHeaderValues,
		m == model.MapHTTPRedirect && value == "1":
		return 5
	case m == model.MapHTTPRedirect:
		return 7
	}
	return 6
}

// checkOrder fails unless the ops of a plan towards next come in Diff's order: phases never go back,
// backends' server ops come in name order, and every map entry naming a backend is added after that
// backend's servers.
func checkOrder(t testing.TB, ops []plan.Op, next *model.Config) {
	t.Helper()
	removedCert := map[string]bool{}
	for _, op := range ops {
		if o, ok := op.(plan.DelCertificate); ok {
			removedCert[o.Cert] = true
		}
	}
	phase, lastBackend := 0, ""
	for i, op := range ops {
		p := opPhase(op, next, removedCert)
		if p == redirectDel {
			if phase > 9 {
				t.Fatalf("op %d (%s): a redirect map delete after phase %d:\n%s", i, op, phase, opsText(ops))
			}
			phase = max(phase, 8) // no add may follow a delete
			continue
		}
		if p == 0 || p < phase {
			t.Fatalf("op %d (%s) in phase %d after phase %d:\n%s", i, op, p, phase, opsText(ops))
		}
		if p > phase {
			lastBackend = ""
		}
		phase = p
		if p == 4 || p == 10 {
			b := ""
			switch o := op.(type) {
			case plan.AddServer:
				b = o.Backend.Name
			case plan.DelServer:
				b = o.Backend
			case plan.SetServerState:
				b = o.Backend
			case plan.SetServerWeight:
				b = o.Backend
			case plan.EnableHealth:
				b = o.Backend
			case plan.DisableHealth:
				b = o.Backend
			}
			if b < lastBackend {
				t.Fatalf("op %d (%s): backend %s after %s:\n%s", i, op, b, lastBackend, opsText(ops))
			}
			lastBackend = b
		}
	}
}

// settle returns the state HAProxy runs once the servers next keeps for backends that lost their
// Route are gone (the plan after next, toward the same desired state).
func settle(t testing.TB, next, desired *model.Config) *model.Config {
	t.Helper()
	if len(plan.Draining(next)) == 0 {
		return next
	}
	p := plan.Compute(next, desired)
	if p.NeedsReload() {
		t.Fatalf("settling: reasons %v", p.Structural)
	}
	return p.Next
}
