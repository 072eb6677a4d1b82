package mapping_test

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/mappingtest"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// goldenDir is the HAProxy directory the rendered goldens are made for (the sidecar default).
const goldenDir = "/var/lib/haproxy"

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden and remove orphans")

// minGoldenCases guards against a broken glob silently testing nothing.
const minGoldenCases = 30

// The golden set: testdata/cases/<case>.yaml gives testdata/golden/<case>.model.yaml and
// testdata/golden/<case>.render.txt, and nothing else lives in testdata/golden.
var (
	casesDir  = filepath.Join("testdata", "cases")
	goldenSet = filepath.Join("testdata", "golden")
)

// goldenCases returns the names of the test cases (testdata/cases/*.yaml without the extension).
func goldenCases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(casesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < minGoldenCases {
		t.Fatalf("found %d cases in %s, want at least %d", len(files), casesDir, minGoldenCases)
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return names
}

// goldenFiles returns the golden files of one case: the model and problems, and the rendered files.
func goldenFiles(name string) (modelFile, renderFile string) {
	return filepath.Join(goldenSet, name+".model.yaml"), filepath.Join(goldenSet, name+".render.txt")
}

// goldenResult is what a golden file holds for one case.
type goldenResult struct {
	Model    *model.Config
	Problems []mapping.Problem
}

// TestGolden translates every testdata/cases/*.yaml and compares the model and problems with
// testdata/golden/<case>.model.yaml, and the rendered files with testdata/golden/<case>.render.txt
// (`make golden`, i.e. go test ./mapping -run TestGolden -update, rewrites them). e2e/traffic checks
// every case's render with the real haproxy -c.
func TestGolden(t *testing.T) {
	for _, name := range goldenCases(t) {
		file := filepath.Join(casesDir, name+".yaml")
		modelFile, renderFile := goldenFiles(name)
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
			testkit.CompareGolden(t, modelFile, got, *update)

			files, err := render.Render(cfg, render.Options{Dir: goldenDir, DefaultCertificatePEM: defaultCertPEM(t)})
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			again, err := render.Render(cfg, render.Options{Dir: goldenDir, DefaultCertificatePEM: defaultCertPEM(t)})
			if err != nil || !bytes.Equal(renderDigest(files), renderDigest(again)) {
				t.Fatalf("rendering the same model twice gave different files (err %v)", err)
			}
			testkit.CompareGolden(t, renderFile, renderDigest(files), *update)
		})
	}
}

// TestGoldenOrphans fails on every file under testdata/golden that no case produces (left behind by a
// removed or renamed case, or put there by hand), naming each; under -update it removes them instead,
// so that regenerating leaves exactly the set the cases produce.
func TestGoldenOrphans(t *testing.T) {
	want := map[string]bool{}
	for _, name := range goldenCases(t) {
		modelFile, renderFile := goldenFiles(name)
		want[filepath.Base(modelFile)] = true
		want[filepath.Base(renderFile)] = true
	}
	entries, err := os.ReadDir(goldenSet)
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, e := range entries {
		if !e.IsDir() && want[e.Name()] {
			continue
		}
		orphans = append(orphans, filepath.Join(goldenSet, e.Name()))
	}
	testkit.GoldenOrphans(t, orphans, "case in "+casesDir, *update)
}

// renderDigest lays the rendered files out as one readable text: each file under a "==> path" header,
// in full, except PEM files and the error pages, which are summarised by size and SHA-256 (the PEM
// content is the model's; the error pages are the same in every case).
func renderDigest(files []render.File) []byte {
	var b bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&b, "==> %s\n", f.Path)
		if strings.HasSuffix(f.Path, ".pem") || strings.HasSuffix(f.Path, ".http") {
			fmt.Fprintf(&b, "(%d bytes, sha256 %x)\n", len(f.Data), sha256.Sum256(f.Data))
			continue
		}
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// defaultCertPEM is the fixed default certificate of the rendered goldens.
func defaultCertPEM(t *testing.T) []byte {
	t.Helper()
	var pemData []byte
	for _, f := range []string{"example.crt", "example.key"} {
		b, err := os.ReadFile(filepath.Join("testdata", "certs", f))
		if err != nil {
			t.Fatal(err)
		}
		pemData = append(pemData, b...)
	}
	return pemData
}
