package source

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping"
)

// runCached runs a Folder on dir with the cache in cacheDir and a clock that stands still, until stop
// (or the end of the test); stop returns once Run has.
func runCached(t *testing.T, dir, cacheDir string) (f *Folder, logs *logBuffer, stop func()) {
	t.Helper()
	f, _, logs = newClockedFolder(dir)
	f.SetCacheDir(cacheDir)
	stop = runFolder(t, f)
	return f, logs, stop
}

// cacheEntries returns the manifest paths of the entries in cacheDir, sorted, and checks the modes.
func cacheEntries(t *testing.T, cacheDir string) []string {
	t.Helper()
	ents, err := os.ReadDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ents {
		full := filepath.Join(cacheDir, e.Name())
		st, err := os.Stat(full)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != cacheFileMode {
			t.Errorf("%s has mode %v, want %v", full, st.Mode().Perm(), cacheFileMode)
		}
		entry, err := readEntry(full)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, entry.Path)
	}
	slices.Sort(paths)
	return paths
}

// TestFolderCacheRestart: a file that does not decode when the Folder starts keeps the objects of its
// content before the restart, with its FileError and a warning; its own content replaces them once it
// decodes.
func TestFolderCacheRestart(t *testing.T) {
	dir, cacheDir := t.TempDir(), filepath.Join(t.TempDir(), "haroute", "manifests-cache")
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	write(t, a, route("ns", "a1", "a1.example.com")+route("ns", "a2", "a2.example.com"))
	write(t, b, route("ns", "b", "b.example.com"))
	all := []string{"ns/a1=a1.example.com", "ns/a2=a2.example.com", "ns/b=b.example.com"}

	f, _, stop := runCached(t, dir, cacheDir)
	waitFor(t, f, "first load", hostsAre(all...))
	stop()
	if got := cacheEntries(t, cacheDir); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("cache entries %v, want %v", got, []string{a, b})
	}
	if st, err := os.Stat(cacheDir); err != nil || st.Mode().Perm() != cacheDirMode {
		t.Fatalf("cache directory: %v, %v", st, err)
	}

	// Broken while haroute was down.
	write(t, a, route("ns", "a1", "a1.example.com")+"kind: [")
	f, logs, stop := runCached(t, dir, cacheDir)
	in, errs := waitFor(t, f, "restart with a.yaml broken", func(_ mapping.Input, errs []FileError) bool { return len(errs) > 0 })
	if got := routeHosts(in); !slices.Equal(got, all) {
		t.Errorf("Routes after the restart %v, want %v", got, all)
	}
	if len(errs) != 1 || errs[0].Path != a || !strings.Contains(errs[0].Err.Error(), "document 2 (line 12)") ||
		!strings.Contains(errs[0].Err.Error(), "content last seen before the restart") {
		t.Errorf("errors %v, want a.yaml's, saying where its objects come from", errs)
	}
	if n := logs.count("come from its content last seen before the restart"); n != 1 {
		t.Errorf("the use of the cache was logged %d times, want 1:\n%s", n, logs)
	}

	// Fixed: its own content is in force, and the cache holds it.
	fixed := route("ns", "a3", "a3.example.com")
	write(t, a, fixed)
	waitFor(t, f, "a.yaml fixed", hostsAre("ns/a3=a3.example.com", "ns/b=b.example.com"))
	stop()
	entry, err := readEntry(filepath.Join(cacheDir, entryName(a)))
	if err != nil || entry.Path != a || string(entry.Data) != fixed {
		t.Errorf("a.yaml's entry after the fix: %+v, %v", entry, err)
	}
}

// TestFolderCacheHeldAtStart: a file found empty at start (rewritten in place while haroute was
// down) is held with the content before the restart, as a file emptied while running is.
func TestFolderCacheHeldAtStart(t *testing.T) {
	dir, cacheDir := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	a := filepath.Join(dir, "a.yaml")
	write(t, a, route("ns", "a", "a.example.com"))
	f, _, stop := runCached(t, dir, cacheDir)
	waitFor(t, f, "first load", hostsAre("ns/a=a.example.com"))
	stop()

	writeInPlace(t, a, "")
	f, _, stop = runCached(t, dir, cacheDir)
	waitFor(t, f, "restart with a.yaml empty", heldFor(a, "1 object", "ns/a=a.example.com"))
	// Back before the settle time: in force, and the cache holds the same bytes.
	writeInPlace(t, a, route("ns", "a", "a.example.com")+"\n")
	waitFor(t, f, "a.yaml complete", hostsAre("ns/a=a.example.com"))
	stop()
	if entry, err := readEntry(filepath.Join(cacheDir, entryName(a))); err != nil || string(entry.Data) != route("ns", "a", "a.example.com")+"\n" {
		t.Errorf("a.yaml's entry: %q, %v", entry.Data, err)
	}
}

