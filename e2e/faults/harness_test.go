package faults

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// newBed makes the test's folder-mode bed with the suite's bounds and writes files (name → content)
// into its manifest folder.
func newBed(t *testing.T, files map[string]string) *testbed.Folder {
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
			Deathsig:    syscall.SIGKILL,
			LogTail:     logTail,
		},
	}, files)
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
