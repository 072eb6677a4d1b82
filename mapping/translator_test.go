package mapping

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/routetest"
)

// translatorOptions are the option sets the sequence tests run with.
func translatorOptions() map[string]Options {
	plain := testOptions()

	loose := testOptions()
	loose.DisableNamespaceOwnershipCheck = true
	loose.AllowWildcardRoutes = true
	loose.Subdomain = "${name}-${namespace}.apps.example.com"
	loose.TrustCrossNamespaceEndpoints = true

	sharded := testOptions()
	sharded.AllowWildcardRoutes = true
	sharded.NamespaceLabels = labels.SelectorFromSet(labels.Set{"team": "a"})
	sharded.RouteLabels = labels.SelectorFromSet(labels.Set{"shard": "x"})
	sharded.DefaultDestinationCAFile = "/etc/haroute/ca.pem"
	sharded.ForwardedHeaders = "replace"
	sharded.AllowLoopbackEndpoints = false
	sharded.AllowedDomains = []string{"example.com"}
	return map[string]Options{"plain": plain, "loose": loose, "sharded": sharded}
}

func universePEMs(t testing.TB) universePEM {
	return universePEM{cert: readCert(t, "example.crt"), key: readCert(t, "example.key"),
		other: readCert(t, "other.crt"), otherKey: readCert(t, "other.key"), ca: readCert(t, "ca.crt")}
}

// TestTranslatorMatchesTranslate runs seeded random sequences of snapshots through a Translator and
// checks at every step that it returns exactly what Translate returns (model and problems), that the
// results of earlier steps were not modified, and that the memo holds only Routes of the latest
// snapshot. The fast path must be taken, rebuilding backends, and every kind of step must come right
// after a call it answered.
func TestTranslatorMatchesTranslate(t *testing.T) {
	pems := universePEMs(t)
	steps := 300
	if testing.Short() {
		steps = 60
	}
	afterFast := map[string]int{} // the kinds of the steps that followed a fast call
	fastRebuilds := 0             // fast calls that rebuilt backends
	covered := map[string]map[string]int{}
	for name, opts := range translatorOptions() {
		covered[name] = map[string]int{}
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				u := newUniverse(seed, pems)
				tr := NewTranslator(opts)
				var kept []*model.Config // earlier results with a deep copy of each
				var copies []*model.Config
				stats := map[string]int{}
				var prevBackends []*model.Backend
				wasFast := false
				for step := range steps {
					if step > 0 {
						for _, k := range u.step() {
							if wasFast {
								afterFast[k]++
							}
						}
					}
					fastCalls := tr.fastCalls
					got, gotProblems := tr.Translate(u.in)
					wasFast = tr.fastCalls > fastCalls
					if wasFast {
						stats["fast"]++
						if unsafe.SliceData(got.Backends) != unsafe.SliceData(prevBackends) {
							stats["fast rebuild"]++
						}
					}
					prevBackends = got.Backends
					want, wantProblems := Translate(u.in, opts)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("step %d: the Translator's model differs from Translate's:\n%s", step, configDiff(got, want))
					}
					if !reflect.DeepEqual(gotProblems, wantProblems) {
						t.Fatalf("step %d: the Translator's problems differ from Translate's:\n got %v\nwant %v", step, gotProblems, wantProblems)
					}
					checkMemoBound(t, tr, u.in)
					checkReverseIndex(t, tr)
					if err := sameIndex(tr.ix.x, newIndex(u.in)); err != nil {
						t.Fatalf("step %d: the Translator's index differs from newIndex: %v", step, err)
					}
					kept, copies = append(kept, got), append(copies, got.Clone())
					if len(kept) > 3 {
						kept, copies = kept[1:], copies[1:]
					}
					for i := range kept {
						if !reflect.DeepEqual(kept[i], copies[i]) {
							t.Fatalf("step %d: a result of an earlier step was modified", step)
						}
					}
					stats["backends"] += len(got.Backends)
					stats["header values"] += len(got.Map(model.MapHeaderValues).Entries)
					stats["problems"] += len(gotProblems)
					for _, p := range gotProblems {
						stats[p.Reason]++
					}
				}
				// Each seed must exercise everything; with -short's fewer steps, the seeds of an
				// option set together.
				if !testing.Short() {
					checkCoverage(t, name, steps, stats)
				}
				for k, v := range stats {
					covered[name][k] += v
				}
				t.Logf("%d fast calls (%d rebuilding backends) in %d steps", stats["fast"], stats["fast rebuild"], steps)
				fastRebuilds += stats["fast rebuild"]
			})
		}
	}
	if testing.Short() {
		for name, stats := range covered {
			checkCoverage(t, name, 4*steps, stats)
		}
	}
	if fastRebuilds == 0 {
		t.Error("no fast call rebuilt a backend")
	}
	for _, k := range stepKinds {
		if afterFast[k] == 0 {
			t.Errorf("no %q step right after a fast call (%v)", k, afterFast)
		}
	}
	t.Logf("steps right after a fast call: %v", afterFast)
}

