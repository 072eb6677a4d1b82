package haproxy_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// soakCycles is the number of add/delete cycles of TestDynamicBackendsSoak; the issue's figure is
// measured with -soak.cycles 5000.
var soakCycles = flag.Int("soak.cycles", 100, "add/delete cycles of TestDynamicBackendsSoak (HAProxy 3.4+)")

// TestDynamicBackendsSoak (HAProxy 3.4+) adds a Route and deletes it soak.cycles times, each a
// runtime plan (add backend, servers, publish, maps; then maps; then unpublish, servers, del
// backend), and checks that HAProxy ends with the backends it started with, and no reload. It logs
// the worker's resident memory before and after.
func TestDynamicBackendsSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of runtime backends (-short)")
	}
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	opts := testbed.RouterOptions(t)
	dir := testkit.TempDir(t)
	base := routesTo(t, opts, web, "a.example.com")
	withNew := routesTo(t, opts, web, "a.example.com", "new.example.com")
	inst, h := startInstance(t, dir, render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}, base)
	master := socket.NewMaster(h.MasterSocket, socket.Options{})
	st, err := master.ShowProc(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := socket.CapabilitiesOf(st.Version); !c.DynamicBackends || !c.SafeBackendDeletion {
		t.Skipf("HAProxy %s adds no backend at runtime (3.4.4+)", st.Version)
	}
	if _, err := inst.Update(ctx, base); err != nil { // drops the spares of the start
		t.Fatal(err)
	}
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	measure := func() (backends int, rssKB int) {
		t.Helper()
		list, err := h.Cmd("show backend")
		if err != nil {
			t.Fatal(err)
		}
		backends = strings.Count(strings.TrimSpace(list), "\n") // the lines after "# name"
		st, err := master.ShowProc(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := st.Current()
		if !ok {
			t.Fatal("no current worker")
		}
		return backends, workerRSS(t, w.PID)
	}
	cycle := func(i int) {
		t.Helper()
		for step, cfg := range []*model.Config{withNew, base} {
			out, err := inst.Update(ctx, cfg)
			if err != nil || out.Reloaded {
				t.Fatalf("cycle %d, step %d: reloaded %v (%v), err %v", i, step, out.Reloaded, out.Reason, err)
			}
		}
		// A deletion HAProxy defers (a connection still attached) is retried, as the controller does.
		for n := 0; len(plan.Draining(inst.Applied())) > 0; n++ {
			if n == 50 {
				t.Fatalf("cycle %d: still draining %v", i, plan.Draining(inst.Applied()))
			}
			if n >= 3 {
				time.Sleep(20 * time.Millisecond)
			}
			if out, err := inst.Update(ctx, base); err != nil || out.Reloaded {
				t.Fatalf("cycle %d, deletion: reloaded %v (%v), err %v", i, out.Reloaded, out.Reason, err)
			}
		}
	}
	// Warm up: allocators and pools reach their working size.
	for i := range 20 {
		cycle(i)
	}
	backends0, rss0 := measure()
	for i := range *soakCycles {
		cycle(i)
		if i%500 == 0 {
			if status, backend, _ := client.Get(t, "http://a.example.com/"); status != http.StatusOK || backend != "web" {
				t.Fatalf("cycle %d: the steady Route answers %d from %q", i, status, backend)
			}
		}
	}
	backends1, rss1 := measure()
	t.Logf("%d add/delete cycles: HAProxy backends %d → %d, worker VmRSS %d → %d kB", *soakCycles, backends0, backends1, rss0, rss1)
	if backends1 != backends0 {
		t.Errorf("HAProxy runs %d backends after %d add/delete cycles, %d before", backends1, *soakCycles, backends0)
	}
}

// workerRSS returns VmRSS of process pid in kB.
func workerRSS(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no VmRSS for pid %d", pid)
	return 0
}
