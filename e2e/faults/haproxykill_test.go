package faults

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

const (
	// loadSettle is how long a load runs before a fault and after the recovery, so that the figures
	// cover both sides.
	loadSettle = 300 * time.Millisecond
	// startupWindow is runtime/supervise's: an HAProxy that exits with alerts within it of its start
	// counts as a failed start. The kills of an HAProxy that has been serving wait it out.
	startupWindow = 5*time.Second + 500*time.Millisecond
	// msgDidNotStart is the supervisor's error line for a failed start.
	msgDidNotStart = `msg="haproxy did not start"`
)

// TestHAProxyKilledUnderLoad SIGKILLs a managed HAProxy under load, once its master and once its
// current worker, after a change applied at runtime: the supervisor starts a new HAProxy without
// help, haroute resyncs it with a reload, it serves the whole current state (the runtime change
// included, no server twice), the killed processes are all gone, /healthz/ready answers 200 again,
// and no answer ever comes from a wrong backend. Requests lost, the time until 200s return and the
// reloads are logged.
//
// The "worker-at-start" case kills the worker within the supervisor's start-up window: the log must
// not call it a failed start (see the BUG skip).
func TestHAProxyKilledUnderLoad(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name   string
		worker bool
		early  bool
	}{{"master", false, false}, {"worker", true, false}, {"worker-at-start", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ips := [2]string{fmt.Sprintf("127.0.51.%d", 10*i+1), fmt.Sprintf("127.0.51.%d", 10*i+2)}
			killHAProxyUnderLoad(t, ips, tc.name, tc.worker, tc.early)
		})
	}
}

// killHAProxyUnderLoad is one case of TestHAProxyKilledUnderLoad; its two backends listen on ips.
func killHAProxyUnderLoad(t *testing.T, ips [2]string, name string, worker, early bool) {
	host := name + ".kill.e2e.test"
	web1 := testkit.StartHTTPBackend(t, ips[0], "web-1")
	web2 := testkit.StartHTTPBackend(t, ips[1], "web-2")
	b := newBed(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("web", host, "web"),
		"service.yaml": testkit.ServiceYAML("web", web1),
	})
	r := b.StartManaged(testbed.FolderOpts{}, nil)
	started := time.Now()
	r.WaitAnswer(host, "/", http.StatusOK, web1.Name)
	// A runtime change: the new HAProxy must serve it too.
	b.Write("service.yaml", testkit.ServiceYAML("web", web1, web2))
	waitServers(t, r, testkit.Addrs(web1, web2))
	reloadsBefore := mustMetric(t, r.StatsPort, "haroute_reloads_total")

	load := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+host+"/", testkit.Names(web1, web2)...)
	time.Sleep(loadSettle)
	if !early {
		time.Sleep(time.Until(started.Add(startupWindow)))
	}
	old := procPIDs(r)
	victim := old[0]
	if worker {
		if len(old) < 2 {
			t.Fatalf("show proc lists no worker: %v", old)
		}
		victim = old[1]
	}
	logBefore := len(r.Proc.Out.String())
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", victim, err)
	}
	killed := time.Now()
	master := waitNewMaster(t, r, old[0])
	r.MustStopWith(master)
	back := waitServed(t, r, host, testkit.Names(web1, web2)...)
	ready := waitReady(t, r)
	// The runtime change made before the kill is lost with the old worker: haroute resyncs the new
	// HAProxy with a reload.
	reloads := waitMetricAbove(t, r.StatsPort, "haroute_reloads_total", reloadsBefore) - reloadsBefore
	waitServers(t, r, testkit.Addrs(web1, web2))
	time.Sleep(loadSettle)
	f := stopLoad(load)

	if err := waitGone(applyTimeout, old...); err != nil {
		t.Errorf("the killed HAProxy left a process behind: %v", err)
	}
	if f.wrong != 0 {
		t.Errorf("%d answers from a wrong backend", f.wrong)
	}
	if r.Proc.Exited() {
		t.Fatal("haroute exited")
	}
	t.Logf("killed the %s (PID %d) of HAProxy %v; new master %d; 200s back after %v, /healthz/ready 200 after %v",
		map[bool]string{true: "worker", false: "master"}[worker], victim, old, master,
		back.Sub(killed).Round(time.Millisecond), ready.Sub(killed).Round(time.Millisecond))
	figures(t, "HAProxy "+name+" SIGKILL", f, "200s back after", back.Sub(killed), int(reloads))
	if after := r.Proc.Out.String()[logBefore:]; strings.Contains(after, msgDidNotStart) {
		line := grepLine(after, msgDidNotStart)
		t.Errorf("a kill of an HAProxy worker is reported as a failed start: %s", line)
	}
}

// grepLine returns the first line of text that contains every one of subs ("" when none does).
func grepLine(text string, subs ...string) string {
	for _, l := range strings.Split(text, "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			return l
		}
	}
	return ""
}
