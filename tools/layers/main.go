// Command layers reads the module's import graph and prints what the architecture looks like: lines
// per top-level area and per package (non-test and test files), each package's layer and floor, and
// what breaks or strains the layers.
//
//	go run ./tools/layers [-root DIR] [-packages]
//
// The layers, from the floor up, are mapping, runtime, inspect, sync and cmd: a package may import
// its own layer and those below. Product code (those five) imports no test support (internal/testkit,
// e2e/), and the neutral test kit (internal/testkit) imports nothing of haroute. The command exits 1
// when an import breaks one of those rules, and 2 naming the cycle when the graph has one (a graph it
// can print has none); its test runs it on the tree, so `make unit` keeps them. depguard (.golangci.yml) says the finer rules per package.
//
// A package's floor is the length of its longest chain of non-test imports down to a package that
// imports nothing of the module. It also lists the packages of the layers whose tests import the
// harness (e2e/testbed) and the test-only cycles (a package's tests import a package that imports
// it), which are legal and worth keeping few. Every Go file counts, whatever its build tags.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
)

func main() {
	root := flag.String("root", ".", "the module's root directory")
	packages := flag.Bool("packages", false, "also list every package: layer, floor, lines")
	flag.Parse()
	g, err := Load(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if n := Report(os.Stdout, g, *packages); n > 0 {
		os.Exit(1)
	}
}

// Report writes the summary of g to w and returns how many imports break the layers.
func Report(w io.Writer, g Graph, packages bool) int {
	areas := map[string][2]int{}
	for _, p := range g {
		a := strings.SplitN(p.Path, "/", 2)[0]
		c := areas[a]
		areas[a] = [2]int{c[0] + p.Lines, c[1] + p.TestLines}
	}
	names := make([]string, 0, len(areas))
	for a := range areas {
		names = append(names, a)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "area\tlines\ttest lines\t")
	for _, a := range names {
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", a, areas[a][0], areas[a][1])
	}
	_ = tw.Flush()
	if packages {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "package\tlayer\tfloor\tlines\ttest lines")
		for _, path := range g.Paths() {
			p, layer := g[path], "-"
			if l := Layer(path); l >= 0 {
				layer = LayerName(l)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", path, layer, p.Floor, p.Lines, p.TestLines)
		}
		_ = tw.Flush()
	}
	top, floor := "", -1
	for _, path := range g.Paths() {
		if f := g[path].Floor; f > floor {
			top, floor = path, f
		}
	}
	vs := g.Violations()
	fmt.Fprintf(w, "\npackages: %d; highest floor: %d (%s)\n", len(g), floor, top)
	fmt.Fprintf(w, "imports breaking the layers: %d\n", len(vs))
	for _, v := range vs {
		fmt.Fprintf(w, "  %s\n", v)
	}
	h := g.HarnessTests()
	fmt.Fprintf(w, "packages of the layers whose tests import the harness (e2e/testbed): %d\n  %s\n", len(h), strings.Join(h, " "))
	cs := g.TestCycles()
	fmt.Fprintf(w, "test-only cycles: %d\n", len(cs))
	for _, c := range cs {
		fmt.Fprintf(w, "  %s (tests) → %s → … → %s\n", c[0], c[1], c[0])
	}
	return len(vs)
}
