package source

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping"
)

func route(ns, name, host string) string {
	return "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
		"\nspec:\n  host: " + host + "\n  to:\n    kind: Service\n    name: web\n---\n"
}

// startFolder runs a Folder on dir until the test ends, and checks that Run then returns nil.
func startFolder(t *testing.T, dir string) *Folder {
	t.Helper()
	f := NewFolder(dir, nil)
	runFolder(t, f)
	return f
}

// runFolder runs f until stop (or the end of the test): stop cancels Run and fails the test unless
// Run returns nil within 5 s. It may be called more than once.
func runFolder(t *testing.T, f *Folder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitFor waits, on Changes and at most 5 seconds, until cond holds for the Folder's snapshot.
func waitFor(t *testing.T, f *Folder, what string, cond func(mapping.Input, []FileError) bool) (mapping.Input, []FileError) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		in, errs := f.Snapshot()
		if cond(in, errs) {
			return in, errs
		}
		select {
		case <-f.Changes():
		case <-deadline:
			t.Fatalf("timed out waiting for %s; routes %v, errors %v", what, routeHosts(in), errs)
		}
	}
}

// routeHosts lists "ns/name=host" for every Route, in order.
func routeHosts(in mapping.Input) []string {
	var out []string
	for _, r := range in.Routes {
		out = append(out, r.Namespace+"/"+r.Name+"="+r.Spec.Host)
	}
	return out
}

func hostsAre(want ...string) func(mapping.Input, []FileError) bool {
	return func(in mapping.Input, errs []FileError) bool {
		return len(errs) == 0 && slices.Equal(routeHosts(in), want)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// Write then rename, so that the watcher never reads a half-written file.
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestFolderLifecycle(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), route("ns", "a", "a.example.com"))
	f := startFolder(t, dir)
	waitFor(t, f, "initial route", hostsAre("ns/a=a.example.com"))

	file := filepath.Join(dir, "b.yaml")
	write(t, file, route("ns", "b", "b.example.com"))
	waitFor(t, f, "added file", hostsAre("ns/a=a.example.com", "ns/b=b.example.com"))

	write(t, file, route("ns", "b", "b2.example.com"))
	waitFor(t, f, "edited file", hostsAre("ns/a=a.example.com", "ns/b=b2.example.com"))

	// Broken on line 4 of the second document: the last good Route stays.
	write(t, file, service("ns", "s")+"\napiVersion: v1\nkind: Service\nmetadata: [oops\n")
	_, errs := waitFor(t, f, "broken file", func(in mapping.Input, errs []FileError) bool {
		return len(errs) > 0
	})
	in, _ := f.Snapshot()
	if got := routeHosts(in); !slices.Equal(got, []string{"ns/a=a.example.com", "ns/b=b2.example.com"}) {
		t.Errorf("routes with a broken file = %v", got)
	}
	if len(in.Services) != 0 {
		t.Errorf("services of the broken content are used: %d", len(in.Services))
	}
	if len(errs) != 1 || errs[0].Path != file {
		t.Fatalf("errors = %v, want one for %s", errs, file)
	}
	if msg := errs[0].Err.Error(); !strings.Contains(msg, file+": document 2 (line 8): line 10") {
		t.Errorf("error %q does not name the file and line", msg)
	}

	write(t, file, route("ns", "b", "b3.example.com"))
	waitFor(t, f, "fixed file", hostsAre("ns/a=a.example.com", "ns/b=b3.example.com"))

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "deleted file", hostsAre("ns/a=a.example.com"))
}

func TestFolderNeverGoodFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "bad.yaml"), "kind: [")
	write(t, filepath.Join(dir, "notes.txt"), "kind: [")
	f := startFolder(t, dir)
	in, errs := waitFor(t, f, "error", func(_ mapping.Input, errs []FileError) bool { return len(errs) > 0 })
	if len(in.Routes) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Err.Error(), "bad.yaml: document 1 (line 1)") {
		t.Errorf("routes %v, errors %v", routeHosts(in), errs)
	}
}

func TestFolderNewSubdirectory(t *testing.T) {
	dir := t.TempDir()
	f := startFolder(t, dir)
	waitFor(t, f, "empty start", hostsAre())
	// The directory and its file appear at once; a file written later in it must be seen too.
	write(t, filepath.Join(dir, "sub", "deeper", "x.yaml"), route("ns", "x", "x.example.com"))
	waitFor(t, f, "file in new subdirectory", hostsAre("ns/x=x.example.com"))
	write(t, filepath.Join(dir, "sub", "deeper", "y.yaml"), route("ns", "y1", "y.example.com"))
	waitFor(t, f, "second file in the subdirectory", hostsAre("ns/x=x.example.com", "ns/y1=y.example.com"))
	// Editing in place (no rename) is seen as well.
	if err := os.WriteFile(filepath.Join(dir, "sub", "deeper", "y.yaml"), []byte(route("ns", "y1", "y2.example.com")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "in-place edit", hostsAre("ns/x=x.example.com", "ns/y1=y2.example.com"))
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "removed subdirectory", hostsAre())
}

