package faults

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// Stalls of TestAdminSocketStalled: a short one, within the admin socket's timeout of one command
// (5 s), and a long one, past the session's and the first command's timeouts (10 s in all), which
// makes the runtime update fail.
const (
	shortStall = 3 * time.Second
	longStall  = 12 * time.Second
)

// TestAdminSocketStalled SIGSTOPs HAProxy's worker (its admin socket and its traffic stall) while
// haroute applies an endpoint change, then SIGCONTs it. haroute never hangs: while the worker is
// stopped /healthz/ready answers 503 naming the admin socket; after the short stall the change
// applies once the worker runs again; after the long one the runtime update has failed by timeout,
// which the log reports, and haroute falls back to a reload (haroute_reloads_total{reason=
// "RuntimeFallback"}) or retries (haroute_update_failures_total). Either way the change is served
// without help once the worker runs, readiness is 200 again and no answer comes from a wrong backend.
func TestAdminSocketStalled(t *testing.T) {
	t.Parallel()
	for i, stall := range []time.Duration{shortStall, longStall} {
		t.Run(stall.String(), func(t *testing.T) {
			t.Parallel()
			stallWorker(t, stall, [2]string{fmt.Sprintf("127.0.52.%d", 10*i+1), fmt.Sprintf("127.0.52.%d", 10*i+2)})
		})
	}
}

// stallWorker is one case of TestAdminSocketStalled; its two backends listen on ips.
func stallWorker(t *testing.T, stall time.Duration, ips [2]string) {
	host := "stall.e2e.test"
	web1 := testkit.StartHTTPBackend(t, ips[0], "web-1")
	web2 := testkit.StartHTTPBackend(t, ips[1], "web-2")
	b := newBed(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("web", host, "web"),
		"service.yaml": testkit.ServiceYAML("web", web1),
	})
	r := b.StartManaged(testbed.FolderOpts{}, nil)
	r.WaitAnswer(host, "/", http.StatusOK, web1.Name)
	failuresBefore := mustMetric(t, r.StatsPort, "haroute_update_failures_total")
	reloadsBefore := r.Reloads()
	load := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+host+"/", testkit.Names(web1, web2)...)
	time.Sleep(loadSettle)

	st := r.ShowProc()
	if len(st.Workers) == 0 {
		t.Fatal("show proc lists no worker")
	}
	worker := st.Workers[0].PID
	if err := syscall.Kill(worker, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", worker, err)
	}
	stopped := time.Now()
	cont := func() {
		if err := syscall.Kill(worker, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("SIGCONT %d: %v", worker, err)
		}
	}
	t.Cleanup(cont)
	logBefore := len(r.Proc.Out.String())
	b.Write("service.yaml", testkit.ServiceYAML("web", web1, web2))
	var probes []string
	reported := false
	for time.Since(stopped) < stall {
		code, body, err := statsGet(r.StatsPort, "/healthz/ready")
		probes = append(probes, fmt.Sprintf("%v: %d %q %v", time.Since(stopped).Round(100*time.Millisecond), code, strings.TrimSpace(body), err))
		reported = reported || code == http.StatusServiceUnavailable && strings.Contains(body, "admin socket")
		time.Sleep(max(0, min(time.Second, time.Until(stopped.Add(stall)))))
	}
	cont()
	resumed := time.Now()
	waitServers(t, r, testkit.Addrs(web1, web2))
	applied := time.Now()
	r.WaitBackends(host, "/", web1.Name, web2.Name)
	ready := waitReady(t, r)
	time.Sleep(loadSettle)
	f := stopLoad(load)
	fallbacks := mustMetric(t, r.StatsPort, `haroute_reloads_total{reason="RuntimeFallback"}`)
	failures := mustMetric(t, r.StatsPort, "haroute_update_failures_total") - failuresBefore
	logs := r.Proc.Out.String()[logBefore:]
	t.Logf("/healthz/ready while the worker was stopped:\n%s", strings.Join(probes, "\n"))
	t.Logf("change applied %v after SIGCONT, ready %v after; %v fallback reloads, %v update failures",
		applied.Sub(resumed).Round(time.Millisecond), ready.Sub(resumed).Round(time.Millisecond), fallbacks, failures)

	if !reported {
		t.Errorf("/healthz/ready never said the admin socket stalled:\n%s", strings.Join(probes, "\n"))
	}
	if stall == longStall {
		if fallbacks+failures == 0 {
			t.Errorf("a runtime update stalled past the socket timeouts counts neither as a fallback reload nor as an update failure")
		}
		if grepLine(logs, "msg=sync", "haproxy socket unavailable") == "" && grepLine(logs, `msg="sync failed`, "haproxy socket unavailable") == "" {
			t.Errorf("no sync line reports the stalled admin socket; log:\n%s", logs)
		}
	}
	if f.wrong != 0 {
		t.Errorf("%d answers from a wrong backend", f.wrong)
	}
	figures(t, "admin socket stalled "+stall.String(), f, "change applied after SIGCONT in", applied.Sub(resumed), r.Reloads()-reloadsBefore)
}
