package mapping_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/mappingtest"
	"github.com/haroute/haroute/mapping/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// minGoldenCases guards against a broken glob silently testing nothing.
const minGoldenCases = 30

// goldenResult is what a golden file holds for one case.
type goldenResult struct {
	Model    *model.Config
	Problems []mapping.Problem
}

// TestGolden translates every testdata/cases/*.yaml and compares the model and problems with
// testdata/golden/<case>.model.yaml (go test ./mapping -run TestGolden -update rewrites them).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < minGoldenCases {
		t.Fatalf("found %d cases, want at least %d", len(files), minGoldenCases)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in, opts, err := mappingtest.ParseCase(data, file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, problems := mapping.Translate(in, opts)
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Translate produced an invalid model: %v", err)
			}
			got, err := yaml.Marshal(goldenResult{Model: cfg, Problems: problems})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", name+".model.yaml")
			if *update {
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
				t.Errorf("%s differs from the translation (run with -update to accept):\n%s", golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff shows the first lines where want and got differ, with a little context.
func lineDiff(want, got string) string {
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