// TestFolderConfigMapSwap mimics the kubelet updating a mounted ConfigMap: the data lives in a hidden
// timestamped directory, "..data" links to it and each key is a link through "..data"; an update
// writes a new directory and renames a new "..data" link over the old one.
func TestFolderConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "..v1", "routes.yaml"), route("ns", "r", "old.example.com"))
	if err := os.Symlink("..v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..data", "routes.yaml"), filepath.Join(dir, "routes.yaml")); err != nil {
		t.Fatal(err)
	}
	f := startFolder(t, dir)
	waitFor(t, f, "first version", hostsAre("ns/r=old.example.com"))

	write(t, filepath.Join(dir, "..v2", "routes.yaml"), route("ns", "r", "new.example.com"))
	if err := os.Symlink("..v2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..v1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "swapped version", hostsAre("ns/r=new.example.com"))

	// An edit made directly in the link's target directory is seen too.
	if err := os.WriteFile(filepath.Join(dir, "..v2", "routes.yaml"), []byte(route("ns", "r", "edited.example.com")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "edited target", hostsAre("ns/r=edited.example.com"))
}

func TestFolderDuplicates(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	write(t, a, route("ns", "a", "a.example.com"))
	write(t, b, route("ns", "b", "b.example.com"))
	f := startFolder(t, dir)
	waitFor(t, f, "both files", hostsAre("ns/a=a.example.com", "ns/b=b.example.com"))

	// b now also defines ns/a: b (the later file) is left out entirely.
	write(t, b, route("ns", "b", "b2.example.com")+route("ns", "a", "other.example.com"))
	in, errs := waitFor(t, f, "conflict", func(_ mapping.Input, errs []FileError) bool { return len(errs) > 0 })
	if got := routeHosts(in); !slices.Equal(got, []string{"ns/a=a.example.com"}) {
		t.Errorf("routes = %v", got)
	}
	if len(errs) != 1 || errs[0].Path != b || !strings.Contains(errs[0].Err.Error(), "Route ns/a is already defined in "+a) {
		t.Errorf("errors = %v", errs)
	}

	// Defined twice within one file: that content is broken, b's last good content (which conflicts)
	// stays out.
	write(t, b, route("ns", "b", "b3.example.com")+route("ns", "b", "b3.example.com"))
	waitFor(t, f, "duplicate within b", func(in mapping.Input, errs []FileError) bool {
		return len(errs) == 1 && strings.Contains(errs[0].Err.Error(), "Route ns/b is defined twice") &&
			strings.Contains(errs[0].Err.Error(), "last good content is not used either") &&
			slices.Equal(routeHosts(in), []string{"ns/a=a.example.com"})
	})

	// Removing the conflict in a brings b's last good content back into force.
	write(t, a, route("ns", "c", "c.example.com"))
	waitFor(t, f, "conflict gone", func(in mapping.Input, errs []FileError) bool {
		return len(errs) == 1 && !strings.Contains(errs[0].Err.Error(), "already defined") &&
			slices.Equal(routeHosts(in), []string{"ns/c=c.example.com", "ns/b=b2.example.com", "ns/a=other.example.com"})
	})
}

func TestFolderSnapshotSharesUnchangedObjects(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), route("ns", "a", "a.example.com"))
	write(t, filepath.Join(dir, "b.yaml"), route("ns", "b", "b.example.com"))
	f := startFolder(t, dir)
	in, _ := waitFor(t, f, "routes", hostsAre("ns/a=a.example.com", "ns/b=b.example.com"))
	in.Routes[0] = nil // the lists are the caller's
	again, _ := f.Snapshot()
	if again.Routes[0] == nil {
		t.Fatal("Snapshot shares its lists")
	}
	first := again.Routes
	write(t, filepath.Join(dir, "b.yaml"), route("ns", "b", "b2.example.com"))
	next, _ := waitFor(t, f, "the changed route", hostsAre("ns/a=a.example.com", "ns/b=b2.example.com"))
	if next.Routes[0] != first[0] {
		t.Error("the unchanged Route (stamped with its age) got a new pointer")
	}
	if next.Routes[1] == first[1] || first[1].Spec.Host != "b.example.com" {
		t.Error("the changed Route kept its pointer, or the old one was modified")
	}
}

func TestFolderRunErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), route("ns", "a", "a.example.com"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := NewFolder(filepath.Join(dir, "missing"), nil).Run(ctx); err == nil {
		t.Error("Run on a missing folder: no error")
	}
	if err := NewFolder(filepath.Join(dir, "a.yaml"), nil).Run(ctx); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Run on a file: %v", err)
	}
}

func TestFolderRunStopsOnCancel(t *testing.T) {
	f := NewFolder(t.TempDir(), nil)
	stop := runFolder(t, f)
	select {
	case <-f.Changes(): // the first scan is done
	case <-time.After(5 * time.Second):
		t.Fatal("no signal after the first scan")
	}
	stop()
	if err := f.Run(context.Background()); err == nil {
		t.Error("second Run: no error")
	}
}
