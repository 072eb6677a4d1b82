package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CompareGolden compares got with the golden file, or, with update (a package's -update flag),
// rewrites it.
func CompareGolden(t testing.TB, golden string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", golden, LineDiff(string(want), string(got)))
	}
}

// GoldenOrphans fails on golden files (or folders) that no test case produces, named by what
// produces them; with update it removes them instead.
func GoldenOrphans(t testing.TB, orphans []string, producers string, update bool) {
	t.Helper()
	slices.Sort(orphans)
	if update {
		for _, o := range orphans {
			if err := os.RemoveAll(o); err != nil {
				t.Fatal(err)
			}
			t.Logf("removed %s: no %s produces it", o, producers)
		}
		return
	}
	if len(orphans) > 0 {
		t.Errorf("%d golden file(s) that no %s produces (remove them, or run with -update):\n  %s",
			len(orphans), producers, strings.Join(orphans, "\n  "))
	}
}

// LineDiff shows the first line where want and got differ, with up to three lines before it.
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			var b strings.Builder
			for j := max(0, i-3); j < i; j++ {
				b.WriteString("  " + w[j] + "\n")
			}
			b.WriteString("- " + wl + "\n+ " + gl + "\n")
			return b.String()
		}
	}
	return "(no line differs)"
}
