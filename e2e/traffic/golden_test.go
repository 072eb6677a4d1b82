package traffic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/mappingtest"
	"github.com/haroute/haroute/mapping/render"
)

// casesDir holds the shared test cases (relative to this package's directory, where go test runs).
const casesDir = "../../mapping/testdata/cases"

// TestCasesPassHAProxyCheck renders every shared test case and has HAProxy check the result: whatever
// Translate admits or rejects, the rendered configuration must load.
func TestCasesPassHAProxyCheck(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(casesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no test cases in %s", casesDir)
	}
	ca := testkit.NewCA(t, routerCAName)
	defaultCert := ca.IssueBundle(t, defaultCertName)
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			in, opts, err := mappingtest.ParseCase(data, filepath.Base(p))
			if err != nil {
				t.Fatalf("parse case: %v", err)
			}
			dir := testkit.TempDir(t)
			if opts.DefaultDestinationCAFile != "" {
				// The case names a file of the machine it would run on; stand in a CA bundle at a path
				// of our own so that haproxy -c can load it.
				local := filepath.Join(dir, "default-destination-ca.pem")
				if err := os.WriteFile(local, ca.PEM(), 0o600); err != nil {
					t.Fatal(err)
				}
				t.Logf("default destination CA %s replaced by %s", opts.DefaultDestinationCAFile, local)
				opts.DefaultDestinationCAFile = local
			}
			cfg, problems := mapping.Translate(in, opts)
			if cfg == nil {
				t.Fatal("Translate returned no config")
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Translate returned an invalid config: %v", err)
			}
			files, err := render.Render(cfg, render.Options{Dir: dir, DefaultCertificatePEM: defaultCert})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			testbed.WriteFiles(t, dir, files)
			if err := testbed.CheckConfig(layout.For(dir).Config()); err != nil {
				t.Errorf("%v\n(%d backends, %d problems)", err, len(cfg.Backends), len(problems))
			}
		})
	}
}