// checkCoverage fails unless the random walk of option set name exercised what it is meant to in
// steps steps: admitted Routes, conflicts, duplicates, invalid Routes, the fast path, and for plain
// certificates served to another Route and refused endpoints.
func checkCoverage(t *testing.T, name string, steps int, stats map[string]int) {
	t.Helper()
	for _, k := range []string{"backends", "header values", ReasonHostAlreadyClaimed, ReasonInvalidRoute, ReasonInvalidAnnotation, "fast"} {
		if stats[k] == 0 {
			t.Errorf("%s: no %s in %d steps: the universe is too narrow (%v)", name, k, steps, stats)
		}
	}
	if name == "plain" && (stats[ReasonCertificateNotServed] == 0 || stats[ReasonEndpointRejected] == 0) {
		t.Errorf("%s: no certificate overlap or refused endpoint in %d steps (%v)", name, steps, stats)
	}
}

// checkMemoBound fails unless every memo entry is a Route of in.
func checkMemoBound(t *testing.T, tr *Translator, in Input) {
	t.Helper()
	for r := range tr.memo {
		if !slices.Contains(in.Routes, r) {
			t.Fatalf("the memo holds Route %s/%s, which the latest input does not", r.Namespace, r.Name)
		}
	}
}

// sameIndex returns an error unless two indexes hold the very same objects under the same keys.
func sameIndex(got, want *index) error {
	for kind, err := range map[string]error{
		"namespace":      samePointers(got.namespaces, want.namespaces, func(a, b *corev1.Namespace) bool { return a == b }),
		"service":        samePointers(got.services, want.services, func(a, b *corev1.Service) bool { return a == b }),
		"secret":         samePointers(got.secrets, want.secrets, func(a, b *corev1.Secret) bool { return a == b }),
		"endpoint slice": samePointers(got.slices, want.slices, slices.Equal[[]*discoveryv1.EndpointSlice]),
	} {
		if err != nil {
			return fmt.Errorf("%s index: %w", kind, err)
		}
	}
	return nil
}

// samePointers returns an error naming the first key under which two maps differ.
func samePointers[V any](got, want map[string]V, same func(a, b V) bool) error {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || !same(g, want[k]) {
			return fmt.Errorf("key %q holds another object", k)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d keys, want %d", len(got), len(want))
	}
	return nil
}

