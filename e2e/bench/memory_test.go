//go:build e2e

package bench

import (
	"cmp"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench/results"
	"github.com/haroute/haroute/e2e/framework"
)

// The workload and settings of TestIdleMemory.
const (
	routesEnv = "HAROUTE_BENCH_ROUTES"
	// admittedEnv set to 0 measures without waiting for every Route's status (start_to_admitted is
	// then not measured).
	admittedEnv  = "HAROUTE_BENCH_ADMITTED"
	endpointsEnv = "HAROUTE_BENCH_ENDPOINTS"
	// heldEnv set to 0 leaves out the measurement with long-lived connections held (measureHeld).
	heldEnv          = "HAROUTE_BENCH_HELD"
	defaultRoutes    = 100
	defaultEndpoints = 1
	// benchMaxConn is both routers' ROUTER_MAX_CONNECTIONS: HAProxy sizes its fd use from it, and
	// this machine's fd hard limit is 20,000.
	benchMaxConn = 4750
	idlePause    = 10 * time.Second
	// servedTimeout is the bound of the wait for a router to serve the workload: the stock router
	// writes Route status through client-go's default rate limit (5 requests a second).
	servedTimeoutBase     = 2 * time.Minute
	servedTimeoutPerRoute = 300 * time.Millisecond
	harouteName           = "haroute"
)

// TestIdleMemory measures what each router uses, alone, for the same workload ($HAROUTE_BENCH_ROUTES
// Routes, default 100, each to its own Service with $HAROUTE_BENCH_ENDPOINTS endpoints, default 1):
// the stock router, then haroute, both with the same HAProxy, maxconn and reload interval. Each is
// started once the objects exist, waited for until it serves them all, left idle for 10s and
// measured; then (unless $HAROUTE_BENCH_HELD=0) measured again after endpoint churn with long-lived
// connections held (measureHeld). It logs FIGURES lines per router.
func TestIdleMemory(t *testing.T) {
	build := requireStock(t)
	hb := HAProxy(t)
	routes, endpoints := envInt(t, routesEnv, defaultRoutes), envInt(t, endpointsEnv, defaultEndpoints)
	c, ns, pods := framework.Setup(t, "idle")
	w := CreateWorkload(t, c, ns, pods, routes, endpoints)
	env := []string{"ROUTER_MAX_CONNECTIONS=" + strconv.Itoa(benchMaxConn)}
	admitted := os.Getenv(admittedEnv) != "0"
	held := os.Getenv(heldEnv) != "0"
	out := results.Idle{Header: NewHeader(hb, "make bench BENCH_RUN=TestIdleMemory BENCH_ROUTES=N BENCH_ENDPOINTS=E", time.Now())}
	defer func() {
		out.Elapsed = time.Since(out.Started).Seconds()
		if len(out.Points) > 0 {
			WriteResults(t, results.IdleFile, mergeIdle(t, out))
		}
	}()

	t.Run("stock", func(t *testing.T) {
		r := StartStockRouter(t, c, "", StockOptions{Build: build, HAProxy: hb, ReloadInterval: benchReloadInterval, Env: env})
		served := WaitServed(t, c, w, r.Name, r.Client, admitted, servedTimeout(routes))
		time.Sleep(idlePause)
		m, err := Measure(r.PID(), r.HAProxyPIDs())
		if err != nil {
			t.Fatal(err)
		}
		// The reload script's first run starts HAProxy; the later ones reload it.
		logFigures(t, "stock", w, m, r.Started, served, r.Reloads()-1, hb)
		p := idlePoint("stock", w, m, r.Started, served, r.Reloads()-1)
		if held {
			h := measureHeld(t, c, w, heldRouter{
				name: "stock", pid: r.PID(), httpPort: r.HTTPPort, client: r.Client,
				haproxyPIDs: func() ([]int, error) { return r.HAProxyPIDs(), nil }, reloads: r.Reloads,
			})
			p.Held = &h
		}
		out.Points = append(out.Points, p)
		r.Stop()
	})
	t.Run("haroute", func(t *testing.T) {
		start := time.Now()
		r := c.StartRouterArgs(t, []string{"--managed-haproxy=" + hb, "--reload-interval", benchReloadInterval.String()},
			append(env, "ROUTER_NAME="+harouteName)...)
		served := WaitServed(t, c, w, harouteName, r.Client, admitted, servedTimeout(routes))
		pid := r.Proc.Cmd.Process.Pid
		m := measureIdle(t, pid)
		logFigures(t, "haroute", w, m, start, served, r.Reloads(), hb)
		p := idlePoint("haroute", w, m, start, served, r.Reloads())
		if held {
			h := measureHeld(t, c, w, heldRouter{
				name: "haroute", pid: pid, httpPort: r.HTTPPort, client: r.Client,
				haproxyPIDs: func() ([]int, error) { return HAProxyDescendants(pid) }, reloads: r.Reloads,
			})
			p.Held = &h
		}
		out.Points = append(out.Points, p)
	})
}

