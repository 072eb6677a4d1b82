// Package runtime_test guards the boundary of the runtime packages: they talk to HAProxy and know the
// model, never Kubernetes (sync/ owns that).
package runtime_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRuntimeImportsNoKubernetes keeps k8s.io and OpenShift packages out of runtime/'s non-test files,
// and the haroute packages that import them (the root mapping package, sync/...).
func TestRuntimeImportsNoKubernetes(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "github.com/openshift/") || strings.HasPrefix(p, "sigs.k8s.io/") {
				t.Errorf("%s imports %q: runtime/ must not depend on Kubernetes", path, p)
			}
			// The root mapping package and sync/ pull in the Kubernetes client types transitively.
			if p == "github.com/haroute/haroute/mapping" || strings.HasPrefix(p, "github.com/haroute/haroute/sync/") {
				t.Errorf("%s imports %q: runtime/ must not depend on Kubernetes, even transitively", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: the walk is broken", checked)
	}
}