// configDiff names the parts of two models that differ.
func configDiff(got, want *model.Config) string {
	out := ""
	g, w := reflect.ValueOf(*got), reflect.ValueOf(*want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			out += fmt.Sprintf("%s:\n got %+v\nwant %+v\n", g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
	return out
}

// reuseInput is benchInput with Routes that carry certificates (two on one host, so one is not
// served) and a reencrypt Route with a destination CA, so that every part of the model has entries.
func reuseInput(t *testing.T) Input {
	in := benchInput(40, 3)
	crt, key, ca := readCert(t, "example.crt"), readCert(t, "example.key"), readCert(t, "ca.crt")
	edge := routetest.TLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect)
	in.Routes = append(in.Routes,
		newRoute("ns-1", "cert-a", "secure.example.com", 1, withService("svc-1", nil), edge, routetest.Cert(crt, key)),
		newRoute("ns-1", "cert-b", "secure.example.com", 2, withService("svc-1", nil), withPath("/b"), edge, routetest.Cert(crt, key)),
		newRoute("ns-2", "re", "re.example.com", 3, withService("svc-2", nil),
			withTLS(routev1.TLSTerminationReencrypt, ""), routetest.DestCA(ca),
			withAnnotation(AnnotationIPAllowlist, "10.0.0.0/8"), withAnnotation(AnnotationRewriteTarget, "/x"),
			withAnnotation(AnnotationRateLimit, "true"), withAnnotation(AnnotationRateLimitTCP, "10")),
	)
	return in
}

// TestTranslatorReusesUnchanged checks that a second call where one EndpointSlice changed returns
// every other backend in the very memory of the first result, and the first result's maps,
// certificates, CA files and Route records themselves; and that a third call with the same input
// returns the second result's backends slice.
func TestTranslatorReusesUnchanged(t *testing.T) {
	in := reuseInput(t)
	opts := testOptions()
	tr := NewTranslator(opts)
	first, _ := tr.Translate(in)
	if len(first.Certificates) != 1 || len(first.CAFiles) != 1 || len(first.Backends) != 43 {
		t.Fatalf("want 43 backends, 1 certificate and 1 CA file; got %d, %d, %d", len(first.Backends), len(first.Certificates), len(first.CAFiles))
	}

	next := in
	next.EndpointSlices = slices.Clone(in.EndpointSlices)
	changed := next.EndpointSlices[2].DeepCopy() // ns-2/svc-2: the backends of route-2 and re
	changed.Endpoints[0].Addresses = []string{"10.9.9.9"}
	next.EndpointSlices[2] = changed
	affected := map[string]bool{"be_http:ns-2:route-2": true, "be_secure:ns-2:re": true}

	second, problems := tr.Translate(next)
	want, wantProblems := Translate(next, opts)
	if !reflect.DeepEqual(second, want) || !reflect.DeepEqual(problems, wantProblems) {
		t.Fatalf("second call differs from Translate:\n%s", configDiff(second, want))
	}
	for i := range second.Backends {
		a, b := first.Backends[i], second.Backends[i]
		if a.Name != b.Name {
			t.Fatalf("backend %d: %s, then %s", i, a.Name, b.Name)
		}
		if affected[b.Name] {
			if sameBackendMemory(a, b) || reflect.DeepEqual(a.Servers, b.Servers) {
				t.Errorf("backend %s of the changed Service was not rebuilt", b.Name)
			}
			continue
		}
		if a != b {
			t.Errorf("backend %s is not the first result's backend", b.Name)
		}
	}
	if unsafe.SliceData(first.Backends) == unsafe.SliceData(second.Backends) {
		t.Error("the backends slice of the first result was reused although a backend changed")
	}
	for name, same := range map[string]bool{
		"Maps":         unsafe.SliceData(first.Maps) == unsafe.SliceData(second.Maps),
		"Certificates": unsafe.SliceData(first.Certificates) == unsafe.SliceData(second.Certificates),
		"CAFiles":      unsafe.SliceData(first.CAFiles) == unsafe.SliceData(second.CAFiles),
		"Routes":       unsafe.SliceData(first.Routes) == unsafe.SliceData(second.Routes),
	} {
		if !same {
			t.Errorf("%s is not the first result's slice", name)
		}
	}

	third, _ := tr.Translate(next)
	if unsafe.SliceData(third.Backends) != unsafe.SliceData(second.Backends) || unsafe.SliceData(third.Maps) != unsafe.SliceData(second.Maps) {
		t.Error("the same input again did not return the previous backends and maps")
	}

	// A Route on a new host changes the maps: they must not be reused.
	more := next
	more.Routes = append(slices.Clone(next.Routes), newRoute("ns-3", "new", "new.example.com", 99, withService("svc-3", nil)))
	fourth, _ := tr.Translate(more)
	if unsafe.SliceData(fourth.Maps) == unsafe.SliceData(third.Maps) || unsafe.SliceData(fourth.Routes) == unsafe.SliceData(third.Routes) {
		t.Error("maps and Route records were reused although a Route was added")
	}
	if want, _ := Translate(more, opts); !reflect.DeepEqual(fourth, want) {
		t.Fatalf("after adding a Route:\n%s", configDiff(fourth, want))
	}
}

// sameBackendMemory reports whether two backends are the same value: same string data, same Servers
// backing array, same pointers and Allowlist.
func sameBackendMemory(a, b *model.Backend) bool {
	return unsafe.StringData(a.Name) == unsafe.StringData(b.Name) &&
		unsafe.StringData(a.Route) == unsafe.StringData(b.Route) &&
		unsafe.SliceData(a.Servers) == unsafe.SliceData(b.Servers) && len(a.Servers) == len(b.Servers) &&
		(len(a.Servers) == 0 || unsafe.StringData(a.Servers[0].Name) == unsafe.StringData(b.Servers[0].Name)) &&
		a.Cookie == b.Cookie && a.TLS == b.TLS && a.RateLimit == b.RateLimit && a.Rewrite == b.Rewrite &&
		unsafe.SliceData(a.Allowlist) == unsafe.SliceData(b.Allowlist)
}

// TestTranslatorEqualCopies checks that new pointers with the same content give an equal result:
// the whole input deep-copied, then one Route replaced by a copy.
func TestTranslatorEqualCopies(t *testing.T) {
	in := reuseInput(t)
	opts := testOptions()
	tr := NewTranslator(opts)
	first, firstProblems := tr.Translate(in)
	copied := in.DeepCopy()
	second, problems := tr.Translate(copied)
	if !reflect.DeepEqual(first, second) || !reflect.DeepEqual(firstProblems, problems) {
		t.Fatalf("a deep copy of the input gave another result:\n%s", configDiff(second, first))
	}
	if unsafe.SliceData(first.Backends[0].Servers) == unsafe.SliceData(second.Backends[0].Servers) {
		t.Error("a backend was reused although its Route and objects are new pointers")
	}
	copied.Routes = slices.Clone(copied.Routes)
	copied.Routes[5] = copied.Routes[5].DeepCopy()
	third, _ := tr.Translate(copied)
	if !reflect.DeepEqual(third, first) {
		t.Fatalf("a Route replaced by a copy gave another result:\n%s", configDiff(third, first))
	}
	if unsafe.SliceData(third.Maps) == unsafe.SliceData(second.Maps) {
		t.Error("maps were reused although a Route was revalidated")
	}
}

// TestTranslatorDropsRemovedRoutes checks that the memo follows the latest input.
func TestTranslatorDropsRemovedRoutes(t *testing.T) {
	in := benchInput(30, 2)
	tr := NewTranslator(testOptions())
	tr.Translate(in)
	if len(tr.memo) != 30 {
		t.Fatalf("memo holds %d Routes, want 30", len(tr.memo))
	}
	in.Routes = in.Routes[:10]
	tr.Translate(in)
	if len(tr.memo) != 10 {
		t.Fatalf("memo holds %d Routes after removing 20, want 10", len(tr.memo))
	}
	checkMemoBound(t, tr, in)
}
