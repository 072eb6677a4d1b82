package source

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
)

// symlink creates the symbolic link link → target, failing the test on error.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// realDir returns dir with its symbolic links resolved, as listFolder names link targets' directories.
func realDir(t *testing.T, dir string) string {
	t.Helper()
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return resolved
}

// ruleTree builds a folder with an example of every listing rule and returns it with the folder that
// holds the target of its link to the outside.
func ruleTree(t *testing.T) (dir, outside string) {
	t.Helper()
	dir = writeFiles(t, map[string]string{
		"b.yaml":                 service("ns", "b"),
		"a.yml":                  service("ns", "a"),
		"notes.txt":              "not: [yaml",
		".hidden.yaml":           "not: [yaml",
		".git/x.yaml":            "not: [yaml",
		"sub/c.json":             `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c", "namespace": "ns"}}`,
		"sub/d.YAML":             service("ns", "d"),
		"sub/.cache/y.yaml":      "not: [yaml",
		"sub/deeper/f.yml":       service("ns", "f"),
		"..2024_01_01/e.yaml":    service("ns", "e"),
		"..2024_01_01/notes.txt": "not: [yaml",
	})
	// A mounted ConfigMap: a hidden data directory behind "..data", visible links through "..data".
	symlink(t, "..2024_01_01", filepath.Join(dir, "..data"))
	symlink(t, filepath.Join("..data", "e.yaml"), filepath.Join(dir, "e.yaml"))
	// A link to a directory, even one with a manifest's name, is not followed.
	symlink(t, "sub", filepath.Join(dir, "loop.yaml"))
	symlink(t, "sub", filepath.Join(dir, "subdir"))
	// A link to a file outside the folder is read, and its target's directory watched.
	outside = writeFiles(t, map[string]string{"g.yaml": service("ns", "g")})
	symlink(t, filepath.Join(outside, "g.yaml"), filepath.Join(dir, "link.yaml"))
	// A dangling link is left out.
	symlink(t, "missing.yaml", filepath.Join(dir, "dangling.yaml"))
	return dir, outside
}

// TestListFolderRules checks the rules LoadDir and Folder share: which files are manifests, in what
// order, and which directories are watched.
func TestListFolderRules(t *testing.T) {
	dir, outside := ruleTree(t)
	l := listFolder(dir)
	if len(l.problems) != 0 || len(l.unlisted) != 0 {
		t.Fatalf("problems %v, unlisted %v", l.problems, l.unlisted)
	}
	var files []string
	for _, f := range l.files {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	wantFiles := []string{"a.yml", "b.yaml", "e.yaml", "link.yaml", "sub/c.json", "sub/d.YAML", "sub/deeper/f.yml"}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("files %v, want %v", files, wantFiles)
	}
	wantDirs := []string{dir, filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "deeper"),
		realDir(t, filepath.Join(dir, "..2024_01_01")), realDir(t, outside)}
	slices.Sort(wantDirs)
	if !slices.Equal(l.dirs, wantDirs) {
		t.Errorf("dirs %v, want %v", l.dirs, wantDirs)
	}
	// Every file read is watched: its own directory and, for a link, its target's.
	for _, f := range l.files {
		if !slices.Contains(l.dirs, filepath.Dir(f)) {
			t.Errorf("%s is read but its directory is not watched", f)
		}
		if resolved := realDir(t, f); !slices.Contains(l.dirs, filepath.Dir(resolved)) {
			t.Errorf("%s is read but the directory of %s is not watched", f, resolved)
		}
	}
}

