package mapping_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbidden lists the imports that would make translation or rendering impure: I/O, the network,
// processes, Kubernetes clients and randomness. net/netip is pure value types and stays allowed.
var forbidden = []string{
	"os", "os/exec", "os/signal", "io/ioutil", "syscall", "net", "net/http", "net/rpc", "net/smtp",
	"math/rand", "math/rand/v2", "crypto/rand", "log",
	"k8s.io/client-go", "github.com/openshift/client-go", "github.com/haproxytech/client-native",
}

func isForbidden(path string) bool {
	if path == "net/netip" {
		return false
	}
	for _, f := range forbidden {
		if path == f || strings.HasPrefix(path, f+"/") {
			return true
		}
	}
	return false
}

// TestMappingIsPure keeps mapping/ (translation, rendering, planning) free of I/O, network, processes,
// clients, randomness and the clock in its non-test files.
func TestMappingIsPure(t *testing.T) {
	fset := token.NewFileSet()
	visited := map[string]bool{} // directories (packages) with a checked file
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visited[filepath.ToSlash(filepath.Dir(path))] = true
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if isForbidden(p) {
				t.Errorf("%s imports %q: mapping/ must stay pure (no I/O, network, processes, clients, randomness)", path, p)
			}
		}
		full, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(full, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since") {
					t.Errorf("%s: uses time.%s: mapping/ must not read the clock", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{".", "model", "plan", "render", "routetest", "mappingtest"} {
		if !visited[pkg] {
			t.Errorf("no file checked in package %q: the walk is broken", pkg)
		}
	}
}

// TestPurityCheckCatchesViolations proves the checker is not vacuous.
func TestPurityCheckCatchesViolations(t *testing.T) {
	for _, p := range []string{"os", "os/exec", "net", "net/http", "k8s.io/client-go/kubernetes", "math/rand"} {
		if !isForbidden(p) {
			t.Errorf("%q should be forbidden", p)
		}
	}
	for _, p := range []string{"net/netip", "strings", "k8s.io/api/core/v1", "osx"} {
		if isForbidden(p) {
			t.Errorf("%q should be allowed", p)
		}
	}
}
