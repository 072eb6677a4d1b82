package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
)

// Bounds of TestHAProxyDirUnwritable.
const (
	// confTmpfsSize is the size of the tmpfs the "full" case mounts on conf/: room for the first
	// configuration, filled up before the change.
	confTmpfsSize = "4m"
	// unwritableFor is how long the directory stays unwritable once the failure was reported.
	unwritableFor = time.Second
	mountTimeout  = 10 * time.Second
	fillChunk     = 64 << 10
	fillMaxBytes  = 64 << 20
)

// TestHAProxyDirUnwritable makes the HAProxy directory's conf/ (haproxy.cfg and the maps) unwritable
// under load while haroute runs: once read-only (EROFS), once full (ENOSPC). The tests run as root,
// for whom a chmod stops nothing, so haroute runs in a private mount namespace (unshare) where conf/
// is a bind mount ("read-only": the test remounts it read-only through nsenter) or a small tmpfs
// ("full": the test fills it through /proc/PID/root); the host's mounts are never touched.
//
// An endpoint change and a new Route written meanwhile must fail clearly: a "sync failed" line in
// the log naming the error, haroute_update_failures_total rising, /healthz/ready still 200 (HAProxy
// serves) with a body that names the failing syncs. HAProxy keeps serving the old state: answers
// from the old endpoint only, the new Route not served, no reload. Once conf/ is writable again the
// change is served without help and readiness says "ok" again; no request fails throughout.
func TestHAProxyDirUnwritable(t *testing.T) {
	testkit.NeedsRoot(t, "a private mount namespace, a bind mount and a tmpfs")
	t.Parallel()
	for _, tool := range []string{"unshare", "nsenter", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found (Debian: apt-get install util-linux mount): %v", tool, err)
		}
	}
	for i, full := range []bool{false, true} {
		name := map[bool]string{false: "read-only", true: "full"}[full]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			unwritable(t, full, [2]string{fmt.Sprintf("127.0.53.%d", 10*i+1), fmt.Sprintf("127.0.53.%d", 10*i+2)})
		})
	}
}

// unwritable is one case of TestHAProxyDirUnwritable.
func unwritable(t *testing.T, full bool, ips [2]string) {
	host, newHost := "unwritable.e2e.test", "new.unwritable.e2e.test"
	web1 := testkit.StartHTTPBackend(t, ips[0], "web-1")
	web2 := testkit.StartHTTPBackend(t, ips[1], "web-2")
	b := newBed(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("web", host, "web"),
		"service.yaml": testkit.ServiceYAML("web", web1),
	})
	conf := layout.For(b.HAProxyDir).ConfDir()
	b.Binary = namespaceWrapper(t, conf, full)
	r := b.StartManaged(testbed.FolderOpts{}, nil)
	r.WaitAnswer(host, "/", http.StatusOK, web1.Name)
	pid := r.Proc.Cmd.Process.Pid
	load := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+host+"/", web1.Name)
	time.Sleep(loadSettle)
	reloads := r.Reloads()
	failuresBefore := mustMetric(t, r.StatsPort, "haroute_update_failures_total")

	// The fault, then the change.
	var errText string
	var restore func()
	if full {
		errText = "no space left on device"
		restore = fillUp(t, pid, conf)
	} else {
		errText = "read-only file system"
		remount(t, pid, conf, "ro")
		restore = func() { remount(t, pid, conf, "rw") }
	}
	faultAt := time.Now()
	logBefore := len(r.Proc.Out.String())
	b.Write("service.yaml", testkit.ServiceYAML("web", web1, web2))
	b.Write("new.yaml", testkit.RouteYAML("new", newHost, "web"))

	waitMetricAbove(t, r.StatsPort, "haroute_update_failures_total", failuresBefore)
	reportedAt := time.Now()
	var line string
	if err := testkit.Eventually(applyTimeout, 20*time.Millisecond, func() error {
		if line = grepLine(r.Proc.Out.String()[logBefore:], `msg="sync failed`, errText); line == "" {
			return errors.New("no sync failure line naming " + errText)
		}
		return nil
	}); err != nil {
		t.Errorf("log: %v", err)
	}
	// The metric counts the failed update a moment before the loop records the failing sync.
	if err := testkit.Eventually(applyTimeout, 20*time.Millisecond, func() error {
		code, body, err := statsGet(r.StatsPort, "/healthz/ready")
		if err != nil || code != http.StatusOK || !strings.Contains(body, "failed") || !strings.Contains(body, errText) {
			return fmt.Errorf("%d %q %v", code, body, err)
		}
		return nil
	}); err != nil {
		t.Errorf("/healthz/ready while conf/ is unwritable: %v; want 200 naming the failing syncs and %q", err, errText)
	}
	// HAProxy serves the old state meanwhile.
	time.Sleep(unwritableFor)
	if code, be, err := r.Get(newHost, "/"); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("the new Route answers %d from %q (%v) while conf/ is unwritable; want 503 (not served)", code, be, err)
	}
	if got := r.Reloads(); got != reloads {
		t.Errorf("HAProxy reloaded %d times while conf/ was unwritable", got-reloads)
	}

	// Writable again: haroute recovers on its own.
	load.Allow(web1.Name, web2.Name)
	restore()
	restoredAt := time.Now()
	waitServers(t, r, testkit.Addrs(web1, web1, web2, web2)) // the base Route's backend and the new Route's
	waitServed(t, r, newHost, web1.Name, web2.Name)
	r.WaitBackends(host, "/", web1.Name, web2.Name)
	recovered := time.Now()
	if err := testkit.Eventually(applyTimeout, 20*time.Millisecond, func() error {
		if code, body, err := statsGet(r.StatsPort, "/healthz/ready"); err != nil || code != http.StatusOK || strings.TrimSpace(body) != "ok" {
			return fmt.Errorf("%d %q %v", code, body, err)
		}
		return nil
	}); err != nil {
		t.Errorf("/healthz/ready after the recovery: %v", err)
	}
	time.Sleep(loadSettle)
	f := stopLoad(load)
	load.Check(t, 1)
	t.Logf("failure reported %v after the change: %s", reportedAt.Sub(faultAt).Round(time.Millisecond), line)
	t.Logf("change served %v after conf/ was writable again", recovered.Sub(restoredAt).Round(time.Millisecond))
	figures(t, "conf/ "+errText, f, "change served after writable again in", recovered.Sub(restoredAt), r.Reloads()-reloads)
}

