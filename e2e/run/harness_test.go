package run

import (
	"os"
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

// folderRouter is `haroute run --manifests DIR --managed-haproxy` running as a child process
// (testbed.RouterProcess), with the folder-mode bed it runs on (testbed.Folder: the manifest folder it
// watches, Write and Remove).
type folderRouter struct {
	*testbed.RouterProcess
	*testbed.Folder
}

// newFolder makes a folder-mode bed with the package's bounds and writes files (name → content) into
// its manifest folder.
func newFolder(t *testing.T, files map[string]string) *testbed.Folder {
	t.Helper()
	return testbed.NewFolder(t, testbed.FolderConfig{
		Binary: binary,
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
		},
	}, files)
}

// startRouter writes files (name → content) into a new manifest folder, runs haroute on it and waits
// until it reports ready; env are extra environment variables (NAME=value). The cleanup fails the
// test when haroute exited before it, or when the HAProxy master it started still runs after haroute
// stopped.
func startRouter(t *testing.T, files map[string]string, env ...string) *folderRouter {
	t.Helper()
	f := newFolder(t, files)
	return &folderRouter{RouterProcess: f.StartManaged(testbed.FolderOpts{Env: env}, nil), Folder: f}
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
