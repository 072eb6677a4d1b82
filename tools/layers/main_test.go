package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTreeHoldsItsLayers runs the check on the module itself: no import into a higher layer, none
// from the product into test support or from the neutral kit into haroute, no cycle.
func TestTreeHoldsItsLayers(t *testing.T) {
	g, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mapping/model", "runtime/socket", "inspect/stateapi", "sync/controller", "cmd/haroute", "internal/testkit", "e2e/testbed"} {
		if g[want] == nil {
			t.Fatalf("the walk did not find %s: it is broken", want)
		}
	}
	var out bytes.Buffer
	if n := Report(&out, g, true); n > 0 {
		t.Errorf("%d imports break the layers:\n%s", n, out.String())
	}
	t.Logf("\n%s", out.String())
}

// write makes a file under root.
func write(t *testing.T, root, path, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestViolationsAndFloors: on a small tree made for it, each rule is caught, the floors count the
// longest chain, test imports do not count as edges, and a cycle is refused.
func TestViolationsAndFloors(t *testing.T) {
	root := t.TempDir()
	imp := func(pkgs ...string) string {
		var b strings.Builder
		for _, p := range pkgs {
			b.WriteString("import _ \"" + module + "/" + p + "\"\n")
		}
		return b.String()
	}
	write(t, root, "mapping/model/m.go", "package model\n")
	write(t, root, "mapping/plan/p.go", "package plan\n"+imp("mapping/model"))
	write(t, root, "runtime/socket/s.go", "package socket\n"+imp("mapping/plan", "sync/loop"))
	write(t, root, "sync/loop/l.go", "package loop\n"+imp("mapping/model"))
	write(t, root, "inspect/views/v.go", "package views\n"+imp("internal/testkit"))
	write(t, root, "internal/testkit/k.go", "package testkit\n"+imp("mapping/model"))
	write(t, root, "mapping/plan/p_test.go", "package plan_test\n"+imp("runtime/socket", "e2e/testbed"))
	write(t, root, "e2e/testbed/b.go", "package testbed\n"+imp("runtime/socket"))
	write(t, root, "other/go.mod", "module other\n")
	write(t, root, "other/o.go", "package other\n"+imp("cmd/x"))
	write(t, root, "mapping/testdata/t.go", "package broken {\n")

	g, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if g["other"] != nil || g["mapping/testdata"] != nil {
		t.Errorf("read another module or testdata: %v", g.Paths())
	}
	for path, want := range map[string]int{"mapping/model": 0, "mapping/plan": 1, "sync/loop": 1, "runtime/socket": 2, "e2e/testbed": 3} {
		if got := g[path].Floor; got != want {
			t.Errorf("floor of %s: %d, want %d", path, got, want)
		}
	}
	var got []string
	for _, v := range g.Violations() {
		got = append(got, v.From+"→"+v.To)
	}
	want := []string{"inspect/views→internal/testkit", "internal/testkit→mapping/model", "runtime/socket→sync/loop"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("violations %v, want %v", got, want)
	}
	if h := g.HarnessTests(); len(h) != 1 || h[0] != "mapping/plan" {
		t.Errorf("harness tests %v, want [mapping/plan]", h)
	}
	if c := g.TestCycles(); len(c) != 2 || c[0] != [2]string{"mapping/plan", "e2e/testbed"} || c[1] != [2]string{"mapping/plan", "runtime/socket"} {
		t.Errorf("test cycles %v", c)
	}

	write(t, root, "mapping/model/m.go", "package model\n"+imp("mapping/plan"))
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "import cycle") {
		t.Errorf("a cycle: %v, want an import cycle error", err)
	}
}
