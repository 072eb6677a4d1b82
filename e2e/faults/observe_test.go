package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/socket"
)

// Bounds of the observations.
const (
	httpProbeTimeout = 2 * time.Second
	maxBody          = 4 << 20
	pidPoll          = 20 * time.Millisecond
)

// statsGet sends GET path to haroute's stats port and returns the status and the body.
func statsGet(port int, path string) (int, string, error) {
	hc := &http.Client{Timeout: httpProbeTimeout}
	resp, err := hc.Get("http://127.0.0.1:" + strconv.Itoa(port) + path)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp.StatusCode, "", fmt.Errorf("GET %s: read body: %w", path, err)
	}
	return resp.StatusCode, string(body), nil
}

// metric returns the sum of every series of the metric name on /metrics (0 when it has none yet).
func metric(port int, name string) (float64, error) {
	code, body, err := statsGet(port, "/metrics")
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("/metrics: status %d", code)
	}
	var sum float64
	for _, l := range strings.Split(body, "\n") {
		series, value, ok := strings.Cut(l, " ")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("/metrics: line %q: %w", l, err)
		}
		sum += v
	}
	return sum, nil
}

// mustMetric is metric that fails the test on an error.
func mustMetric(t *testing.T, port int, name string) float64 {
	t.Helper()
	v, err := metric(port, name)
	if err != nil {
		t.Fatalf("metric %s: %v", name, err)
	}
	return v
}

// alive reports whether pid runs (a zombie waiting for its parent does not).
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}

// waitGone waits (bounded by timeout) until none of pids runs.
func waitGone(timeout time.Duration, pids ...int) error {
	return testkit.Eventually(timeout, pidPoll, func() error {
		for _, pid := range pids {
			if alive(pid) {
				return fmt.Errorf("process %d still runs", pid)
			}
		}
		return nil
	})
}

// procPIDs returns the master's and every worker's PID from `show proc`.
func procPIDs(r *testbed.RouterProcess) []int {
	st := r.ShowProc()
	pids := []int{st.Master.PID}
	for _, w := range st.Workers {
		pids = append(pids, w.PID)
	}
	return pids
}

// waitNewMaster waits (bounded by applyTimeout) until the master socket answers for a master other
// than old, and returns its PID.
func waitNewMaster(t *testing.T, r *testbed.RouterProcess, old int) int {
	t.Helper()
	var pid int
	if err := testkit.Eventually(applyTimeout, pidPoll, func() error {
		if r.Proc != nil && r.Proc.Exited() {
			return testkit.Final(errors.New("haroute exited"))
		}
		if pid = r.MasterPID(); pid == 0 || pid == old {
			return fmt.Errorf("master is %d", pid)
		}
		return nil
	}); err != nil {
		t.Fatalf("no new HAProxy master after %d: %v", old, err)
	}
	return pid
}

// serverCheck reads `show servers state` and returns the servers not in maintenance as a sorted list
// of "ip:port" (one entry per backend that holds it), and an error naming every backend that holds
// the same address twice, in maintenance or not (a server added again beside the one already there).
func serverCheck(r *testbed.RouterProcess) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), socketTime)
	defer cancel()
	states, err := socket.ShowServersState(ctx, r.Admin, "")
	if err != nil {
		return nil, fmt.Errorf("show servers state: %w", err)
	}
	// Administrative maintenance: forced, inherited, resolution, or set by configuration.
	const maint = 0x01 | 0x02 | 0x04 | 0x20
	seen := map[string]bool{}
	var active, dups []string
	for _, s := range states {
		if s.Addr == "-" { // a unix socket server (be_sni, be_no_sni)
			continue
		}
		addr := s.Addr + ":" + strconv.Itoa(s.Port)
		key := s.Backend + " " + addr
		if seen[key] {
			dups = append(dups, fmt.Sprintf("%s holds %s twice (server %s)", s.Backend, addr, s.Server))
		}
		seen[key] = true
		if s.AdminState&maint == 0 {
			active = append(active, addr)
		}
	}
	sort.Strings(active)
	if len(dups) > 0 {
		return active, fmt.Errorf("duplicate servers: %s", strings.Join(dups, "; "))
	}
	return active, nil
}

// repeat returns n copies of each of ss, sorted (the active servers of n backends with the same
// endpoints).
func repeat(n int, ss ...string) []string {
	out := make([]string, 0, n*len(ss))
	for range n {
		out = append(out, ss...)
	}
	sort.Strings(out)
	return out
}

// waitServers waits (bounded by applyTimeout) until the active servers over all backends are exactly
// want (a multiset, see serverCheck) and none is duplicated.
func waitServers(t *testing.T, r *testbed.RouterProcess, want []string) {
	t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	if err := testkit.Eventually(applyTimeout, 20*time.Millisecond, func() error {
		got, err := serverCheck(r)
		if err != nil {
			return err
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			return fmt.Errorf("%d active servers, want %d", len(got), len(want))
		}
		return nil
	}); err != nil {
		t.Fatalf("servers: %v", err)
	}
}

// waitServed waits (bounded by applyTimeout) until GET http://host/ through r answers 200 from one of
// backends, and returns when it did.
func waitServed(t *testing.T, r *testbed.RouterProcess, host string, backends ...string) time.Time {
	t.Helper()
	var at time.Time
	if err := testkit.Eventually(applyTimeout, pollEvery, func() error {
		code, be, err := r.Get(host, "/")
		if err != nil {
			return err
		}
		for _, want := range backends {
			if code == http.StatusOK && be == want {
				at = time.Now()
				return nil
			}
		}
		return fmt.Errorf("answer %d from %q", code, be)
	}); err != nil {
		t.Fatalf("GET %s: want 200 from one of %v: %v", host, backends, err)
	}
	return at
}

// waitReady waits (bounded by applyTimeout) until /healthz/ready answers 200, and returns when.
func waitReady(t *testing.T, r *testbed.RouterProcess) time.Time {
	t.Helper()
	r.WaitHTTP("/healthz/ready", http.StatusOK, applyTimeout)
	return time.Now()
}

// waitMetricAbove waits (bounded by applyTimeout) until the metric name rises above before, and
// returns its value.
func waitMetricAbove(t *testing.T, port int, name string, before float64) float64 {
	t.Helper()
	var v float64
	if err := testkit.Eventually(applyTimeout, 20*time.Millisecond, func() error {
		var err error
		if v, err = metric(port, name); err != nil {
			return err
		}
		if v <= before {
			return fmt.Errorf("%s is %v", name, v)
		}
		return nil
	}); err != nil {
		t.Fatalf("metric %s did not rise above %v: %v", name, before, err)
	}
	return v
}
