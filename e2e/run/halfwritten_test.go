package run

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of TestHalfWrittenManifest.
const (
	// halfWrittenGap is how long the file stays empty: far longer than any real rewrite, well within
	// the folder's settle time (2s).
	halfWrittenGap = 500 * time.Millisecond
	// halfWrittenAfter is how long the load goes on after the file is complete again: past the end of
	// the settle time, so that a late withdrawal would be counted.
	halfWrittenAfter = 3 * time.Second
	// halfWrittenMinRequests is the least number of requests each phase must send.
	halfWrittenMinRequests = 100
)

// TestHalfWrittenManifest: a manifest file seen empty for a moment, and a file that is broken when
// haroute restarts, withdraw no Route.
func TestHalfWrittenManifest(t *testing.T) {
	t.Run("truncated and rewritten in place", testTruncatedInPlace)
	t.Run("restart with a broken file", testRestartWithBrokenFile)
}

// testTruncatedInPlace truncates a Route's file to nothing, leaves it empty for halfWrittenGap and
// writes it back in place (what `kubectl get -o yaml > file` does, slowed down), while a client keeps
// sending requests to the Route: none fails.
func testTruncatedInPlace(t *testing.T) {
	const host = "half.e2e.test"
	web := testkit.StartHTTPBackend(t, "127.0.5.1", "web")
	route := testkit.RouteYAML("half", host, "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   route,
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer(host, "/", http.StatusOK, web.Name)
	l := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+host+"/", web.Name)

	path := filepath.Join(r.Manifests, "route.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil { // truncates in place: same file, now empty
		t.Fatal(err)
	}
	time.Sleep(halfWrittenGap)
	if err := os.WriteFile(path, []byte(route), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(halfWrittenAfter)
	t.Logf("route.yaml empty for %v, then written back in place; load until %v after:", halfWrittenGap, halfWrittenAfter)
	l.Check(t, halfWrittenMinRequests)
	if out := r.Proc.Out.String(); !strings.Contains(out, "held for 2s until the file stops changing") {
		t.Errorf("haroute never held the empty file (the test did not exercise the hold)")
	}
}

// testRestartWithBrokenFile runs haroute as a sidecar of an HAProxy the test starts (the HAProxy
// container outlives a restart of haroute's), with 6 Routes in two files. haroute stops, one file is
// broken meanwhile, haroute starts again: all 6 Routes keep serving, those of the broken file from the
// manifest cache, while a client keeps sending requests to one of them.
func testRestartWithBrokenFile(t *testing.T) {
	web := testkit.StartHTTPBackend(t, "127.0.5.2", "web")
	var hosts []string
	files := map[string]string{"service.yaml": testkit.ServiceYAML("web", web)}
	for _, file := range []string{"a", "b"} {
		var b strings.Builder
		for i := 1; i <= 3; i++ {
			host := fmt.Sprintf("%s%d.restart.e2e.test", file, i)
			hosts = append(hosts, host)
			b.WriteString(testkit.RouteYAML(fmt.Sprintf("%s%d", file, i), host, "web") + "---\n")
		}
		files["routes-"+file+".yaml"] = b.String()
	}
	f := newFolder(t, files)

	// haroute is stopped by the test before it ends; the restarted one must outlive it.
	first, _ := f.StartSidecar(testbed.FolderOpts{MayExit: true})
	for _, h := range hosts {
		first.WaitAnswer(h, "/", http.StatusOK, web.Name)
	}
	watched := hosts[len(hosts)-1] // a Route of the file that breaks
	l := testkit.StartLoad(t, testkit.NewClient(t, first.HTTPPort, first.HTTPSPort, nil), "http://"+watched+"/", web.Name)
	reloads := first.Reloads()

	if err := first.Proc.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.Proc.Done():
	case <-time.After(stopTimeout):
		t.Fatalf("haroute did not stop within %v of SIGTERM", stopTimeout)
	}
	// Broken while haroute is down: a document cut in the middle of a Route.
	broken := files["routes-b.yaml"] + "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: b4, namespace: e2e\n"
	if err := os.WriteFile(filepath.Join(f.Manifests, "routes-b.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}

	// A restart keeps first's ports, which the running HAProxy listens on, with a client of its own.
	second := f.Process(testbed.FolderOpts{}, first)
	second.Client = testkit.NewClient(t, second.HTTPPort, second.HTTPSPort, nil)
	second.Start(testbed.SidecarFlags())
	served := 0
	for _, h := range hosts {
		if code, backend, err := second.Get(h, "/"); err == nil && code == http.StatusOK && backend == web.Name {
			served++
		} else {
			t.Errorf("after the restart, %s answers %d from %q (%v), want 200 from %s", h, code, backend, err, web.Name)
		}
	}
	time.Sleep(halfWrittenAfter) // the load goes on past the first sync of the new haroute
	requests, failed, wrong := l.Counts()
	t.Logf("restart with routes-b.yaml broken: %d of %d Routes served; HAProxy reloads across the restart: %d; load on %s across the restart: %d requests, %d failed, %d from a wrong backend",
		served, len(hosts), second.Reloads()-reloads, watched, requests, failed, wrong)
	if failed != 0 || wrong != 0 || requests < halfWrittenMinRequests {
		t.Errorf("load on %s: %d requests, %d failed, %d wrong; want at least %d, none failed", watched, requests, failed, wrong, halfWrittenMinRequests)
	}
	if out := second.Proc.Out.String(); !strings.Contains(out, "come from its content last seen before the restart") {
		t.Errorf("the restarted haroute did not log that routes-b.yaml's Routes come from the cache")
	}
}
