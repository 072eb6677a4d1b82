package main

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// module is the import path of the tree's module.
const module = "github.com/haroute/haroute"

// layerOrder names the product's areas from the floor up: a package may import its own layer and
// those below, never one above.
const layerOrder = "mapping runtime inspect sync cmd"

// neutralKit is the neutral test kit; it and e2e/ are test support, which product code (the layers)
// must not import.
const neutralKit = "internal/testkit"

// Package is one directory of Go files of the module.
type Package struct {
	// Path is the directory, relative to the module root, slash-separated ("runtime/socket").
	Path string
	// Imports are the module's packages its non-test files import; TestImports those its test files
	// import (both relative paths, sorted, without itself).
	Imports, TestImports []string
	// Lines and TestLines count the lines of its non-test and test files.
	Lines, TestLines int
	// Floor is the length of its longest chain of non-test imports down to a package importing
	// nothing of the module (0 for such a package); set by Load.
	Floor int
}

// Graph is the module's packages by path.
type Graph map[string]*Package

// Load reads every Go file under root (testdata, vendor and hidden folders left out, and folders
// holding a go.mod of another module), whatever their build tags, and computes the floors. It fails on
// an import cycle among non-test imports.
func Load(root string) (Graph, error) {
	g := Graph{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		return g.addFile(fset, root, path)
	})
	if err != nil {
		return nil, fmt.Errorf("layers: read %s: %w", root, err)
	}
	for _, p := range g {
		slices.Sort(p.Imports)
		p.Imports = slices.Compact(p.Imports)
		slices.Sort(p.TestImports)
		p.TestImports = slices.Compact(p.TestImports)
	}
	return g, g.floors()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// addFile adds one file's imports and lines to its package.
func (g Graph) addFile(fset *token.FileSet, root, path string) error {
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	rel, err := filepath.Rel(root, filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("relative path: %w", err)
	}
	dir := filepath.ToSlash(rel)
	p := g[dir]
	if p == nil {
		p = &Package{Path: dir}
		g[dir] = p
	}
	n, err := countLines(path)
	if err != nil {
		return err
	}
	test := strings.HasSuffix(path, "_test.go")
	if test {
		p.TestLines += n
	} else {
		p.Lines += n
	}
	for _, imp := range f.Imports {
		ip, err := strconv.Unquote(imp.Path.Value)
		if err != nil || !strings.HasPrefix(ip, module+"/") {
			continue
		}
		ip = strings.TrimPrefix(ip, module+"/")
		if ip == dir {
			continue
		}
		if test {
			p.TestImports = append(p.TestImports, ip)
		} else {
			p.Imports = append(p.Imports, ip)
		}
	}
	return nil
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("count lines: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("count lines of %s: %w", path, err)
	}
	return n, nil
}

// floors sets every package's Floor, failing on a cycle.
func (g Graph) floors() error {
	const unvisited, visiting, done = 0, 1, 2
	state := map[string]int{}
	var visit func(path string, chain []string) error
	visit = func(path string, chain []string) error {
		p := g[path]
		if p == nil {
			return nil // outside the walk (another module)
		}
		switch state[path] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("layers: import cycle: %s", strings.Join(append(chain, path), " → "))
		}
		state[path] = visiting
		p.Floor = 0
		next := append(slices.Clone(chain), path)
		for _, q := range p.Imports {
			if err := visit(q, next); err != nil {
				return err
			}
			if d := g[q]; d != nil {
				p.Floor = max(p.Floor, d.Floor+1)
			}
		}
		state[path] = done
		return nil
	}
	for _, path := range g.Paths() {
		if err := visit(path, nil); err != nil {
			return err
		}
	}
	return nil
}

// Paths returns the packages' paths, sorted.
func (g Graph) Paths() []string {
	out := make([]string, 0, len(g))
	for p := range g {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Layer returns the index of path's layer in layerOrder, or -1 for a package outside them (e2e/,
// internal/, tools/, examples/, manifests/).
func Layer(path string) int {
	return slices.Index(strings.Fields(layerOrder), strings.SplitN(path, "/", 2)[0])
}

// LayerName returns the name of layer i (an index Layer returned).
func LayerName(i int) string { return strings.Fields(layerOrder)[i] }

// within reports whether path is pkg or below it.
func within(path, pkg string) bool { return path == pkg || strings.HasPrefix(path, pkg+"/") }

// isTestKit reports whether path is test support.
func isTestKit(path string) bool { return within(path, neutralKit) || within(path, "e2e") }

// Violation is one import that breaks the layers.
type Violation struct {
	From, To, Why string
}

func (v Violation) String() string { return v.From + " → " + v.To + ": " + v.Why }

// Violations lists the non-test imports that break the layers: into a higher layer, from the
// product into test support, and from the neutral test kit into anything of the module.
func (g Graph) Violations() []Violation {
	var out []Violation
	for _, path := range g.Paths() {
		from := Layer(path)
		for _, to := range g[path].Imports {
			switch {
			case within(path, neutralKit):
				out = append(out, Violation{path, to, "the neutral test kit imports nothing of haroute"})
			case from >= 0 && isTestKit(to):
				out = append(out, Violation{path, to, "product code does not import test support"})
			case from >= 0 && Layer(to) > from:
				out = append(out, Violation{path, to, fmt.Sprintf("%s/ is above %s/", LayerName(Layer(to)), LayerName(from))})
			}
		}
	}
	return out
}

// HarnessTests lists, for the packages of the layers, those whose tests import the harness
// (e2e/testbed), which needs haroute, rather than only the neutral kit.
func (g Graph) HarnessTests() []string {
	var out []string
	for _, path := range g.Paths() {
		if Layer(path) >= 0 && slices.Contains(g[path].TestImports, "e2e/testbed") {
			out = append(out, path)
		}
	}
	return out
}

// TestCycles lists the packages whose tests import a package that imports them (directly or not):
// legal for external test packages, and a sign that a test depends on more than it tests.
func (g Graph) TestCycles() [][2]string {
	var out [][2]string
	for _, path := range g.Paths() {
		for _, q := range g[path].TestImports {
			if g.reaches(q, path) {
				out = append(out, [2]string{path, q})
			}
		}
	}
	return out
}

// reaches reports whether from imports to, directly or not (non-test imports).
func (g Graph) reaches(from, to string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p == to {
			return true
		}
		if seen[p] || g[p] == nil {
			continue
		}
		seen[p] = true
		stack = append(stack, g[p].Imports...)
	}
	return false
}
