package oracle

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/render"
)

// fakeAddrs returns backends that are never started (the generator only needs their identity).
func fakeAddrs(nHTTP, nTLS int) []Addr {
	var out []Addr
	for i := 0; i < nHTTP; i++ {
		out = append(out, Addr{Name: fmt.Sprintf("h%02d", i), IP: fmt.Sprintf("127.0.0.%d", 2+i%30), Port: 20000 + i})
	}
	for i := 0; i < nTLS; i++ {
		out = append(out, Addr{Name: fmt.Sprintf("t%02d", i), IP: fmt.Sprintf("127.0.1.%d", 2+i%30), Port: 21000 + i, TLS: true})
	}
	return out
}

// countingIssuer returns distinct, deterministic fake certificates (for tests that do not translate).
func countingIssuer() func(names ...string) ([]byte, []byte) {
	n := 0
	return func(names ...string) ([]byte, []byte) {
		n++
		return []byte(fmt.Sprintf("cert %d %s", n, strings.Join(names, ","))), []byte(fmt.Sprintf("key %d", n))
	}
}

func newTestWalker(t *testing.T, seed uint64, opts WalkOptions) *Walker {
	t.Helper()
	wk := NewWalker(seed, NewWorld(fakeAddrs(48, 24), "dest-ca"), opts)
	if err := SeedRoutes(wk); err != nil {
		t.Fatal(err)
	}
	return wk
}

func TestWalkIsDeterministic(t *testing.T) {
	opts := WalkOptionsFor(mapping.DefaultOptions(), nil)
	run := func(seed uint64) ([]Mutation, []byte) {
		opts.IssueCert = countingIssuer()
		wk := newTestWalker(t, seed, opts)
		var ms []Mutation
		for i := 0; i < 300; i++ {
			ms = append(ms, wk.Step())
		}
		in := wk.World.Input()
		data, err := yaml.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		return ms, data
	}
	m1, in1 := run(7)
	m2, in2 := run(7)
	if !reflect.DeepEqual(m1, m2) || string(in1) != string(in2) {
		t.Fatal("the same seed gave two different walks")
	}
	m3, _ := run(8)
	if reflect.DeepEqual(m1, m3) {
		t.Fatal("seeds 7 and 8 gave the same walk")
	}
}

func TestWalkKeepsInvariantsAndCoversEveryKind(t *testing.T) {
	opts := WalkOptionsFor(mapping.DefaultOptions(), countingIssuer())
	wk := newTestWalker(t, 1, opts)
	counts := map[MutationKind]int{}
	const steps = 2000
	maxRoutes := 0
	for i := 0; i < steps; i++ {
		m := wk.Step()
		counts[m.Kind]++
		if err := wk.World.Check(opts.MaxRoutes, opts.MaxEndpoints); err != nil {
			t.Fatalf("step %d (%s): %v", i, m, err)
		}
		if wk.World.Route(m.Route) == nil && m.Kind != MutDeleteRoute {
			t.Fatalf("step %d (%s): the mutation names no current route", i, m)
		}
		maxRoutes = max(maxRoutes, len(wk.World.Routes))
	}
	for _, k := range mutationOrder {
		switch {
		case k == MutListener && counts[k] != 0:
			t.Errorf("mutation %s happened %d times in a walk without listener files", k, counts[k])
		case k != MutListener && counts[k] == 0:
			t.Errorf("mutation %s never happened in %d steps", k, steps)
		}
	}
	if share := float64(counts[MutAnnotation]) / steps; share < 0.02 || share > 0.09 {
		t.Errorf("structural (annotation) steps are %.1f%% of the walk, want about 5%%", 100*share)
	}
	if maxRoutes < 15 {
		t.Errorf("the walk never had more than %d routes; it should explore up to %d", maxRoutes, opts.MaxRoutes)
	}
	t.Logf("mutations in %d steps: %v; up to %d routes", steps, counts, maxRoutes)
}

// TestWalkStatesTranslateAndRender translates and renders the states of a walk with real
// certificates: every state must be a valid config, and most Routes must be admitted (conflicts
// reject a few, by design).
func TestWalkStatesTranslateAndRender(t *testing.T) {
	ca := testkit.NewCA(t, "walk CA")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 3
	wopts := WalkOptionsFor(opts, func(names ...string) ([]byte, []byte) { return ca.Issue(t, names...) })
	wk := NewWalker(3, NewWorld(fakeAddrs(48, 24), string(testkit.NewCA(t, "dest CA").PEM())), wopts)
	if err := SeedRoutes(wk); err != nil {
		t.Fatal(err)
	}
	defaultCert := ca.IssueBundle(t, defaultCertName)
	admitted, total := 0, 0
	reasons := map[string]int{}
	for i := 0; i <= 300; i++ {
		m := Mutation{Kind: "seed"}
		if i > 0 {
			m = wk.Step()
		}
		cfg, problems := mapping.Translate(wk.World.Input(), opts)
		if err := cfg.Validate(); err != nil {
			t.Fatalf("step %d (%s): invalid config: %v", i, m, err)
		}
		if _, err := render.Render(cfg, render.Options{Dir: "/nonexistent/oracle", DefaultCertificatePEM: defaultCert}); err != nil {
			t.Fatalf("step %d (%s): render: %v", i, m, err)
		}
		for _, p := range problems {
			if !p.Warning {
				reasons[p.Reason]++
			}
		}
		admitted += len(cfg.Routes)
		total += len(wk.World.Routes)
		if i == 0 && len(problems) > 0 {
			t.Fatalf("seed routes were not all admitted: %v", problems)
		}
	}
	if admitted < total*6/10 {
		t.Errorf("only %d of %d route-steps were admitted; the walk makes too many conflicts", admitted, total)
	}
	t.Logf("admitted %d of %d route-steps; rejections by reason: %v", admitted, total, reasons)
}

