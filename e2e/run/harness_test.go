package run

import (
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of the harness.
const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 20 * time.Second
	applyTimeout = 10 * time.Second
	pollEvery    = 5 * time.Millisecond
	procRetryFor = 5 * time.Second
	socketTime   = time.Second
)

// binary is the haroute binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testbed.RunWithHaroute(m, "e2e/run", &binary))
}

// folderRouter is `haroute run --manifests DIR --managed-haproxy` running as a child process, with
// the manifest folder it watches. The process harness is testbed.RouterProcess.
type folderRouter struct {
	*testbed.RouterProcess
	t         *testing.T
	manifests string
}

// startRouter writes files (name → content) into a new manifest folder, runs haroute on it and waits
// until it reports ready; env are extra environment variables (NAME=value). The cleanup fails the test when haroute exited before it, or when the
// HAProxy master it started still runs after haroute stopped.
func startRouter(t *testing.T, files map[string]string, env ...string) *folderRouter {
	t.Helper()
	dir := testkit.TempDir(t)
	manifests := filepath.Join(dir, "m")
	r := &folderRouter{RouterProcess: folderProcess(t, dir, manifests, true), t: t, manifests: manifests}
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		r.write(name, data)
	}
	r.Start([]string{testbed.ManagedHAProxyFlag(), "--allow-loopback-endpoints"}, env...)
	r.MustStopWith(r.ShowProc().Master.PID)
	return r
}

// folderProcess prepares `haroute run --manifests manifests` on the HAProxy directory dir/h with
// the package's bounds; mustOutlive: the cleanup fails the test when haroute exited before it.
func folderProcess(t *testing.T, dir, manifests string, mustOutlive bool) *testbed.RouterProcess {
	return testbed.NewRouterProcess(t, testbed.RouterProcessConfig{
		Binary: binary,
		Dir:    filepath.Join(dir, "h"),
		Source: []string{"--manifests", manifests},
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
			Deathsig:    syscall.SIGTERM,
			MustOutlive: mustOutlive,
		},
	})
}

// write replaces a manifest file atomically (the watcher never sees half a file).
func (r *folderRouter) write(name, data string) {
	r.t.Helper()
	path := filepath.Join(r.manifests, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		r.t.Fatal(err)
	}
}

// remove deletes a manifest file.
func (r *folderRouter) remove(name string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.manifests, name)); err != nil {
		r.t.Fatal(err)
	}
}

// addrs returns the backends' "ip:port".
func addrs(bs []*testkit.Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Addr()
	}
	return out
}

// percentiles returns the p50 and p99 of ds (nearest rank).
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return rank(0.50), rank(0.99)
}

// logLatency logs p50/p99 of an event → applied latency series.
func logLatency(t *testing.T, what string, ds []time.Duration) {
	t.Helper()
	p50, p99 := percentiles(ds)
	t.Logf("event → applied latency, %s: n=%d p50=%v p99=%v", what, len(ds), p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond))
}