// TestFolderCachePrune: the entry of a file deleted while haroute was down is removed at the first
// scan and never used; the entry of a file deleted while it runs is removed too; entries that cannot
// be trusted are removed.
func TestFolderCachePrune(t *testing.T) {
	dir, cacheDir := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	a, b, c := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")
	write(t, a, route("ns", "a", "a.example.com"))
	write(t, b, route("ns", "b", "b.example.com"))
	write(t, c, route("ns", "c", "c.example.com"))
	f, _, stop := runCached(t, dir, cacheDir)
	waitFor(t, f, "first load", hostsAre("ns/a=a.example.com", "ns/b=b.example.com", "ns/c=c.example.com"))
	stop()

	// While down: b.yaml is deleted; c's entry is copied over a's (stored under another path's name);
	// a damaged entry and a temporary file appear.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	cEntry, err := os.ReadFile(filepath.Join(cacheDir, entryName(c)))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		entryName(a):             string(cEntry),
		entryName("/x/y.yaml"):   `{"version": 1, "path": "/x/y.ya`,
		".entry-123":             "partial",
		entryName("/old/v.yaml"): `{"version": 99, "path": "/old/v.yaml", "data": ""}`,
	} {
		if err := os.WriteFile(filepath.Join(cacheDir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(t, a, "kind: [")

	f, _, stop = runCached(t, dir, cacheDir)
	in, _ := waitFor(t, f, "restart", func(_ mapping.Input, errs []FileError) bool { return len(errs) > 0 })
	if got := routeHosts(in); !slices.Equal(got, []string{"ns/c=c.example.com"}) {
		t.Errorf("Routes after the restart %v, want c's only (a's entry was not its own, b is gone)", got)
	}
	// b.yaml comes back broken: its old entry is gone, so nothing of it is used.
	write(t, b, "kind: [")
	waitFor(t, f, "b.yaml back broken", func(in mapping.Input, errs []FileError) bool {
		return len(errs) == 2 && slices.Equal(routeHosts(in), []string{"ns/c=c.example.com"})
	})
	if err := os.Remove(c); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "c.yaml deleted", func(in mapping.Input, errs []FileError) bool { return len(in.Routes) == 0 })
	stop()
	names, err := os.ReadDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Errorf("cache entries left: %v", names)
	}
}

// TestFolderCacheWriteError: a cache that cannot be written is logged and the Folder works on.
func TestFolderCacheWriteError(t *testing.T) {
	dir, parent := t.TempDir(), t.TempDir()
	cacheDir := filepath.Join(parent, "cache")
	if err := os.WriteFile(cacheDir, []byte("a file, not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.yaml"), route("ns", "a", "a.example.com"))
	f, logs, _ := runCached(t, dir, cacheDir)
	waitFor(t, f, "first load", hostsAre("ns/a=a.example.com"))
	write(t, filepath.Join(dir, "a.yaml"), route("ns", "a", "a2.example.com"))
	waitFor(t, f, "an edit", hostsAre("ns/a=a2.example.com"))
	// The cache is written after the publication: wait (bounded) for the second failure's line.
	for i := 0; logs.count("manifest cache not written") < 2; i++ {
		if i == 500 {
			t.Fatalf("cache write errors not logged for each new content:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCacheEntryFormat pins what an entry holds: the format version, the path and the bytes.
func TestCacheEntryFormat(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "h", "haroute", "cache")
	c := newManifestCache(cacheDir, nil)
	if err := c.write("/m/a.yaml", []byte("kind: List\n")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cacheDir, entryName("/m/a.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["version"] != float64(1) || raw["path"] != "/m/a.yaml" || raw["data"] != "a2luZDogTGlzdAo=" {
		t.Errorf("entry %s", data)
	}
	if st, err := os.Stat(filepath.Dir(cacheDir)); err != nil || st.Mode().Perm() != cacheParentMode {
		t.Errorf("parent directory: %v, %v", st, err)
	}
}
