package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/render"
)

// examplesDir is the repository's examples folder.
const examplesDir = "../../examples"

// wildcardEnv admits the wildcard Route of the examples.
var wildcardEnv = map[string]string{"ROUTER_ALLOW_WILDCARD_ROUTES": "true"}

// snapshot reads every regular file under dir (relative path → content).
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func renderExamples(t *testing.T, env map[string]string, out string, extra ...string) cliResult {
	t.Helper()
	args := append([]string{"render", "--manifests", examplesDir, "--haproxy-dir", out}, extra...)
	r := runCLI(t, env, args...)
	if r.err != nil {
		t.Fatalf("render: %v\nstderr:\n%s", r.err, r.stderr)
	}
	return r
}

func TestRenderExamples(t *testing.T) {
	out := t.TempDir()
	r := renderExamples(t, wildcardEnv, out)

	if !strings.Contains(r.stderr, "route demo/bad-host rejected: InvalidHost: ") {
		t.Errorf("rejected Route not reported; stderr:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "demo/wildcard") {
		t.Errorf("wildcard Route rejected although ROUTER_ALLOW_WILDCARD_ROUTES=true; stderr:\n%s", r.stderr)
	}
	cfgPath := filepath.Join(out, "conf", "haproxy.cfg")
	if !strings.Contains(r.stdout, "10 routes admitted, 1 rejected;") || !strings.Contains(r.stdout, "config: "+cfgPath) {
		t.Errorf("summary = %q", r.stdout)
	}

	first := snapshot(t, out)
	for _, name := range []string{
		"conf/haproxy.cfg", "conf/cert_config.map", "conf/default_pub_keys.pem",
		"conf/os_http_be.map", "conf/os_edge_reencrypt_be.map", "conf/os_route_http_redirect.map",
		"conf/os_tcp_be.map", "conf/os_wildcard_domain.map",
	} {
		if _, ok := first[name]; !ok {
			t.Errorf("%s was not written", name)
		}
	}
	var certs, cas int
	for name := range first {
		certs += btoi(strings.HasPrefix(name, "router/certs/"))
		cas += btoi(strings.HasPrefix(name, "router/cacerts/"))
	}
	if certs == 0 || cas == 0 {
		t.Errorf("%d route certificates and %d CA files written; want the edge Route's and the reencrypt Route's", certs, cas)
	}
	if st, err := os.Stat(filepath.Join(out, "run")); err != nil || !st.IsDir() {
		t.Errorf("run/ not created: %v", err)
	}
	if !bytes.Contains(first["conf/haproxy.cfg"], []byte(filepath.Join(out, "conf", "os_http_be.map"))) {
		t.Error("haproxy.cfg does not refer to its maps by absolute path")
	}
	if got := testkit.FileMode(t, filepath.Join(out, "conf", "default_pub_keys.pem")); got != 0o600 {
		t.Errorf("default certificate mode %v, want 0600", got)
	}
	if got := testkit.FileMode(t, cfgPath); got != 0o644 {
		t.Errorf("haproxy.cfg mode %v, want 0644", got)
	}

	// A second render into the same directory reuses the default certificate: identical files. Stale
	// map and certificate files disappear; other files stay.
	for rel, data := range map[string]string{"conf/old.map": "a b\n", "router/certs/demo:old.pem": "x", "conf/mine.txt": "keep"} {
		if err := os.WriteFile(filepath.Join(out, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	renderExamples(t, wildcardEnv, out)
	second := snapshot(t, out)
	if string(second["conf/mine.txt"]) != "keep" {
		t.Error("a file that is not haroute's was removed")
	}
	delete(second, "conf/mine.txt")
	if len(second) != len(first) {
		t.Errorf("second render left %d files, first wrote %d", len(second), len(first))
	}
	for name, data := range first {
		if !bytes.Equal(second[name], data) {
			t.Errorf("%s differs between two renders", name)
		}
	}
}

func TestRenderReportsDisallowedWildcardAndFlags(t *testing.T) {
	out := t.TempDir()
	env := map[string]string{"ROUTER_SERVICE_HTTP_PORT": "18080", "ROUTER_SERVICE_HTTPS_PORT": "18443"}
	r := renderExamples(t, env, out, "--https-port", "28443", "--bind-address", "127.0.0.1")
	if !strings.Contains(r.stderr, "route demo/wildcard rejected: ") || !strings.Contains(r.stdout, "9 routes admitted, 2 rejected;") {
		t.Errorf("wildcard Route not rejected by default; stdout %q stderr:\n%s", r.stdout, r.stderr)
	}
	cfg := testkit.ReadFile(t, filepath.Join(out, "conf", "haproxy.cfg"))
	if !strings.Contains(cfg, "127.0.0.1:18080") || !strings.Contains(cfg, "127.0.0.1:28443") || strings.Contains(cfg, "18443") {
		t.Errorf("environment port and flag overrides not in haproxy.cfg:\n%s", cfg)
	}
}

func TestRenderWithCustomTemplate(t *testing.T) {
	dir := t.TempDir()
	tmplPath := filepath.Join(dir, "custom.tmpl")
	text := "# custom {{ .Paths.Config }} {{ env \"GREETING\" \"none\" }} {{ len .Config.Routes }}\n"
	if err := os.WriteFile(tmplPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cfgPath := filepath.Join(out, "conf", "haproxy.cfg")

	// From TEMPLATE_FILE, with env reading the process environment.
	renderExamples(t, map[string]string{"TEMPLATE_FILE": tmplPath, "GREETING": "hello"}, out)
	if got, want := testkit.ReadFile(t, cfgPath), "# custom "+cfgPath+" hello 9\n"; got != want {
		t.Errorf("haproxy.cfg = %q, want %q", got, want)
	}
	// The flag overrides TEMPLATE_FILE.
	renderExamples(t, map[string]string{"TEMPLATE_FILE": filepath.Join(dir, "missing")}, out, "--template", tmplPath)
	if got, want := testkit.ReadFile(t, cfgPath), "# custom "+cfgPath+" none 9\n"; got != want {
		t.Errorf("haproxy.cfg = %q, want %q", got, want)
	}
}

func TestRenderWithDefaultCertificateFlag(t *testing.T) {
	dir := t.TempDir()
	pemData, err := generateCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	certPath := filepath.Join(dir, "default.pem")
	if err := os.WriteFile(certPath, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	renderExamples(t, wildcardEnv, out, "--default-certificate", certPath)
	if got := testkit.ReadFile(t, filepath.Join(out, "conf", "default_pub_keys.pem")); got != string(pemData) {
		t.Errorf("default certificate not the one given:\n%s", got)
	}
}

func TestRenderErrors(t *testing.T) {
	bad := t.TempDir()
	badFile := filepath.Join(bad, "routes.yaml")
	if err := os.WriteFile(badFile, []byte("apiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n  name: r\nspec:\n  hots: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(bad, "cert.txt")
	if err := os.WriteFile(notPEM, []byte("nope"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"invalid manifest", nil, []string{"--manifests", bad}, badFile + ": document 1 (line 1): "},
		{"missing manifests", nil, []string{"--manifests", filepath.Join(bad, "nope")}, filepath.Join(bad, "nope")},
		{"bad setting", map[string]string{"ROUTER_SERVICE_HTTP_PORT": "0"}, []string{"--manifests", examplesDir}, "ROUTER_SERVICE_HTTP_PORT"},
		{"bad default certificate", nil, []string{"--manifests", examplesDir, "--default-certificate", notPEM}, notPEM},
		{"missing template", nil, []string{"--manifests", examplesDir, "--template", filepath.Join(bad, "t.tmpl")}, "t.tmpl"},
		{"no manifests flag", nil, nil, `"manifests"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			r := runCLI(t, tt.env, append([]string{"render", "--haproxy-dir", out}, tt.args...)...)
			if r.err == nil {
				t.Fatalf("no error; stdout %q", r.stdout)
			}
			if msg := oneLine(r.err); !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not contain %q", msg, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created by a failed render", out)
			}
		})
	}
}

// TestRenderedConfigPassesHAProxyCheck runs `haproxy -c` on the rendered examples.
func TestRenderedConfigPassesHAProxyCheck(t *testing.T) {
	bin := testkit.HAProxyBinary()
	out := t.TempDir()
	renderExamples(t, wildcardEnv, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-c"}, render.ConfigArgs(out)...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s -c: %v\n%s", bin, err, b)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRenderEqualsRunOnce: `haroute render` writes exactly the files `haroute run --once` (and so
// `haroute run`) starts HAProxy from, spare pool included.
func TestRenderEqualsRunOnce(t *testing.T) {
	out := t.TempDir()
	r := renderExamples(t, wildcardEnv, out)
	rendered := snapshot(t, out)
	if !strings.Contains(r.stdout, " spare)") || strings.Count(testbed.ReadConfig(t, out), "\nbackend ") < 80 {
		t.Fatalf("render wrote no spare pool: %s", r.stdout)
	}
	res := runCLI(t, wildcardEnv, "run", "--once", "--manifests", examplesDir, "--haproxy-dir", out)
	if res.err != nil {
		t.Fatalf("run --once: %v\n%s", res.err, res.stderr)
	}
	once := snapshot(t, out)
	// run keeps its manifest cache beside HAProxy's files; HAProxy never reads it.
	for name := range once {
		if strings.HasPrefix(name, manifestCacheDir+"/") {
			delete(once, name)
		}
	}
	if len(once) != len(rendered) {
		t.Errorf("render wrote %d files, run --once %d", len(rendered), len(once))
	}
	for name, data := range rendered {
		if !bytes.Equal(once[name], data) {
			t.Errorf("%s differs between render and run --once", name)
		}
	}
}