// namespaceWrapper writes a script that runs haroute in a new private mount namespace where conf is
// a bind mount of itself, or (full) a tmpfs of confTmpfsSize, and returns its path. The script execs
// into haroute, so haroute keeps the PID the test started.
func namespaceWrapper(t *testing.T, conf string, full bool) string {
	t.Helper()
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatalf("conf/: %v", err)
	}
	mountArgs := `--bind "$0" "$0"`
	if full {
		mountArgs = `-t tmpfs -o size=` + confTmpfsSize + `,mode=0755 tmpfs "$0"`
	}
	script := fmt.Sprintf(`#!/bin/sh
exec unshare --mount --propagation private /bin/sh -c 'mount %s && exec "$@"' %q %q "$@"
`, mountArgs, conf, binary)
	path := filepath.Join(filepath.Dir(filepath.Dir(conf)), "haroute-ns")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatalf("wrapper: %v", err)
	}
	return path
}

// remount remounts the bind mount conf in haroute's mount namespace (pid) read-only ("ro") or
// writable ("rw").
func remount(t *testing.T, pid int, conf, mode string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mountTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nsenter", "--target", strconv.Itoa(pid), "--mount",
		"mount", "-o", "remount,bind,"+mode, conf).CombinedOutput()
	if err != nil {
		t.Fatalf("remount %s %s in the namespace of %d: %v\n%s", conf, mode, pid, err, out)
	}
}

// fillUp fills the tmpfs at conf in haroute's mount namespace (reached through /proc/pid/root) and
// returns the function that frees it again.
func fillUp(t *testing.T, pid int, conf string) (free func()) {
	t.Helper()
	path := filepath.Join("/proc", strconv.Itoa(pid), "root", conf, "filler")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatalf("filler: %v", err)
	}
	chunk := make([]byte, fillChunk)
	written := 0
	for written < fillMaxBytes {
		n, err := f.Write(chunk)
		written += n
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			_ = f.Close()
			t.Fatalf("filler: %v", err)
		}
	}
	if err := f.Close(); err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filler: %v", err)
	}
	if written >= fillMaxBytes {
		t.Fatalf("filler: %d bytes written and conf/ is not full: is it the tmpfs?", written)
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatalf("remove the filler: %v", err)
		}
	}
}
