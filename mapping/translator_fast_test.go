package mapping

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	routev1 "github.com/openshift/api/route/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/mapping/model"
)

// checkReverseIndex fails unless the Translator's reverse index is exactly what its memo says: under
// each EndpointSlice key, the entries whose vdeps (useValidate) or bdeps (useBackend) look it up, and
// no other entry or key.
func checkReverseIndex(t *testing.T, tr *Translator) {
	t.Helper()
	want := map[string]map[*routeMemo]depUse{}
	add := func(m *routeMemo, use depUse, deps []dep) {
		for _, d := range deps {
			if d.kind != depSlices {
				continue
			}
			if want[d.key] == nil {
				want[d.key] = map[*routeMemo]depUse{}
			}
			want[d.key][m] |= use
		}
	}
	for _, m := range tr.memo {
		add(m, useValidate, m.vdeps)
		add(m, useBackend, m.bdeps)
	}
	if !maps.EqualFunc(tr.rev, want, maps.Equal) {
		t.Fatalf("the reverse index has %d keys, the memo's lookups %d, or they differ", len(tr.rev), len(want))
	}
}

// replaceSlice returns in with a copy of its EndpointSlice i whose endpoints have the given addresses
// (one each, the endpoints the slice has), in a new EndpointSlices list.
func replaceSlice(in Input, i int, addrs ...string) Input {
	in.EndpointSlices = slices.Clone(in.EndpointSlices)
	s := in.EndpointSlices[i].DeepCopy()
	for j := range s.Endpoints {
		s.Endpoints[j].Addresses = []string{addrs[j%len(addrs)]}
	}
	in.EndpointSlices[i] = s
	return in
}

// translateStep calls tr and Translate on in, fails unless they agree, and reports whether tr took
// the fast path.
func translateStep(t *testing.T, tr *Translator, in Input) (*model.Config, []Problem, bool) {
	t.Helper()
	fast := tr.fastCalls
	got, problems := tr.Translate(in)
	want, wantProblems := Translate(in, tr.opts)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(problems, wantProblems) {
		t.Fatalf("the Translator differs from Translate:\n%s\n got %v\nwant %v", configDiff(got, want), problems, wantProblems)
	}
	checkReverseIndex(t, tr)
	return got, problems, tr.fastCalls > fast
}