// TestLoadDirAndFolderAgree checks that a one-shot read and a watched folder take the same objects
// from the same folder.
func TestLoadDirAndFolderAgree(t *testing.T) {
	dir, _ := ruleTree(t)
	loaded, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	f := startFolder(t, dir)
	watched, errs := waitFor(t, f, "the first scan", func(mapping.Input, []FileError) bool { return f.HasSynced() })
	if len(errs) != 0 {
		t.Fatalf("Folder errors %v", errs)
	}
	names := func(in mapping.Input) string {
		var out []string
		for _, s := range in.Services {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	if got, want := names(loaded), "a,b,e,g,c,d,f"; got != want {
		t.Errorf("LoadDir services %s, want %s", got, want)
	}
	if got, want := names(watched), names(loaded); got != want {
		t.Errorf("Folder services %s, LoadDir %s", got, want)
	}
}

// TestListFolderThroughLink checks that a folder given as a symbolic link is listed (a watch on it
// follows the link too), its files named under the link.
func TestListFolderThroughLink(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": service("ns", "a"), "sub/b.yaml": service("ns", "b")})
	link := filepath.Join(t.TempDir(), "manifests")
	symlink(t, dir, link)
	l := listFolder(link)
	want := []string{filepath.Join(link, "a.yaml"), filepath.Join(link, "sub", "b.yaml")}
	if !slices.Equal(l.files, want) || len(l.problems) != 0 {
		t.Errorf("files %v (problems %v), want %v", l.files, l.problems, want)
	}
	if !slices.Equal(l.dirs, []string{link, filepath.Join(link, "sub")}) {
		t.Errorf("dirs %v", l.dirs)
	}
	in, err := LoadDir(link)
	if err != nil || len(in.Services) != 2 {
		t.Errorf("LoadDir through a link: %d services, %v", len(in.Services), err)
	}
}

// TestLinkLoopIsAFileError checks that a link that cannot be followed is a manifest whose reading
// fails, in LoadDir and in Folder alike, rather than a file silently left out.
func TestLinkLoopIsAFileError(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": service("ns", "a")})
	loop := filepath.Join(dir, "loop.yaml")
	symlink(t, "loop.yaml", loop)
	if l := listFolder(dir); !slices.Contains(l.files, loop) {
		t.Errorf("files %v, want the looping link listed", l.files)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "loop.yaml") {
		t.Errorf("LoadDir error %v, want one naming loop.yaml", err)
	}
	f := startFolder(t, dir)
	waitFor(t, f, "an error for the loop", func(in mapping.Input, errs []FileError) bool {
		return len(in.Services) == 1 && len(errs) == 1 && errs[0].Path == loop
	})
}

// TestFolderDanglingLinkTarget checks that a dangling link is left out until its target appears, and
// that the target's appearance alone is noticed.
func TestFolderDanglingLinkTarget(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": route("ns", "a", "a.example.com")})
	outside := t.TempDir()
	symlink(t, filepath.Join(outside, "b.yaml"), filepath.Join(dir, "b.yaml"))
	if _, err := LoadDir(dir); err != nil {
		t.Errorf("LoadDir with a dangling link: %v", err)
	}
	f := startFolder(t, dir)
	waitFor(t, f, "the dangling link left out", hostsAre("ns/a=a.example.com"))
	write(t, filepath.Join(outside, "b.yaml"), route("ns", "b", "b.example.com"))
	waitFor(t, f, "the link's new target", hostsAre("ns/a=a.example.com", "ns/b=b.example.com"))
}

// TestListFolderUnreadableDirectory checks that a directory that cannot be listed is reported and
// does not stop the listing.
func TestListFolderUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("directory permissions do not bind root")
	}
	dir := writeFiles(t, map[string]string{"a.yaml": service("ns", "a"), "locked/b.yaml": service("ns", "b"), "z.yaml": service("ns", "z")})
	locked := filepath.Join(dir, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	l := listFolder(dir)
	if want := []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "z.yaml")}; !slices.Equal(l.files, want) {
		t.Errorf("files %v, want %v", l.files, want)
	}
	if len(l.problems) != 1 || l.problems[0].Path != locked || !slices.Equal(l.unlisted, []string{locked}) {
		t.Errorf("problems %v, unlisted %v", l.problems, l.unlisted)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "listing manifests") {
		t.Errorf("LoadDir error %v", err)
	}
}
