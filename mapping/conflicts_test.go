package mapping

import (
	"slices"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

func admittedNames(cfg *model.Config) []string {
	var out []string
	for _, r := range cfg.Routes {
		out = append(out, r.Namespace+"/"+r.Name)
	}
	return out
}

func TestConflicts(t *testing.T) {
	tests := []struct {
		name      string
		routes    []*routev1.Route
		disable   bool
		admitted  []string          // sorted ns/name
		rejected  map[string]string // ns/name → substring of the message
		wildcards bool
	}{
		{
			name: "oldest wins whatever the input order",
			routes: []*routev1.Route{
				newRoute("a", "young", "www.example.com", 10),
				newRoute("a", "old", "www.example.com", 1),
			},
			admitted: []string{"a/old"},
			rejected: map[string]string{"a/young": "route a/old already serves host www.example.com"},
		},
		{
			name: "empty path and root are the same key",
			routes: []*routev1.Route{
				newRoute("a", "empty", "www.example.com", 1),
				newRoute("a", "root", "www.example.com", 2, withPath("/")),
			},
			admitted: []string{"a/empty"},
			rejected: map[string]string{"a/root": "a/empty"},
		},
		{
			name: "different paths coexist in one namespace",
			routes: []*routev1.Route{
				newRoute("a", "root", "www.example.com", 1),
				newRoute("a", "api", "www.example.com", 2, withPath("/api")),
				newRoute("a", "api-slash", "www.example.com", 3, withPath("/api/")),
			},
			admitted: []string{"a/api", "a/api-slash", "a/root"},
		},
		{
			name: "another namespace may not use an owned host on any path",
			routes: []*routev1.Route{
				newRoute("a", "root", "www.example.com", 1),
				newRoute("b", "api", "www.example.com", 2, withPath("/api")),
			},
			admitted: []string{"a/root"},
			rejected: map[string]string{"b/api": "owned by namespace a"},
		},
		{
			name:    "ownership check disabled",
			disable: true,
			routes: []*routev1.Route{
				newRoute("a", "root", "www.example.com", 1),
				newRoute("b", "api", "www.example.com", 2, withPath("/api")),
				newRoute("b", "root", "www.example.com", 3),
			},
			admitted: []string{"a/root", "b/api"},
			rejected: map[string]string{"b/root": "a/root"},
		},
		{
			name:      "wildcard owns its domain's exact hosts",
			wildcards: true,
			routes: []*routev1.Route{
				newRoute("a", "wild", "www.example.com", 1, withWildcard()),
				newRoute("b", "exact", "x.example.com", 2),
				newRoute("a", "exact", "y.example.com", 3),
				newRoute("b", "deeper", "z.y.example.com", 4),
				newRoute("b", "parent", "example.com", 5),
			},
			admitted: []string{"a/exact", "a/wild", "b/deeper", "b/parent"},
			rejected: map[string]string{"b/exact": "wildcard domain *.example.com owned by namespace a"},
		},
		{
			name:      "wildcard refused over another namespace's exact host",
			wildcards: true,
			routes: []*routev1.Route{
				newRoute("a", "exact", "x.example.com", 1),
				newRoute("b", "wild", "www.example.com", 2, withWildcard()),
				newRoute("a", "wild", "www.example.com", 3, withWildcard()),
			},
			admitted: []string{"a/exact", "a/wild"},
			rejected: map[string]string{"b/wild": "owned by namespace a (route a/exact)"},
		},
		{
			name:      "wildcard and exact host of the same namespace coexist",
			wildcards: true,
			routes: []*routev1.Route{
				newRoute("a", "wild", "*.example.com", 1, withWildcard(), withTLS(routev1.TLSTerminationPassthrough, "")),
				newRoute("a", "edge", "a.example.com", 2, withTLS(routev1.TLSTerminationEdge, "")),
			},
			admitted: []string{"a/edge", "a/wild"},
		},
		{
			name: "a rejected route claims nothing",
			routes: []*routev1.Route{
				newRoute("a", "bad", "www.example.com", 1, withPath("/a b")),
				newRoute("b", "good", "www.example.com", 2),
			},
			admitted: []string{"b/good"},
			rejected: map[string]string{"a/bad": "path"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			opts.DisableNamespaceOwnershipCheck = tt.disable
			opts.AllowWildcardRoutes = tt.wildcards
			cfg, problems := translate(t, Input{Routes: tt.routes}, opts)
			if got := strings.Join(admittedNames(cfg), " "); got != strings.Join(tt.admitted, " ") {
				t.Errorf("admitted %q, want %q", got, strings.Join(tt.admitted, " "))
			}
			if len(problems) != len(tt.rejected) {
				t.Errorf("got problems %v, want %d", problems, len(tt.rejected))
			}
			for key, msg := range tt.rejected {
				ns, name, _ := strings.Cut(key, "/")
				p := problemFor(problems, ns, name)
				if p == nil {
					t.Errorf("%s: no problem", key)
					continue
				}
				if !strings.Contains(p.Message, msg) {
					t.Errorf("%s: message %q does not contain %q", key, p.Message, msg)
				}
			}
		})
	}
}

// TestDeletingTheWinnerLetsTheNextIn replays two inputs: once the oldest Route is gone, the next
// oldest takes the host.
func TestDeletingTheWinnerLetsTheNextIn(t *testing.T) {
	first := newRoute("a", "first", "www.example.com", 1)
	second := newRoute("b", "second", "www.example.com", 2)
	third := newRoute("c", "third", "www.example.com", 3)

	cfg, problems := translate(t, Input{Routes: []*routev1.Route{third, second, first}}, testOptions())
	if got := admittedNames(cfg); len(got) != 1 || got[0] != "a/first" {
		t.Fatalf("admitted %v, want a/first", got)
	}
	if p := problemFor(problems, "b", "second"); p == nil || p.Reason != ReasonHostAlreadyClaimed || !strings.Contains(p.Message, "a/first") {
		t.Fatalf("b/second: got %+v, want HostAlreadyClaimed naming a/first", p)
	}

	cfg, problems = translate(t, Input{Routes: []*routev1.Route{third, second}}, testOptions())
	if got := admittedNames(cfg); len(got) != 1 || got[0] != "b/second" {
		t.Fatalf("after deleting a/first: admitted %v, want b/second", got)
	}
	if p := problemFor(problems, "c", "third"); p == nil || !strings.Contains(p.Message, "b/second") {
		t.Fatalf("c/third: got %+v, want a problem naming b/second", p)
	}
	if m := mapEntries(cfg, model.MapHTTP); m["www.example.com/"] != "be_http:b:second" {
		t.Fatalf("http map %v, want www.example.com/ → be_http:b:second", m)
	}
}

func TestDuplicateRouteInInput(t *testing.T) {
	a := newRoute("a", "r", "one.example.com", 1)
	b := newRoute("a", "r", "two.example.com", 1)
	for _, order := range [][]*routev1.Route{{a, b}, {b, a}} {
		cfg, problems := translate(t, Input{Routes: order}, testOptions())
		if len(cfg.Routes) != 1 || len(problems) != 1 || problems[0].Reason != ReasonInvalidRoute {
			t.Fatalf("got routes %v problems %v, want one admitted and one InvalidRoute", cfg.Routes, problems)
		}
		// The content tie-break picks the same one whatever the order.
		if cfg.Routes[0].Host != "one.example.com" {
			t.Fatalf("admitted host %s, want one.example.com", cfg.Routes[0].Host)
		}
	}
}

// TestHostChangeReleasesTheOldHost: when a Route's host changes, the host it held is free at once,
// so the Route that was waiting for it is admitted (OpenShift's router fixed its bookkeeping to
// forget the old host in 2026). haroute works the claims out afresh from every snapshot; this checks
// it through the function Translate and through a Translator fed the same snapshots, for an exact
// host, a wildcard domain held through an exact host, and an exact host held through a wildcard.
func TestHostChangeReleasesTheOldHost(t *testing.T) {
	wildcard := func(r *routev1.Route) *routev1.Route {
		r.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain
		return r
	}
	tests := []struct {
		name            string
		holder, waiting *routev1.Route
		moved           string // the holder's new host
	}{
		{
			name:    "exact host",
			holder:  newRoute("a", "holder", "www.example.com", 1),
			waiting: newRoute("b", "waiting", "www.example.com", 2),
			moved:   "www.example.org",
		},
		{
			name:    "wildcard domain held by an exact host",
			holder:  newRoute("a", "holder", "x.apps.example.com", 1),
			waiting: wildcard(newRoute("b", "waiting", "*.apps.example.com", 2)),
			moved:   "x.other.example.com",
		},
		{
			name:    "exact host held by a wildcard domain",
			holder:  wildcard(newRoute("a", "holder", "*.apps.example.com", 1)),
			waiting: newRoute("b", "waiting", "y.apps.example.com", 2),
			moved:   "*.other.example.com",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			opts.AllowWildcardRoutes = true
			moved := tt.holder.DeepCopy()
			moved.Spec.Host = tt.moved
			tr := NewTranslator(opts)
			for i, step := range []struct {
				routes   []*routev1.Route
				admitted []string
			}{
				{[]*routev1.Route{tt.holder, tt.waiting}, []string{"a/holder"}},
				{[]*routev1.Route{moved, tt.waiting}, []string{"a/holder", "b/waiting"}},
				{[]*routev1.Route{tt.holder, tt.waiting}, []string{"a/holder"}},
			} {
				in := Input{Routes: step.routes}
				cfg, problems := translate(t, in, opts)
				incCfg, incProblems := tr.Translate(in)
				for _, got := range []struct {
					how      string
					cfg      *model.Config
					problems []Problem
				}{{"Translate", cfg, problems}, {"Translator", incCfg, incProblems}} {
					if names := admittedNames(got.cfg); !slices.Equal(names, step.admitted) {
						t.Errorf("step %d, %s: admitted %v, want %v (problems %v)", i, got.how, names, step.admitted, got.problems)
					}
					if p := problemFor(got.problems, "b", "waiting"); (p != nil) != (len(step.admitted) == 1) ||
						(p != nil && p.Reason != ReasonHostAlreadyClaimed) {
						t.Errorf("step %d, %s: b/waiting has problem %+v", i, got.how, p)
					}
				}
			}
		})
	}
}
