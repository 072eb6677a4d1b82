package mapping_test

import (
	"bytes"
	"net/netip"
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

// The fuzz target of the translation: manifest bytes in, rendered files out, checked by the invariants
// of translate_invariants_fuzz_test.go.
const (
	// fuzzDir is the HAProxy directory the fuzzed inputs are rendered for.
	fuzzDir = "/var/lib/haproxy"
	// fuzzHAProxyCheckEnv, set to 1, has every fuzzed input's render checked by `haproxy -c` too
	// (`make fuzz` does; a process per input is too slow for the short runs and for go test).
	fuzzHAProxyCheckEnv = "HAROUTE_FUZZ_HAPROXY_CHECK"
	// maxFuzzManifest bounds the inputs that are translated: the seeds are under 16 KiB, and longer
	// inputs only slow the fuzzer down.
	maxFuzzManifest = 64 << 10
	// examplesEnv is the setting `make render-example` renders examples/ with.
	examplesEnv = "# env: ROUTER_ALLOW_WILDCARD_ROUTES=true\n"
)

// fuzzRouterAddress stands for the router pod's own address: no input may make it a server.
var fuzzRouterAddress = netip.MustParseAddr("10.255.0.1")

// FuzzTranslateRender decodes a test case (an optional "# env:" line, then YAML manifests, as
// mappingtest.ParseCase reads testdata/cases), translates it and renders it. Inputs that do not
// decode are skipped; for every other one:
//
//   - Translate returns a model that Validate accepts, and Render accepts it (one bad Route must not
//     keep the files from being written);
//   - translating and rendering the same input again gives byte-identical files;
//   - haproxy.cfg holds only directives the default template writes, in sections the layout or the
//     model's backends name, no control character, no "${" and no "%[env(" outside the router's own
//     log format (checkConfigText);
//   - every map line is "key value" and is explained by an admitted Route of the input
//     (checkMaps), and every crt-list line names the certificate file of an admitted Route for that
//     Route's host (checkCrtList);
//   - every server is an endpoint address of the input that is none of the router's own, and no
//     refused kind of address (checkServers).
//
// The seeds are every case of testdata/cases, every file of examples/ and all of examples/ as one
// stream; testdata/fuzz/FuzzTranslateRender holds further ones. With HAROUTE_FUZZ_HAPROXY_CHECK=1
// every input's render is also written out and checked with `haproxy -c` (the renders of the cases
// are checked by e2e/traffic's TestCasesPassHAProxyCheck in every go test run).
func FuzzTranslateRender(f *testing.F) {
	for _, seed := range translateSeeds(f) {
		f.Add(seed)
	}
	directives := templateDirectives(f)
	defaultCert := fuzzDefaultCert(f)
	haproxyCheck := os.Getenv(fuzzHAProxyCheckEnv) == "1"
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzManifest {
			t.Skip("input too large")
		}
		in, opts, err := mappingtest.ParseCase(data, "fuzz")
		if err != nil {
			return
		}
		opts.RouterAddresses = append(opts.RouterAddresses, fuzzRouterAddress)
		cfg, problems := mapping.Translate(in, opts)
		if cfg == nil {
			t.Fatal("Translate returned no model")
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Translate returned a model Validate refuses: %v", err)
		}
		ropts := render.Options{Dir: fuzzDir, DefaultCertificatePEM: defaultCert}
		files, err := render.Render(cfg, ropts)
		if err != nil {
			t.Fatalf("Render refused the model Translate returned (%d backends, %d problems): %v", len(cfg.Backends), len(problems), err)
		}
		again, _ := mapping.Translate(in, opts)
		files2, err := render.Render(again, ropts)
		if err != nil {
			t.Fatalf("rendering the same input again: %v", err)
		}
		checkSameFiles(t, files, files2)

		checkRender(t, in, opts, cfg, files, directives)

		if haproxyCheck {
			checkWithHAProxy(t, in, opts, defaultCert)
		}
	})
}

// translateSeeds returns the seed inputs: every test case, every example file (with the setting
// examples are rendered with) and all examples in one stream.
func translateSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	cases, err := filepath.Glob(filepath.Join("testdata", "cases", "*.yaml"))
	if err != nil || len(cases) < minGoldenCases {
		tb.Fatalf("found %d cases (%v), want at least %d", len(cases), err, minGoldenCases)
	}
	examples, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil || len(examples) == 0 {
		tb.Fatalf("no examples under ../examples (%v)", err)
	}
	var seeds [][]byte
	for _, p := range cases {
		seeds = append(seeds, readFile(tb, p))
	}
	all := []byte(examplesEnv)
	for _, p := range examples {
		b := readFile(tb, p)
		seeds = append(seeds, append([]byte(examplesEnv), b...))
		all = append(all, "---\n"...)
		all = append(all, b...)
	}
	return append(seeds, all)
}

func readFile(tb testing.TB, p string) []byte {
	tb.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// fuzzDefaultCert is the default certificate of the renders: the fixed one of the goldens.
func fuzzDefaultCert(tb testing.TB) []byte {
	tb.Helper()
	return append(readFile(tb, filepath.Join("testdata", "certs", "example.crt")),
		readFile(tb, filepath.Join("testdata", "certs", "example.key"))...)
}

// checkSameFiles fails unless two renders are the same files with the same bytes.
func checkSameFiles(t *testing.T, a, b []render.File) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("rendering the same input twice gave %d and %d files", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("rendering the same input twice gave different files: %s and %s", a[i].Path, b[i].Path)
		}
	}
}

// checkWithHAProxy renders the input into a directory of its own and has HAProxy check it, as
// e2e/traffic does for the cases: a configured default destination CA is replaced by a file of the
// test, since the case names a path of the machine it would run on.
func checkWithHAProxy(t *testing.T, in mapping.Input, opts mapping.Options, defaultCert []byte) {
	t.Helper()
	dir := testkit.TempDir(t)
	if opts.DefaultDestinationCAFile != "" {
		local := filepath.Join(dir, "default-destination-ca.pem")
		if err := os.WriteFile(local, readFile(t, filepath.Join("testdata", "certs", "ca.crt")), 0o600); err != nil {
			t.Fatal(err)
		}
		opts.DefaultDestinationCAFile = local
	}
	cfg, _ := mapping.Translate(in, opts)
	files, err := render.Render(cfg, render.Options{Dir: dir, DefaultCertificatePEM: defaultCert})
	if err != nil {
		t.Fatalf("render into %s: %v", dir, err)
	}
	testbed.WriteFiles(t, dir, files)
	if err := testbed.CheckConfig(layout.For(dir).Config()); err != nil {
		cfgText, _ := os.ReadFile(layout.For(dir).Config())
		t.Fatalf("%v\nconfig:\n%s", err, strings.TrimSpace(string(cfgText)))
	}
}
