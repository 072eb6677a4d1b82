package source

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/mapping"
)

// clockBase is the first reading of tickingClock, less a second.
var clockBase = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// tickingClock returns a clock, safe to read from Run's goroutine, whose every reading is one second
// after the previous one, and a function that says how often it was read.
func tickingClock() (now func() time.Time, reads func() int64) {
	var n atomic.Int64
	return func() time.Time { return clockBase.Add(time.Duration(n.Add(1)) * time.Second) }, n.Load
}

// startAged runs a Folder on dir with a ticking clock until the test ends.
func startAged(t *testing.T, dir string) *Folder {
	t.Helper()
	f := NewFolder(dir, nil)
	f.now, _ = tickingClock()
	runFolder(t, f)
	return f
}

// ages returns the creationTimestamp of every Route of in by "namespace/name".
func ages(in mapping.Input) map[string]time.Time {
	out := map[string]time.Time{}
	for _, r := range in.Routes {
		out[r.Namespace+"/"+r.Name] = r.CreationTimestamp.Time
	}
	return out
}

// claimRejections translates in with the default options and returns the Routes rejected with
// HostAlreadyClaimed, as "namespace/name", sorted.
func claimRejections(in mapping.Input) []string {
	_, problems := mapping.Translate(in, mapping.DefaultOptions())
	var out []string
	for _, p := range problems {
		if p.Reason == mapping.ReasonHostAlreadyClaimed {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// labelled adds the label edit=v to the first document of a manifest made by route.
func labelled(manifest, v string) string {
	return strings.Replace(manifest, "metadata:\n", "metadata:\n  labels:\n    edit: \""+v+"\"\n", 1)
}

// createdAt adds an explicit creationTimestamp to the first document of a manifest made by route.
func createdAt(manifest, ts string) string {
	return strings.Replace(manifest, "metadata:\n", "metadata:\n  creationTimestamp: \""+ts+"\"\n", 1)
}

// hasLabel is a waitFor condition: the Route ns/name is there and has the label edit=v.
func hasLabel(ns, name, v string) func(mapping.Input, []FileError) bool {
	return func(in mapping.Input, errs []FileError) bool {
		for _, r := range in.Routes {
			if r.Namespace == ns && r.Name == name {
				return len(errs) == 0 && r.Labels["edit"] == v
			}
		}
		return false
	}
}

// TestFolderAgesFirstLoad: the Routes of the first scan, in several files, are all as old as that
// scan, so that the translation's tie-break (namespace/name) decides between them as before.
func TestFolderAgesFirstLoad(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), route("shop", "web", "shop.example.test")+route("b", "x", "x.example.test"))
	write(t, filepath.Join(dir, "sub", "b.yaml"), route("aaa-other", "web", "shop.example.test"))
	f := startAged(t, dir)
	in, _ := waitFor(t, f, "first load", hostsAre("shop/web=shop.example.test", "b/x=x.example.test", "aaa-other/web=shop.example.test"))
	want := clockBase.Add(time.Second)
	for key, at := range ages(in) {
		if !at.Equal(want) {
			t.Errorf("%s is stamped %v, want the first scan's %v", key, at, want)
		}
	}
	if got := claimRejections(in); !slices.Equal(got, []string{"shop/web"}) {
		t.Errorf("rejected at the first load %v, want shop/web (namespace order between equally old Routes)", got)
	}
}

// TestFolderNewFileCannotTakeHost: a Route added later is younger than the Routes already there, and
// keeps its own age across edits and moves; one that leaves and comes back is young again.
func TestFolderNewFileCannotTakeHost(t *testing.T) {
	dir := t.TempDir()
	shop, other := filepath.Join(dir, "shop.yaml"), filepath.Join(dir, "other.yaml")
	write(t, shop, route("shop", "web", "shop.example.test"))
	f := startAged(t, dir)
	in, _ := waitFor(t, f, "first load", hostsAre("shop/web=shop.example.test"))
	first := ages(in)["shop/web"]

	write(t, other, route("aaa-other", "web", "shop.example.test"))
	in, _ = waitFor(t, f, "the new file", hostsAre("aaa-other/web=shop.example.test", "shop/web=shop.example.test"))
	added := ages(in)["aaa-other/web"]
	if !first.Before(added) || !ages(in)["shop/web"].Equal(first) {
		t.Fatalf("ages after the new file: %v, want shop/web at %v and aaa-other/web later", ages(in), first)
	}
	if got := claimRejections(in); !slices.Equal(got, []string{"aaa-other/web"}) {
		t.Fatalf("rejected %v, want the new aaa-other/web", got)
	}

	// Edits of either file keep both ages.
	write(t, shop, labelled(route("shop", "web", "shop.example.test"), "1"))
	waitFor(t, f, "the edit of shop.yaml", hasLabel("shop", "web", "1"))
	write(t, other, labelled(route("aaa-other", "web", "shop.example.test"), "1"))
	in, _ = waitFor(t, f, "the edit of other.yaml", hasLabel("aaa-other", "web", "1"))
	if a := ages(in); !a["shop/web"].Equal(first) || !a["aaa-other/web"].Equal(added) {
		t.Fatalf("ages after edits: %v, want shop/web %v, aaa-other/web %v", a, first, added)
	}

	// A move by rename, into a subdirectory, keeps the age.
	moved := filepath.Join(dir, "z", "shop.yaml")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(shop, moved); err != nil {
		t.Fatal(err)
	}
	// (The snapshot looks the same after the rename: the checks below, after later scans, cover it.)
	// A move by copy, then removal of the first copy (the second is left out while both exist).
	other2 := filepath.Join(dir, "other2.yaml")
	write(t, other2, labelled(route("aaa-other", "web", "shop.example.test"), "2"))
	waitFor(t, f, "the copy", func(_ mapping.Input, errs []FileError) bool { return len(errs) == 1 && errs[0].Path == other2 })
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	in, _ = waitFor(t, f, "the removal of the first copy", hasLabel("aaa-other", "web", "2"))
	if a := ages(in); !a["shop/web"].Equal(first) || !a["aaa-other/web"].Equal(added) {
		t.Fatalf("ages after moves: %v, want shop/web %v, aaa-other/web %v", a, first, added)
	}
	if got := claimRejections(in); !slices.Equal(got, []string{"aaa-other/web"}) {
		t.Fatalf("rejected after the moves %v, want aaa-other/web", got)
	}

	// shop/web leaves and comes back: it is now the younger one and loses the host.
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	in, _ = waitFor(t, f, "the removal of shop/web", hostsAre("aaa-other/web=shop.example.test"))
	if got := claimRejections(in); len(got) != 0 {
		t.Fatalf("rejected with shop/web gone: %v", got)
	}
	write(t, shop, route("shop", "web", "shop.example.test"))
	in, _ = waitFor(t, f, "shop/web back", hostsAre("aaa-other/web=shop.example.test", "shop/web=shop.example.test"))
	if a := ages(in); !a["aaa-other/web"].Equal(added) || !added.Before(a["shop/web"]) {
		t.Fatalf("ages with shop/web back: %v, want aaa-other/web %v and shop/web later", a, added)
	}
	if got := claimRejections(in); !slices.Equal(got, []string{"shop/web"}) {
		t.Fatalf("rejected with shop/web back %v, want shop/web", got)
	}
}

// TestFolderExplicitCreationTimestamp: a creationTimestamp written in a manifest is kept, for a Route
// of the first load and for one added later, and decides which Route is older.
func TestFolderExplicitCreationTimestamp(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "shop.yaml"), createdAt(route("shop", "web", "shop.example.test"), "2020-01-01T00:00:00Z"))
	f := startAged(t, dir)
	in, _ := waitFor(t, f, "first load", hostsAre("shop/web=shop.example.test"))
	if at := ages(in)["shop/web"]; !at.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("shop/web is stamped %v, want its own creationTimestamp", at)
	}
	write(t, filepath.Join(dir, "other.yaml"), createdAt(route("zzz-other", "web", "shop.example.test"), "2019-06-01T00:00:00Z"))
	in, _ = waitFor(t, f, "the new file", hostsAre("zzz-other/web=shop.example.test", "shop/web=shop.example.test"))
	if at := ages(in)["zzz-other/web"]; !at.Equal(time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("zzz-other/web is stamped %v, want its own creationTimestamp", at)
	}
	if got := claimRejections(in); !slices.Equal(got, []string{"shop/web"}) {
		t.Fatalf("rejected %v, want shop/web (zzz-other/web says it is older)", got)
	}
}