// TestTranslatorFastPath checks the fast path: a change of one EndpointSlice returns the previous
// result with exactly the backends of its Service's Routes rebuilt (new pointers at the same
// positions, in a new Backends slice) and everything else the previous result's; the same input
// again returns the same backends; a change that refuses an endpoint (a new warning) and the change
// back (a warning gone) fall back to the normal path; and the fast path follows a normal call again.
func TestTranslatorFastPath(t *testing.T) {
	in := reuseInput(t)
	tr := NewTranslator(testOptions())
	first, firstProblems, fast := translateStep(t, tr, in)
	if fast {
		t.Fatal("the first call took the fast path")
	}
	if len(firstProblems) == 0 {
		t.Fatal("reuseInput gives no problem: the test would not see problems being kept")
	}

	// ns-2/svc-2 is the Service of route-2 and re.
	next := replaceSlice(in, 2, "10.9.9.9")
	affected := map[string]bool{"be_http:ns-2:route-2": true, "be_secure:ns-2:re": true}
	second, problems, fast := translateStep(t, tr, next)
	if !fast {
		t.Fatal("a change of one EndpointSlice did not take the fast path")
	}
	checkFastResult(t, first, second, affected)
	if !reflect.DeepEqual(problems, firstProblems) || unsafe.SliceData(problems) == unsafe.SliceData(firstProblems) {
		t.Error("the problems are not a copy of the previous ones")
	}

	// The caller owns its problems: changing them changes no later result.
	problems[0] = Problem{Name: "changed by the caller"}
	third, _, fast := translateStep(t, tr, next)
	if !fast || unsafe.SliceData(third.Backends) != unsafe.SliceData(second.Backends) {
		t.Error("the same input again did not take the fast path with the previous backends")
	}
	checkFastResult(t, second, third, nil)

	// A slice of a Service no Route uses: nothing rebuilt.
	unused := slices.IndexFunc(next.EndpointSlices, func(s *discoveryv1.EndpointSlice) bool {
		return s.Labels[discoveryv1.LabelServiceName] == "svc-39"
	})
	if unused < 0 {
		t.Fatal("benchInput has no slice for svc-39")
	}
	quiet := replaceSlice(next, unused, "10.8.8.8")
	quiet.Routes = slices.DeleteFunc(slices.Clone(next.Routes), func(r *routev1.Route) bool { return r.Name == "route-39" })
	fourth, _, fast := translateStep(t, tr, quiet)
	if fast {
		t.Fatal("a removed Route took the fast path")
	}
	quiet2 := replaceSlice(quiet, unused, "10.8.8.9")
	fifth, _, fast := translateStep(t, tr, quiet2)
	if !fast || unsafe.SliceData(fifth.Backends) != unsafe.SliceData(fourth.Backends) {
		t.Error("a change of an unused slice did not return the previous backends on the fast path")
	}

	// A refused endpoint adds a warning: the normal path; its removal too; then the fast path again.
	refused := replaceSlice(quiet2, 2, "10.9.9.9", "169.254.1.1")
	_, refusedProblems, fast := translateStep(t, tr, refused)
	if fast || len(refusedProblems) <= len(firstProblems) {
		t.Fatalf("a refused endpoint took the fast path (%v) or gave no warning (%d problems)", fast, len(refusedProblems))
	}
	back := replaceSlice(refused, 2, "10.9.9.8")
	backCfg, _, fast := translateStep(t, tr, back)
	if fast {
		t.Fatal("the removal of a warning took the fast path")
	}
	again := replaceSlice(back, 2, "10.9.9.7")
	againCfg, _, fast := translateStep(t, tr, again)
	if !fast {
		t.Fatal("the fast path was not taken after a normal call")
	}
	checkFastResult(t, backCfg, againCfg, affected)

	// Any other change takes the normal path.
	for name, change := range map[string]func(Input) Input{
		"service": func(in Input) Input {
			in.Services = slices.Clone(in.Services)
			in.Services[0] = in.Services[0].DeepCopy()
			return in
		},
		"route list copy": func(in Input) Input { in.Routes = slices.Clone(in.Routes); return in },
		"slice removed":   func(in Input) Input { in.EndpointSlices = in.EndpointSlices[1:]; return in },
	} {
		before := tr.fastCalls
		if name == "route list copy" {
			// The same pointers in a new list: still the fast path.
			translateStep(t, tr, change(again))
			if tr.fastCalls == before {
				t.Errorf("%s: the fast path was not taken", name)
			}
			continue
		}
		translateStep(t, tr, change(again))
		if tr.fastCalls != before {
			t.Errorf("%s: the fast path was taken", name)
		}
		translateStep(t, tr, again)
	}
}

// checkFastResult fails unless next is prev with exactly the named backends replaced by new ones
// (none: the same Backends slice).
func checkFastResult(t *testing.T, prev, next *model.Config, rebuilt map[string]bool) {
	t.Helper()
	for name, same := range map[string]bool{
		"Maps":         unsafe.SliceData(prev.Maps) == unsafe.SliceData(next.Maps),
		"Certificates": unsafe.SliceData(prev.Certificates) == unsafe.SliceData(next.Certificates),
		"CAFiles":      unsafe.SliceData(prev.CAFiles) == unsafe.SliceData(next.CAFiles),
		"Routes":       unsafe.SliceData(prev.Routes) == unsafe.SliceData(next.Routes),
		"Backends":     (unsafe.SliceData(prev.Backends) == unsafe.SliceData(next.Backends)) == (len(rebuilt) == 0),
	} {
		if !same {
			t.Errorf("%s: not as the fast path leaves it", name)
		}
	}
	if len(prev.Backends) != len(next.Backends) {
		t.Fatalf("%d backends, then %d", len(prev.Backends), len(next.Backends))
	}
	n := 0
	for i, b := range next.Backends {
		switch {
		case rebuilt[b.Name]:
			n++
			if b == prev.Backends[i] || b.Name != prev.Backends[i].Name {
				t.Errorf("backend %s was not rebuilt in its place", b.Name)
			}
		case b != prev.Backends[i]:
			t.Errorf("backend %s is not the previous one", b.Name)
		}
	}
	if n != len(rebuilt) {
		t.Errorf("%d backends rebuilt, want %d", n, len(rebuilt))
	}
}

