package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func service(ns, name string) string {
	return "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\n---\n"
}

// writeFiles creates files (relative path → content) under a new temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDirMergesInOrder(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.yaml":            service("ns", "b"),
		"a.yml":             service("ns", "a"),
		"sub/c.json":        `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c", "namespace": "ns"}}`,
		"sub/d.YAML":        service("ns", "d"),
		"notes.txt":         "not: [yaml",
		".hidden.yaml":      "not: [yaml",
		".git/x.yaml":       "not: [yaml",
		"sub/.cache/y.yaml": "not: [yaml",
	})
	// A mounted ConfigMap: hidden data directory, visible symbolic links to its files.
	if err := os.Mkdir(filepath.Join(dir, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "..data", "e.yaml"), []byte(service("ns", "e")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..data", "e.yaml"), filepath.Join(dir, "e.yaml")); err != nil {
		t.Fatal(err)
	}
	// A link to a directory is not followed.
	if err := os.Symlink("sub", filepath.Join(dir, "loop.yaml")); err != nil {
		t.Fatal(err)
	}

	in, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	var names []string
	for _, s := range in.Services {
		names = append(names, s.Name)
	}
	if got, want := strings.Join(names, ","), "a,b,e,c,d"; got != want {
		t.Errorf("services = %s, want %s", got, want)
	}
}

func TestLoadDirEmpty(t *testing.T) {
	in, err := LoadDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Routes)+len(in.Services)+len(in.EndpointSlices)+len(in.Namespaces)+len(in.Secrets) != 0 {
		t.Errorf("objects from an empty directory: %+v", in)
	}
}

func TestLoadDirErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name:  "invalid manifest names the file",
			files: map[string]string{"ok.yaml": service("ns", "a"), "sub/bad.yaml": "apiVersion: v1\nkind: Service\nmetadata: {}\n"},
			want:  []string{filepath.Join("sub", "bad.yaml") + ": document 1 (line 1): metadata.name is missing"},
		},
		{
			name:  "duplicate in two files",
			files: map[string]string{"a.yaml": service("ns", "web"), "b.yaml": service("other", "web") + service("ns", "web")},
			want:  []string{"Service ns/web is defined in both ", "a.yaml and ", "b.yaml"},
		},
		{
			name:  "duplicate in one file",
			files: map[string]string{"a.yaml": service("ns", "web") + service("ns", "web")},
			want:  []string{"Service ns/web is defined twice in ", "a.yaml"},
		},
		{
			name: "duplicate namespace, default namespace",
			files: map[string]string{
				"a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n" + service("", "x"),
				"b.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n" + service("default", "x"),
			},
			want: []string{"Service default/x is defined in both ", "(and 1 more duplicate objects)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			_, err := LoadDir(dir)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadDirNotADirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": service("ns", "a")})
	if _, err := LoadDir(filepath.Join(dir, "a.yaml")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("LoadDir(file) error = %v", err)
	}
	if _, err := LoadDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("LoadDir(missing) gave no error")
	}
}
