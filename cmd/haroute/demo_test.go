package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/sync/source"
)

// TestDemoManifestsAdmitted checks that the filled-in demo templates are valid manifests whose five
// Routes are all admitted.
func TestDemoManifestsAdmitted(t *testing.T) {
	dir := t.TempDir()
	if err := writeDemoManifests(dir, 12345, time.Now()); err != nil {
		t.Fatal(err)
	}
	in, err := source.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := mapping.DefaultOptions()
	opts.AllowLoopbackEndpoints = true
	cfg, problems := mapping.Translate(in, opts)
	if len(problems) != 0 || len(cfg.Routes) != 5 {
		t.Fatalf("%d Routes admitted, problems: %v", len(cfg.Routes), problems)
	}
}

// TestDemoPortInUse checks the clear error for a port that is taken.
func TestDemoPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	err = checkDemoPorts(demoFlags{httpPort: busy, httpsPort: testkit.FreePort(t)})
	if err == nil || !strings.Contains(err.Error(), "--http-port") || !strings.Contains(err.Error(), "not free") {
		t.Fatalf("err = %v, want a port-in-use error naming --http-port", err)
	}
	if err := checkDemoPorts(demoFlags{httpPort: 8080, httpsPort: 8080}); err == nil {
		t.Fatalf("equal ports accepted")
	}
}

// TestDemoServesAndAppliesEdits runs the demo in-process with real HAProxy: every example Route
// answers from its backend, an edit of the hello Route's endpoints applies without a reload, and
// cancelling the context stops everything and removes the folder.
func TestDemoServesAndAppliesEdits(t *testing.T) {
	var stdout, stderr testkit.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" },
		log: slog.New(slog.NewTextHandler(&stderr, nil))}
	f := demoFlags{httpPort: testkit.FreePort(t), httpsPort: testkit.FreePort(t), statsPort: testkit.FreePort(t), haproxy: testkit.HAProxyBinary()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.demo(ctx, f) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("demo: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("demo did not stop within 30s")
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), "Ctrl-C stops everything") {
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not print its help within 30s")
		}
		select {
		case err := <-done:
			t.Fatalf("demo ended early: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	m := regexp.MustCompile(`manifests in (\S+),`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no manifest folder printed")
	}
	manifests := m[1]

	c := testkit.NewClient(t, f.httpPort, f.httpsPort, nil)
	expect := func(url, backend string) {
		t.Helper()
		r := c.Fetch(t, url)
		if r.Status != http.StatusOK || r.Backend != backend {
			t.Errorf("%s: %d from %q, want 200 from %q (%s)", url, r.Status, r.Backend, backend, r.Body)
		}
	}
	expect("http://hello.haroute.test/", "hello")
	expect("http://hello.haroute.test/api/users", "api")
	expect("https://secure.haroute.test/", "hello")
	expect("https://pass.haroute.test/", "pass")
	seen := map[string]int{}
	for range 50 {
		seen[c.Fetch(t, "http://split.haroute.test/").Backend]++
	}
	if seen["stable"] == 0 || seen["canary"] == 0 || seen["stable"] < seen["canary"] {
		t.Errorf("split answers %v, want mostly stable and some canary", seen)
	}
	if r := c.Fetch(t, "http://secure.haroute.test/"); r.Status != http.StatusFound {
		t.Errorf("http://secure: %d, want the redirect to https", r.Status)
	}

	// Every edit the demo prints, made as printed, applies at runtime with the effect it announces.
	for _, e := range demoEdits {
		if !strings.Contains(stdout.String(), e.say) {
			t.Fatalf("the demo does not print the edit %q", e.say)
		}
		file := filepath.Join(manifests, e.file)
		if e.rename != "" {
			if err := os.Rename(file, filepath.Join(manifests, e.rename)); err != nil {
				t.Fatal(err)
			}
		} else {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, e.edit(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]bool{}
		for _, b := range e.backends {
			want[b] = true
		}
		url := "http://" + e.host + ".haroute.test/"
		seen := map[string]bool{}
		deadline := time.Now().Add(10 * time.Second)
		for len(seen) != len(want) {
			if time.Now().After(deadline) {
				t.Fatalf("edit %q: %s answers from %v within 10s, want %v", e.say, url, seen, e.backends)
			}
			r := c.Fetch(t, url)
			if want[r.Backend] {
				seen[r.Backend] = true
			} else {
				clear(seen) // an answer from elsewhere: the edit has not (fully) applied yet
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	if regexp.MustCompile(`reloaded=true`).MatchString(stderr.String()) {
		t.Errorf("an edit the demo prints reloaded HAProxy")
	}
	if !regexp.MustCompile(`msg=sync .*serversChanged=[1-9].*reloaded=false`).MatchString(stderr.String()) {
		t.Errorf("no sync log line with a server change and reloaded=false")
	}

	// Idle kept-alive connections would hold HAProxy's soft stop until its timeout.
	c.CloseIdleConnections()
	stop()
	if _, err := os.Stat(filepath.Dir(manifests)); !os.IsNotExist(err) {
		t.Errorf("the demo folder %s is still there (%v)", filepath.Dir(manifests), err)
	}
}
