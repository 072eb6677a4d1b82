package compat_test

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/compat"
)

var update = flag.Bool("update", false, "rewrite docs/openshift-compatibility.md from the table")

// Paths from this package's directory.
var (
	docFile       = filepath.Join("..", "..", "docs", "openshift-compatibility.md")
	docsDir       = filepath.Join("..", "..", "docs")
	readmeFile    = filepath.Join("..", "..", "README.md")
	stockSettings = filepath.Join("testdata", "stock-settings.txt")
)

// generatedMarker is how a page Markdown renders says where it comes from.
const generatedMarker = "Generated from mapping/compat/rows.go"

// TestGoldenCompatibilityDoc keeps docs/openshift-compatibility.md equal to what Markdown renders
// (make golden rewrites it).
func TestGoldenCompatibilityDoc(t *testing.T) {
	got := compat.Markdown()
	if !strings.Contains(got, generatedMarker) {
		t.Fatalf("Markdown lacks the marker %q that TestGoldenOrphans looks for", generatedMarker)
	}
	testkit.CompareGolden(t, docFile, []byte(got), *update)
}

// TestGoldenOrphans fails on a page under docs/ that says it is generated from the table but is not
// the one Markdown writes (a renamed page left behind); under -update it removes it.
func TestGoldenOrphans(t *testing.T) {
	entries, err := os.ReadDir(docsDir)
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, e := range entries {
		p := filepath.Join(docsDir, e.Name())
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || p == docFile {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(generatedMarker)) {
			orphans = append(orphans, p)
		}
	}
	testkit.GoldenOrphans(t, orphans, "compat.Markdown", *update)
}

// stockList is testdata/stock-settings.txt: its settings (kind and name) with whether the operator
// sets them, and the commits of its header.
type stockList struct {
	sets                         map[setting]bool
	routerCommit, operatorCommit string
}

type setting struct {
	kind compat.Kind
	name string
}