// TestTranslatorFastPathValidationLookup checks that a changed EndpointSlice that a Route's
// validation looked up makes the call take the normal path. Validation looks up no EndpointSlice
// today, so the test adds such a lookup to a memo entry (one that holds, so the memo stays right).
func TestTranslatorFastPathValidationLookup(t *testing.T) {
	in := reuseInput(t)
	tr := NewTranslator(testOptions())
	translateStep(t, tr, in)
	var m *routeMemo
	for r, e := range tr.memo {
		if r.Namespace == "ns-2" && r.Name == "route-2" {
			m = e
		}
	}
	if m == nil {
		t.Fatal("no memo entry for ns-2/route-2")
	}
	d := dep{kind: depSlices, key: "ns-2/svc-2", slices: tr.ix.x.slices["ns-2/svc-2"]}
	vdeps := append(slices.Clone(m.vdeps), d)
	tr.link(m, useValidate, m.vdeps, vdeps)
	m.vdeps = vdeps
	if _, _, fast := translateStep(t, tr, replaceSlice(in, 2, "10.9.9.9")); fast {
		t.Fatal("a slice looked up by a validation took the fast path")
	}
	if _, _, fast := translateStep(t, tr, replaceSlice(in, 2, "10.9.9.8")); !fast {
		t.Fatal("the fast path was not taken once the validation no longer looks the slice up")
	}
}

// TestTranslatorFastPathBookkeeping checks what a fast call leaves for the calls after it: a normal
// call where the changed EndpointSlice is back to its first version (the very pointer the memo's
// lookups held before the fast call) rebuilds the backends again; and a Route that was admitted
// once, then rejected, is not among the Routes a later fast call rebuilds.
func TestTranslatorFastPathBookkeeping(t *testing.T) {
	in := reuseInput(t)
	tr := NewTranslator(testOptions())
	translateStep(t, tr, in)
	if _, _, fast := translateStep(t, tr, replaceSlice(in, 2, "10.9.9.9")); !fast {
		t.Fatal("a change of one EndpointSlice did not take the fast path")
	}
	back := in // slice 2 as in the first call, and a Service replaced: the normal path
	back.Services = slices.Clone(in.Services)
	back.Services[5] = back.Services[5].DeepCopy()
	if _, _, fast := translateStep(t, tr, back); fast {
		t.Fatal("a changed Service took the fast path")
	}

	// An older Route takes the host of route-7, which was admitted so far.
	claimed := back
	claimed.Routes = append(slices.Clone(back.Routes), newRoute("ns-7", "older", "host-7.apps.example.com", -1, withService("svc-8", nil)))
	_, problems, _ := translateStep(t, tr, claimed)
	if !slices.ContainsFunc(problems, func(p Problem) bool { return p.Name == "route-7" && p.Reason == ReasonHostAlreadyClaimed }) {
		t.Fatalf("route-7 was not rejected: %v", problems)
	}
	before, _, _ := translateStep(t, tr, claimed)
	after, _, fast := translateStep(t, tr, replaceSlice(claimed, 7, "10.7.7.7"))
	if !fast || unsafe.SliceData(after.Backends) != unsafe.SliceData(before.Backends) {
		t.Error("a change of the slice of a rejected Route's Service did not take the fast path with the same backends")
	}
}

// TestTranslatorFastPathReusedList checks that the Routes list is compared with a copy of the
// previous one: a caller that replaces a Route in the very list it passed before gets the normal
// path.
func TestTranslatorFastPathReusedList(t *testing.T) {
	in := reuseInput(t)
	in.Routes = slices.Clone(in.Routes)
	tr := NewTranslator(testOptions())
	translateStep(t, tr, in)
	moved := in.Routes[5].DeepCopy()
	moved.Spec.Host = "moved.apps.example.com"
	in.Routes[5] = moved
	if _, _, fast := translateStep(t, tr, in); fast {
		t.Fatal("a Route replaced in the previous list took the fast path")
	}
}
