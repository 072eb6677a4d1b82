package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// loopbackFlag admits the testbed's loopback backends as endpoints (folder mode only).
const loopbackFlag = "--allow-loopback-endpoints"

// bed is one test's router setup: a manifest folder haroute watches and the HAProxy directory it
// writes, both under a short temporary directory (unix socket paths are short). Every haroute started
// on a bed shares them, so a restarted haroute finds what the one before left.
type bed struct {
	t *testing.T
	// manifests is the watched folder; dir the HAProxy directory (--haproxy-dir).
	manifests, dir string
	// binary runs haroute (a wrapper for a test that changes its mount namespace).
	binary string
}

// newBed writes files (name → content) into a new manifest folder.
func newBed(t *testing.T, files map[string]string) *bed {
	t.Helper()
	root := testkit.TempDir(t)
	b := &bed{t: t, manifests: filepath.Join(root, "m"), dir: filepath.Join(root, "h"), binary: binary}
	if err := os.MkdirAll(b.manifests, 0o755); err != nil {
		t.Fatalf("manifest folder: %v", err)
	}
	for name, data := range files {
		b.write(name, data)
	}
	return b
}

// write replaces a manifest file atomically (the watcher never sees half a file).
func (b *bed) write(name, data string) {
	b.t.Helper()
	path := filepath.Join(b.manifests, name)
	tmp := filepath.Join(b.manifests, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		b.t.Fatalf("write %s: %v", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.t.Fatalf("write %s: %v", name, err)
	}
}

// remove deletes a manifest file.
func (b *bed) remove(name string) {
	b.t.Helper()
	if err := os.Remove(filepath.Join(b.manifests, name)); err != nil {
		b.t.Fatalf("remove %s: %v", name, err)
	}
}

// procOpts say how one haroute process is owned.
type procOpts struct {
	// mayExit: the test kills or stops this haroute itself (no failure when it exited before the
	// cleanup).
	mayExit bool
}

// process prepares a haroute process on the bed; with like, it takes like's ports and client (a
// restart: HAProxy's configuration names the ports).
func (b *bed) process(o procOpts, like *testbed.RouterProcess) *testbed.RouterProcess {
	b.t.Helper()
	p := testbed.NewRouterProcess(b.t, testbed.RouterProcessConfig{
		Binary: b.binary,
		Dir:    b.dir,
		Source: []string{"--manifests", b.manifests},
		Env:    []string{"ROUTER_MAX_CONNECTIONS=2000"},
		Bounds: testbed.RouterProcessBounds{
			Ready:    readyTimeout,
			Apply:    applyTimeout,
			Poll:     pollEvery,
			ShowProc: procRetryFor,
			Socket:   socketTime,
		},
		Process: testkit.ProcessOptions{
			StopTimeout: stopTimeout,
			Deathsig:    syscall.SIGKILL,
			MustOutlive: !o.mayExit,
			LogTail:     logTail,
		},
	})
	if like != nil {
		p.HTTPPort, p.HTTPSPort, p.StatsPort, p.Client = like.HTTPPort, like.HTTPSPort, like.StatsPort, like.Client
	}
	return p
}

// startManaged runs `haroute run --managed-haproxy` on the bed and waits until it is ready; unless
// the test kills haroute itself (which then checks for orphans: the kernel's check counts a zombie
// not yet reaped by init as running), the cleanup checks that the HAProxy master it started is gone
// once haroute has stopped.
func (b *bed) startManaged(o procOpts, like *testbed.RouterProcess, extra ...string) *testbed.RouterProcess {
	b.t.Helper()
	p := b.process(o, like)
	p.Start(append([]string{testbed.ManagedHAProxyFlag(), loopbackFlag}, extra...))
	if !o.mayExit {
		p.MustStopWith(p.ShowProc().Master.PID)
	}
	return p
}

// sidecarFlags are the flags of a sidecar haroute: loopback endpoints, and the HAProxy binary under
// test for `haproxy -c` (a sidecar has no managed binary to check with).
func sidecarFlags() []string {
	return []string{loopbackFlag, "--check-binary", testkit.HAProxyBinary()}
}

// startSidecar runs the sidecar shape: `haroute run --once` writes the first configuration, the test
// starts HAProxy on it (as HAProxy's own container would), then haroute runs beside it.
func (b *bed) startSidecar(o procOpts, extra ...string) (*testbed.RouterProcess, *testbed.HAProxy) {
	b.t.Helper()
	p := b.process(o, nil)
	p.RunOnce(append(sidecarFlags(), extra...))
	h := testbed.Start(b.t, b.dir)
	p.Start(append(sidecarFlags(), extra...))
	return p, h
}

// routesYAML returns n Routes <prefix>-<i> for hosts <prefix>-<i>.e2e.test to Service svc, in one
// multi-document file.
func routesYAML(prefix string, n int, svc string) string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = testkit.RouteYAML(fmt.Sprintf("%s-%d", prefix, i), hostOf(prefix, i), svc)
	}
	return strings.Join(docs, "---\n")
}

// hostOf is the host of Route <prefix>-<i> of routesYAML.
func hostOf(prefix string, i int) string { return fmt.Sprintf("%s-%d.e2e.test", prefix, i) }

// names returns the backends' names.
func names(bs ...*testkit.Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}

// addrs returns the backends' "ip:port".
func addrs(bs ...*testkit.Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Addr()
	}
	return out
}

// loadFigures are what a load saw: requests sent, failed (refused of them: no listener), answered by
// a wrong backend.
type loadFigures struct{ total, failed, refused, wrong int64 }

// stopLoad stops l and returns its figures.
func stopLoad(l *testkit.Load) loadFigures {
	total, failed, wrong := l.Counts()
	return loadFigures{total: total, failed: failed, refused: l.Refused(), wrong: wrong}
}

// figures logs what a fault cost, in one line every test writes the same way: the requests lost
// (refused ones found no listener: their number follows the load's retry rate, not the router; the
// others were accepted or timed out, then lost), how long the step named what took, and the reloads.
func figures(t *testing.T, fault string, f loadFigures, what string, d time.Duration, reloads int) {
	t.Helper()
	t.Logf("FIGURES %s: lost %d/%d requests (%d refused, %d failed after being sent), %d from a wrong backend; %s %v; %d reloads",
		fault, f.failed, f.total, f.refused, f.failed-f.refused, f.wrong, what, d.Round(time.Millisecond), reloads)
}