func readStockList(t *testing.T) stockList {
	t.Helper()
	f, err := os.Open(stockSettings)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := stockList{sets: map[setting]bool{}}
	kinds := map[string]compat.Kind{"env": compat.EnvVar, "annotation": compat.Annotation, "field": compat.RouteField}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "# router: github.com/openshift/router "); ok {
			l.routerCommit = c
		}
		if c, ok := strings.CutPrefix(line, "# operator: github.com/openshift/cluster-ingress-operator "); ok {
			l.operatorCommit = c
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		k, ok := kinds[f[0]]
		switch {
		case !ok:
			t.Fatalf("%s:%d: unknown kind %q", stockSettings, n, f[0])
		case k == compat.EnvVar && (len(f) != 3 || (f[2] != "operator" && f[2] != "-")):
			t.Fatalf("%s:%d: want env NAME operator|-", stockSettings, n)
		case k != compat.EnvVar && len(f) != 2:
			t.Fatalf("%s:%d: want %s NAME", stockSettings, n, f[0])
		}
		s := setting{k, f[1]}
		if _, dup := l.sets[s]; dup {
			t.Fatalf("%s:%d: %s %s listed twice", stockSettings, n, k, s.name)
		}
		l.sets[s] = k == compat.EnvVar && f[2] == "operator"
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestTableMatchesStockSource holds the table to testdata/stock-settings.txt: one row per listed
// setting and no row for a setting that is not listed (haroute's own variables aside), the same
// operator marks, the same commits, no duplicate, and a note wherever haroute is not the same.
func TestTableMatchesStockSource(t *testing.T) {
	l := readStockList(t)
	if l.routerCommit != compat.RouterCommit || l.operatorCommit != compat.OperatorCommit {
		t.Errorf("%s was listed from router %s and operator %s, the table describes router %s and operator %s: "+
			"update RouterCommit and OperatorCommit in mapping/compat/compat.go with the rows",
			stockSettings, l.routerCommit, l.operatorCommit, compat.RouterCommit, compat.OperatorCommit)
	}
	seen := map[setting]bool{}
	for _, r := range compat.Rows() {
		s := setting{r.Kind, r.Name}
		if seen[s] {
			t.Errorf("%s %s has more than one row in mapping/compat/rows.go: keep one", r.Kind, r.Name)
			continue
		}
		seen[s] = true
		if r.Kind != compat.EnvVar && r.Kind != compat.Annotation && r.Kind != compat.RouteField {
			t.Errorf("row %q: unknown kind %v", r.Name, r.Kind)
		}
		if r.Status < compat.Supported || r.Status > compat.HarouteOnly {
			t.Errorf("%s %s: unknown status %v", r.Kind, r.Name, r.Status)
		}
		if strings.TrimSpace(r.Note) == "" || strings.TrimSpace(r.Default) == "" {
			t.Errorf("%s %s (%s): give it a default and a note (for %s and %s rows: how or why)",
				r.Kind, r.Name, r.Status, compat.Different, compat.NotSupported)
		}
		sets, listed := l.sets[s]
		switch {
		case r.Status == compat.HarouteOnly && listed:
			t.Errorf("%s %s is marked %s, but the stock router reads it (%s): give it a stock status", r.Kind, r.Name, r.Status, stockSettings)
		case r.Status == compat.HarouteOnly && r.Kind != compat.EnvVar:
			t.Errorf("%s %s is marked %s: only environment variables can be", r.Kind, r.Name, r.Status)
		case r.Status == compat.HarouteOnly:
		case !listed:
			t.Errorf("%s %s has a row in mapping/compat/rows.go, but the stock router does not read it (%s): remove the row, or mark it %s if haroute reads it",
				r.Kind, r.Name, stockSettings, compat.HarouteOnly)
		case r.OperatorSets != sets:
			t.Errorf("%s %s: the row says OperatorSets %v, %s says %v: fix the row", r.Kind, r.Name, r.OperatorSets, stockSettings, sets)
		}
		if r.OperatorSets && (r.Kind != compat.EnvVar || r.Status == compat.HarouteOnly) {
			t.Errorf("%s %s: OperatorSets is for the stock router's environment variables only", r.Kind, r.Name)
		}
	}
	var missing []string
	for s := range l.sets {
		if !seen[s] {
			missing = append(missing, s.kind.String()+" "+s.name)
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("%s is listed in %s but has no row in mapping/compat/rows.go: add one", m, stockSettings)
	}
}

// TestRowsSorted checks that Rows orders by kind, then name.
func TestRowsSorted(t *testing.T) {
	rs := compat.Rows()
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1], rs[i]
		if a.Kind > b.Kind || (a.Kind == b.Kind && a.Name >= b.Name) {
			t.Errorf("Rows: %s %s before %s %s", a.Kind, a.Name, b.Kind, b.Name)
		}
	}
	rs[0].Name = "changed"
	if compat.Rows()[0].Name == "changed" {
		t.Error("Rows hands out the table itself, not a copy")
	}
}

// TestReadmeCounts keeps README.md's summary sentence (its "OpenShift compatibility" paragraph) equal
// to Summary, line breaks aside.
func TestReadmeCounts(t *testing.T) {
	b, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if want := compat.Summary(); !strings.Contains(flat(string(b)), flat(want)) {
		t.Errorf("README.md lacks the table's summary: replace the sentence in its \"OpenShift compatibility\" paragraph with\n%s", want)
	}
}

// TestSummaryCounts checks Summary's numbers against the stock list: every variable, annotation and
// field of the stock router counted once.
func TestSummaryCounts(t *testing.T) {
	l := readStockList(t)
	var env, op, ann, fields int
	for s, sets := range l.sets {
		switch s.kind {
		case compat.EnvVar:
			env++
			if sets {
				op++
			}
		case compat.Annotation:
			ann++
		case compat.RouteField:
			fields++
		}
	}
	c := compat.Counts()
	if c.Env.Stock() != env || c.EnvOperator.Stock() != op || c.Annotations.Stock() != ann || c.Fields.Stock() != fields {
		t.Errorf("counts: env %d (operator %d), annotations %d, fields %d; %s lists %d (%d), %d, %d",
			c.Env.Stock(), c.EnvOperator.Stock(), c.Annotations.Stock(), c.Fields.Stock(), stockSettings, env, op, ann, fields)
	}
}