func TestChurnWalkStaysRuntimeOnly(t *testing.T) {
	opts := WalkOptionsFor(mapping.DefaultOptions(), countingIssuer())
	opts.Weights = ChurnWeights()
	opts.SingleService = true
	opts.MaxAddedPerKind = 3
	wk := NewWalker(5, NewWorld(fakeAddrs(48, 24), "dest-ca"), opts)
	stable, err := AddStableRoutes(wk)
	if err != nil {
		t.Fatal(err)
	}
	type snapshot struct{ host, path string }
	before := map[string]snapshot{}
	for _, key := range stable {
		r := wk.World.Route(key)
		before[key] = snapshot{r.Host, r.Path}
	}
	counts := map[MutationKind]int{}
	for i := 0; i < 1000; i++ {
		m := wk.Step()
		counts[m.Kind]++
		if w := ChurnWeights()[m.Kind]; w == 0 {
			t.Fatalf("step %d: %s is not a churn mutation", i, m)
		}
		if err := wk.World.Check(opts.MaxRoutes, opts.MaxEndpoints); err != nil {
			t.Fatalf("step %d (%s): %v", i, m, err)
		}
		for _, key := range stable {
			r := wk.World.Route(key)
			if r == nil {
				t.Fatalf("step %d (%s): stable route %s deleted", i, m, key)
			}
			if (snapshot{r.Host, r.Path}) != before[key] {
				t.Fatalf("step %d (%s): stable route %s moved", i, m, key)
			}
			for _, ref := range r.Services {
				if ref.Weight == 0 {
					t.Fatalf("step %d (%s): stable route %s got weight 0", i, m, key)
				}
			}
		}
		for _, k := range []Kind{KindHTTP, KindEdge, KindReencrypt, KindPassthrough} {
			if n := wk.addedOfKind(k); n > opts.MaxAddedPerKind {
				t.Fatalf("step %d: %d added %s routes, cap %d", i, n, k, opts.MaxAddedPerKind)
			}
		}
		for _, r := range wk.World.Routes {
			if !wk.Stable(r.Key()) && len(r.Services) != 1 {
				t.Fatalf("step %d: churn route %s has %d services", i, r.Key(), len(r.Services))
			}
		}
	}
	for k := range ChurnWeights() {
		if counts[k] == 0 {
			t.Errorf("churn mutation %s never happened", k)
		}
	}
	t.Logf("churn mutations: %v", counts)
}

// TestWalkRotatesListenerFiles checks that a walk given a pool of the router's own TLS files rotates
// each kind of them (default certificate, client CRLs, client CA), and that the world always holds
// files of the pool, the CRLs of the CA in force.
func TestWalkRotatesListenerFiles(t *testing.T) {
	pool := &ListenerPool{
		DefaultCertificates: []string{"cert-1", "cert-2", "cert-3"},
		ClientCAs: []ClientCA{
			{PEM: "ca-1", CRLs: []string{"crl-1a", "crl-1b"}},
			{PEM: "ca-2", CRLs: []string{"crl-2a"}},
		},
	}
	opts := WalkOptionsFor(mapping.DefaultOptions(), countingIssuer())
	opts.Listener = pool
	opts.Weights[MutListener] = 10
	wk := newTestWalker(t, 3, opts)
	wk.World.Listener = pool.Files()
	details := map[string]int{}
	for i := 0; i < 1000; i++ {
		m := wk.Step()
		if m.Kind != MutListener {
			continue
		}
		details[strings.SplitN(m.Detail, " (", 2)[0]]++
		l := wk.World.Listener
		if !slices.Contains(pool.DefaultCertificates, l.DefaultCertificate) {
			t.Fatalf("step %d: default certificate %q is not of the pool", i, l.DefaultCertificate)
		}
		ok := false
		for _, ca := range pool.ClientCAs {
			ok = ok || (ca.PEM == l.ClientCA && slices.Contains(ca.CRLs, l.ClientCRL))
		}
		if !ok {
			t.Fatalf("step %d (%s): client CA %q with CRLs %q", i, m.Detail, l.ClientCA, l.ClientCRL)
		}
	}
	for _, want := range []string{"default certificate rotated", "client CRLs rotated", "client CA 0", "client CA 1"} {
		if details[want] == 0 {
			t.Errorf("%q never happened: %v", want, details)
		}
	}
}
