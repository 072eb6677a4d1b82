package haproxy_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// TestRefusedCertificateLeavesTheAcceptedFiles: an edge Route whose certificate HAProxy refuses (a
// 1024-bit RSA key, below OpenSSL's default security level) is written through, its runtime op
// fails, and the fallback reload is refused. The files on disk must then be the last ones HAProxy
// took — not the refused ones the write-through left — so that a restart of HAProxy starts; and the
// next change without that Route goes through.
func TestRefusedCertificateLeavesTheAcceptedFiles(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	opts := testbed.RouterOptions(t)
	dir := testkit.TempDir(t)
	ro := render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}
	weakCert, weakKey := ca.IssueRSA(t, 1024, "weak.example.com")
	desired := func(withWeak bool, hosts ...string) *model.Config {
		t.Helper()
		var m testbed.Manifests
		m.Service("app", "web", web)
		for _, h := range hosts {
			m.Route("app", h, h+".example.com", "", "web")
		}
		if withWeak {
			m.Route("app", "weak", "weak.example.com", "", "web", testbed.Edge(weakCert, weakKey))
		}
		cfg, problems := mapping.Translate(m.Input(t), opts)
		if len(problems) > 0 {
			t.Fatalf("translate: %v", problems)
		}
		return cfg
	}
	u, h := startInstance(t, dir, ro, desired(false, "www"))
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	// A first runtime change, so that the accepted files are ones HAProxy took at runtime.
	if out, err := u.Update(ctx, desired(false, "www", "shop")); err != nil || out.Reloaded {
		t.Fatalf("runtime update: %+v, %v", out, err)
	}
	accepted := readTree(t, dir)

	out, err := u.Update(ctx, desired(true, "www", "shop"))
	if err == nil {
		t.Fatalf("the Route with a certificate HAProxy refuses was applied: %+v", out)
	}
	t.Logf("refused as expected: %v", err)
	if len(out.Refused) != 1 || out.Refused[0].Namespace != "app" || out.Refused[0].Name != "weak" ||
		!strings.Contains(out.Refused[0].Message, "app_weak.pem") {
		t.Errorf("the refusal names %+v, want app/weak with HAProxy's line about its certificate", out.Refused)
	}
	if got := readTree(t, dir); !equalTrees(got, accepted) {
		t.Errorf("the files on disk are not the last ones HAProxy took: %s", treeDiff(accepted, got))
	}
	if err := testbed.CheckConfig(layout.For(dir).Config()); err != nil {
		t.Errorf("HAProxy would not start from the files on disk: %v", err)
	}
	for _, host := range []string{"www", "shop"} {
		if status, backend, _ := client.Get(t, "http://"+host+".example.com/"); status != http.StatusOK || backend != "web" {
			t.Errorf("%s: %d from %q while the refused Route is pending", host, status, backend)
		}
	}
	if h.Exited() {
		t.Fatal("HAProxy exited")
	}

	// Without the refused Route, the next change goes through.
	if _, err := u.Update(ctx, desired(false, "www", "shop", "blog")); err != nil {
		t.Fatalf("the next change: %v", err)
	}
	if status, backend, _ := client.Get(t, "http://blog.example.com/"); status != http.StatusOK || backend != "web" {
		t.Errorf("blog: %d from %q", status, backend)
	}
}

// readTree returns every regular file under dir's conf/ and router/, by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, sub := range []string{"conf", "router"} {
		root := filepath.Join(dir, sub)
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if os.IsNotExist(err) && p == root {
				return filepath.SkipDir
			}
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func equalTrees(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for p, d := range a {
		if e, ok := b[p]; !ok || !bytes.Equal(d, e) {
			return false
		}
	}
	return true
}

// treeDiff names the paths that differ between want and got.
func treeDiff(want, got map[string][]byte) []string {
	var diff []string
	for p, d := range want {
		if e, ok := got[p]; !ok {
			diff = append(diff, "missing "+p)
		} else if !bytes.Equal(d, e) {
			diff = append(diff, "changed "+p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diff = append(diff, "extra "+p)
		}
	}
	return diff
}