// TestStampAges checks stampAges alone: what it remembers is bounded by the Routes of the last scan,
// the clock is read once per scan that shows new Routes, and the decoded Routes are left as decoded.
func TestStampAges(t *testing.T) {
	f := NewFolder(t.TempDir(), nil)
	var reads func() int64
	f.now, reads = tickingClock()
	newRoute := func(ns, name string) *routev1.Route {
		return &routev1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	a, b := newRoute("ns", "a"), newRoute("ns", "b")
	in := mapping.Input{Routes: []*routev1.Route{a, b}}
	f.stampAges(&in)
	if !a.CreationTimestamp.IsZero() || !b.CreationTimestamp.IsZero() {
		t.Fatal("stampAges modified the decoded Routes")
	}
	if reads() != 1 || len(f.ages) != 2 || !in.Routes[0].CreationTimestamp.Equal(&in.Routes[1].CreationTimestamp) {
		t.Fatalf("first scan: %d clock reads, %d remembered, ages %v", reads(), len(f.ages), ages(in))
	}
	// Same Routes again: no clock read, same ages.
	again := mapping.Input{Routes: []*routev1.Route{b, a}}
	f.stampAges(&again)
	if reads() != 1 || !again.Routes[1].CreationTimestamp.Equal(&in.Routes[0].CreationTimestamp) {
		t.Fatalf("second scan: %d clock reads, ages %v", reads(), ages(again))
	}
	// Nothing left: nothing remembered; a comes back younger.
	f.stampAges(&mapping.Input{})
	if len(f.ages) != 0 {
		t.Fatalf("remembered after an empty scan: %v", f.ages)
	}
	back := mapping.Input{Routes: []*routev1.Route{a}}
	f.stampAges(&back)
	if reads() != 2 || !in.Routes[0].CreationTimestamp.Before(&back.Routes[0].CreationTimestamp) {
		t.Fatalf("a back: %d clock reads, age %v after %v", reads(), back.Routes[0].CreationTimestamp, in.Routes[0].CreationTimestamp)
	}
}
