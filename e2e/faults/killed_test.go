package faults

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// The change TestHarouteKilledMidApply interrupts: the base Service scales from 1 to midApplyPods
// endpoints and midApplyRoutes new Routes (served from spare backends) go to it, hundreds of runtime
// operations in all.
const (
	midApplyPods   = 30
	midApplyRoutes = 8
	// killPoll is how often the servers are read while the change applies.
	killPoll = time.Millisecond
)

// TestHarouteKilledMidApply SIGKILLs haroute while it applies a change of hundreds of runtime
// operations, then starts it again, under load on a Route that exists throughout.
//
// Sidecar (HAProxy started beside haroute, as its own container): HAProxy keeps serving while haroute
// is gone (no request of the load fails); the new haroute adopts the running HAProxy, converges to
// the manifest without help and no backend holds a server twice.
//
// Managed (--managed-haproxy): HAProxy dies with haroute (Pdeathsig), master and workers, leaving no
// orphan; the new haroute starts a new HAProxy that serves the manifest. What the load loses in the
// gap is measured.
func TestHarouteKilledMidApply(t *testing.T) {
	t.Parallel()
	for i, sidecar := range []bool{true, false} {
		name := map[bool]string{true: "sidecar", false: "managed"}[sidecar]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var pods []*testkit.Backend
			for j := range midApplyPods {
				pods = append(pods, testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.50.%d", 100*i+j+1), fmt.Sprintf("pod-%02d", j)))
			}
			killMidApply(t, name, sidecar, pods)
		})
	}
}

// killMidApply is one case of TestHarouteKilledMidApply.
func killMidApply(t *testing.T, name string, sidecar bool, pods []*testkit.Backend) {
	host := name + ".mid.e2e.test"
	b := newBed(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("base", host, "web"),
		"service.yaml": testkit.ServiceYAML("web", pods[0]),
	})
	var r1 *testbed.RouterProcess
	var h *testbed.HAProxy
	if sidecar {
		r1, h = b.StartSidecar(testbed.FolderOpts{MayExit: true})
	} else {
		r1 = b.StartManaged(testbed.FolderOpts{MayExit: true}, nil)
	}
	r1.WaitAnswer(host, "/", http.StatusOK, pods[0].Name)
	waitServers(t, r1, testkit.Addrs(pods[0]))
	oldProcs := procPIDs(r1)
	reloadsBefore := r1.Reloads()
	load := testkit.StartLoad(t, testkit.NewClient(t, r1.HTTPPort, r1.HTTPSPort, nil), "http://"+host+"/", testkit.Names(pods...)...)
	time.Sleep(loadSettle)

	// The change, and the kill as soon as HAProxy shows part of it.
	b.Write("service.yaml", testkit.ServiceYAML("web", pods...))
	b.Write("many.yaml", routesYAML("many", midApplyRoutes, "web"))
	want := repeat(midApplyRoutes+1, testkit.Addrs(pods...)...)
	atKill := killWhenApplying(t, r1, len(want))
	killed := time.Now()
	t.Logf("haroute killed with %d of %d servers of the change applied", atKill, len(want))
	var reloadsAtKill int
	if sidecar {
		reloadsAtKill = r1.Reloads()
		if h.Exited() {
			t.Fatal("HAProxy exited with haroute")
		}
	} else if err := waitGone(applyTimeout, oldProcs...); err != nil {
		t.Fatalf("the managed HAProxy outlived haroute's SIGKILL: %v", err)
	}

	var r2 *testbed.RouterProcess
	if sidecar {
		r2 = b.Process(testbed.FolderOpts{}, r1)
		r2.Start(testbed.SidecarFlags())
	} else {
		r2 = b.StartManaged(testbed.FolderOpts{}, r1)
		reloadsAtKill, reloadsBefore = 0, 0 // a new master counts from 0
	}
	ready := time.Now()
	waitServers(t, r2, want)
	for j := range midApplyRoutes {
		waitServed(t, r2, hostOf("many", j), testkit.Names(pods...)...)
	}
	waitServed(t, r2, host, testkit.Names(pods...)...)
	converged := time.Now()
	time.Sleep(loadSettle)
	if _, err := serverCheck(r2); err != nil {
		t.Error(err)
	}
	reloads := r2.Reloads()
	f := stopLoad(load)
	if f.wrong != 0 {
		t.Errorf("%d answers from a wrong backend", f.wrong)
	}
	if sidecar {
		if pid := r2.ShowProc().Master.PID; pid != h.PID {
			t.Errorf("HAProxy master is %d, want the one started beside haroute (%d)", pid, h.PID)
		}
		if f.failed != 0 {
			t.Errorf("%d of %d requests failed while haroute was killed and restarted beside a running HAProxy", f.failed, f.total)
		}
	}
	t.Logf("%s: reloads by the killed haroute %d, by the new one %d; new haroute ready %v after the kill, converged %v after it",
		name, reloadsAtKill-reloadsBefore, reloads-reloadsAtKill, ready.Sub(killed).Round(time.Millisecond), converged.Sub(ready).Round(time.Millisecond))
	figures(t, "haroute SIGKILL mid-apply ("+name+")", f, "converged after", converged.Sub(killed), reloads-reloadsBefore)
}

// killWhenApplying SIGKILLs haroute once the active servers number more than before the change
// (HAProxy has taken part of it) and returns that number; target is their number once the change
// is applied (a kill that lands after it still counts, and says so).
func killWhenApplying(t *testing.T, r *testbed.RouterProcess, target int) int {
	t.Helper()
	base, err := serverCheck(r)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(applyTimeout)
	for time.Now().Before(deadline) {
		got, err := serverCheck(r)
		if err == nil && len(got) > len(base) {
			if kerr := r.Proc.Kill(); kerr != nil {
				t.Fatal(kerr)
			}
			if len(got) >= target {
				t.Logf("the kill landed after the change was applied")
			}
			return len(got)
		}
		time.Sleep(killPoll)
	}
	t.Fatalf("haroute applied nothing of the change within %v", applyTimeout)
	return 0
}