// measureIdle waits idlePause, for the router and its HAProxy to settle, then measures the memory of
// the router process routerPID and of the HAProxy processes under it.
func measureIdle(t *testing.T, routerPID int) Memory {
	t.Helper()
	time.Sleep(idlePause)
	pids, err := HAProxyDescendants(routerPID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Measure(routerPID, pids)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// logFigures logs the FIGURES line of one router: the fields the comparison reads, then the PSS
// figures, when traffic was first answered and when every Route was first admitted, reloads after
// HAProxy's start, the HAProxy series and maxconn.
func logFigures(t *testing.T, router string, w *Workload, m Memory, start time.Time, s Served, reloads int, haproxy string) {
	t.Helper()
	if len(m.HAProxyPIDs) == 0 {
		t.Errorf("%s: no HAProxy process found", router)
	}
	since := func(at time.Time) string {
		if at.IsZero() {
			return "not-measured"
		}
		return at.Sub(start).Round(time.Millisecond).String()
	}
	t.Logf("FIGURES router=%s routes=%d endpoints=%d haproxy_procs=%d haproxy_rss_kB=%d router_rss_kB=%d start_to_served=%s "+
		"haproxy_pss_kB=%d router_pss_kB=%d start_to_answered=%s start_to_admitted=%s reloads=%d haproxy=%s maxconn=%d",
		router, w.Routes, w.Endpoints, len(m.HAProxyPIDs), m.HAProxyRSS, m.RouterRSS, since(s.Served()),
		m.HAProxyPSS, m.RouterPSS, since(s.Answered), since(s.Admitted), reloads, haproxyLabel(haproxy), benchMaxConn)
}

// idlePoint is one router's measurement for idle.json.
func idlePoint(router string, w *Workload, m Memory, start time.Time, s Served, reloads int) results.IdlePoint {
	since := func(at time.Time) float64 {
		if at.IsZero() {
			return 0
		}
		return at.Sub(start).Seconds()
	}
	return results.IdlePoint{
		Router: router, Routes: w.Routes, Endpoints: w.Endpoints,
		RouterMB: mib(m.RouterRSS), HAProxyMB: mib(m.HAProxyRSS), HAProxyPSSMB: mib(m.HAProxyPSS),
		StartToServed: since(s.Served()), StartToStatus: since(s.Admitted), Reloads: reloads,
	}
}

// mergeIdle adds the points of the idle.json already in the results directory that out does not
// measure again (other sizes: each run of TestIdleMemory measures one size).
func mergeIdle(t *testing.T, out results.Idle) results.Idle {
	t.Helper()
	var old results.Idle
	if _, err := results.Read(OutDir(t), results.IdleFile, &old); err != nil {
		t.Logf("previous %s not merged: %v", results.IdleFile, err)
		return out
	}
	type key struct {
		router            string
		routes, endpoints int
	}
	have := map[key]bool{}
	for _, p := range out.Points {
		have[key{p.Router, p.Routes, p.Endpoints}] = true
	}
	for _, p := range old.Points {
		if !have[key{p.Router, p.Routes, p.Endpoints}] {
			out.Points = append(out.Points, p)
		}
	}
	slices.SortStableFunc(out.Points, func(a, b results.IdlePoint) int {
		if c := cmp.Compare(a.Routes*1000+a.Endpoints, b.Routes*1000+b.Endpoints); c != 0 {
			return c
		}
		return strings.Compare(b.Router, a.Router) // stock first
	})
	return out
}

func servedTimeout(routes int) time.Duration {
	return servedTimeoutBase + time.Duration(routes)*servedTimeoutPerRoute
}

// envInt returns the positive integer in environment variable name, or def when it is unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
