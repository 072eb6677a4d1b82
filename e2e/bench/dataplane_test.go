//go:build e2e

package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench/results"
	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
)

// The data-plane benchmark's workload and load.
const (
	// dataPlaneRoutesEnv overrides the sizes, as a comma-separated list ("10" while developing).
	dataPlaneRoutesEnv = "HAROUTE_BENCH_DATAPLANE_ROUTES"
	// dataPlaneDurationEnv overrides how long each point is measured (a Go duration, at most 10s).
	dataPlaneDurationEnv = "HAROUTE_BENCH_DATAPLANE_DURATION"
	dataPlaneDuration    = 5 * time.Second
	dataPlaneMaxDuration = 10 * time.Second
	// dataPlaneMaxRequests bounds a point's requests whatever its duration.
	dataPlaneMaxRequests = 500_000
	// dataPlaneWarmUp is the unrecorded run before each measurement: the client's keep-alive
	// connections open, HAProxy's first allocations happen.
	dataPlaneWarmUp = 500 * time.Millisecond
	// dataPlaneClientsPerCPU is BenchmarkRequests' b.SetParallelism: keep-alive clients per GOMAXPROCS.
	dataPlaneClientsPerCPU = 4
	dataPlaneBackends      = 4 // loopback backends every Route points at (their count does not matter)
	dataPlaneSeed          = 2026
	dataPlaneNamespace     = "bench"
	// dataPlaneCheckInterval keeps 10,000 servers' health checks off the backends during the run.
	dataPlaneCheckInterval = "1h"
	dataPlaneCommand       = "go test -tags e2e -count=1 -run TestDataPlane -v ./e2e/bench/"
)

// dataPlaneSizes are the default numbers of Routes.
var dataPlaneSizes = []int{10, 10000}

// dataPlanePathSets are the Route paths of a host with one, two or three Routes (BenchmarkRequests').
var dataPlanePathSets = [][]string{{"/"}, {"/", "/api"}, {"/", "/api", "/api/v2/"}}

// TestDataPlane measures requests per second through a real HAProxy at 10 and 10,000 Routes (hosts
// with one to three paths each) in two forms that differ only in the public frontend's host and path
// lookup: haroute's rendered configuration (tree lookups in its maps) and the stock router's
// (map_reg over one regular expression per Route, in its order); the same backends and servers.
// Both HAProxies of a size run side by side, and the measurements alternate between them,
// $HAROUTE_BENCH_REPEATS times (default 3). Each point is a bounded load run (5 s, or
// $HAROUTE_BENCH_DATAPLANE_DURATION) of 4 keep-alive clients per CPU, as BenchmarkRequests, over a
// shuffled corpus of every Route, every request with a path no run used before (HAProxy caches
// pattern lookups); every answer is checked. It writes dataplane.json to the results directory
// (OutDir) and logs a FIGURES line per point.
func TestDataPlane(t *testing.T) {
	hb := HAProxy(t)
	t.Setenv(testkit.HAProxyEnv, hb) // testbed starts $HAROUTE_HAPROXY
	repeats := Repeats(t)
	sizes := dataPlaneRoutes(t)
	duration := dataPlaneEnvDuration(t, dataPlaneDurationEnv, dataPlaneDuration, dataPlaneMaxDuration)
	started := time.Now()
	out := results.DataPlane{Header: NewHeader(hb, dataPlaneCommand, started)}

	ca := testkit.NewCA(t, "data plane CA")
	defaultCert := ca.IssueBundle(t, "default.dataplane.test")
	var backends []*testkit.Backend
	for i := range dataPlaneBackends {
		backends = append(backends, testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.0.%d", 10+i), fmt.Sprintf("b%d", i)))
	}
	clients := dataPlaneClientsPerCPU * runtime.GOMAXPROCS(0)
	for _, routes := range sizes {
		t.Run(fmt.Sprintf("routes=%d", routes), func(t *testing.T) {
			m, corpus := dataPlaneWorkload(backends, routes)
			forms := []*DataPlaneRouter{
				StartDataPlaneRouter(t, m.Objects(), FormHaroute, defaultCert, ca.Pool()),
				StartDataPlaneRouter(t, m.Objects(), FormMapReg, defaultCert, ca.Pool()),
			}
			for _, r := range forms {
				if len(r.Routes) != routes {
					t.Fatalf("%s: %d Routes admitted, want %d", r.Form, len(r.Routes), routes)
				}
				if w := DataPlaneLoad(r.Client, corpus, "w", clients, dataPlaneWarmUp, dataPlaneMaxRequests); w.Failed > 0 {
					t.Fatalf("%s warm-up: %d of %d requests failed; first: %v", r.Form, w.Failed, w.Requests, w.FirstError)
				}
			}
			for rep := 1; rep <= repeats; rep++ {
				for _, r := range forms {
					conns := backendConns(backends)
					res := DataPlaneLoad(r.Client, corpus, "r"+strconv.Itoa(rep), clients, duration, dataPlaneMaxRequests)
					if res.Failed > 0 {
						t.Errorf("%s repeat %d: %d of %d requests failed; first: %v", r.Form, rep, res.Failed, res.Requests, res.FirstError)
					}
					out.Points = append(out.Points, results.DataPlanePoint{
						Routes: routes, Form: r.Form, Repeat: rep, RPS: res.RPS(), Hosts: res.Hosts,
					})
					t.Logf("FIGURES form=%s routes=%d repeat=%d rps=%.0f requests=%d hosts=%d failed=%d srvconns_per_req=%.3f elapsed=%s clients=%d haproxy=%s",
						r.Form, routes, rep, res.RPS(), res.Requests, res.Hosts, res.Failed,
						float64(backendConns(backends)-conns)/float64(max(1, res.Requests)), res.Elapsed.Round(time.Millisecond), clients, haproxyLabel(hb))
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	out.Elapsed = time.Since(started).Seconds()
	WriteResults(t, results.DataPlaneFile, out)
}

// dataPlaneWorkload returns the manifests of routes Routes over the backends (hosts with one to three
// paths, Route i to Service b<i mod 4>) and the request corpus: one target per Route, shuffled so that
// consecutive requests hit different hosts and map entries.
func dataPlaneWorkload(backends []*testkit.Backend, routes int) (*testbed.Manifests, []DataPlaneTarget) {
	m := &testbed.Manifests{}
	for _, be := range backends {
		m.Service(dataPlaneNamespace, be.Name, be)
	}
	var corpus []DataPlaneTarget
	for host, made := 0, 0; made < routes; host++ {
		h := fmt.Sprintf("h%05d.dataplane.example.com", host)
		for _, p := range dataPlanePathSets[host%len(dataPlanePathSets)] {
			if made == routes {
				break
			}
			svc := backends[made%len(backends)].Name
			m.Route(dataPlaneNamespace, fmt.Sprintf("r%05d", made), h, p, svc,
				testbed.Annotate("router.openshift.io/haproxy.health.check.interval", dataPlaneCheckInterval))
			corpus = append(corpus, DataPlaneTarget{Host: h, Prefix: strings.TrimSuffix(p, "/"), Backend: svc})
			made++
		}
	}
	rng := rand.New(rand.NewPCG(dataPlaneSeed, dataPlaneSeed))
	rng.Shuffle(len(corpus), func(i, j int) { corpus[i], corpus[j] = corpus[j], corpus[i] })
	return m, corpus
}

func backendConns(backends []*testkit.Backend) (n int64) {
	for _, b := range backends {
		n += b.Conns()
	}
	return n
}

// dataPlaneRoutes returns the sizes: $HAROUTE_BENCH_DATAPLANE_ROUTES, or 10 and 10,000.
func dataPlaneRoutes(t *testing.T) []int {
	t.Helper()
	v := os.Getenv(dataPlaneRoutesEnv)
	if v == "" {
		return dataPlaneSizes
	}
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want positive integers separated by commas", dataPlaneRoutesEnv, v)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// dataPlaneEnvDuration returns the duration in environment variable name (at most limit), or def when unset.
func dataPlaneEnvDuration(t *testing.T, name string, def, limit time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > limit {
		t.Fatalf("%s=%q: want a duration up to %s", name, v, limit)
	}
	return d
}

// TestStockHTTPMap: the map_reg form's map is the stock router's: OpenShift's regular expressions,
// only the Routes plain HTTP reaches, in SortMapPaths' order; its lookups give each request the
// Route the stock router would.
func TestStockHTTPMap(t *testing.T) {
	routes := []model.RouteInfo{
		{Host: "a.example.com", Path: "/", Backend: "be_http:ns:a-root"},
		{Host: "a.example.com", Path: "/api", Backend: "be_http:ns:a-api"},
		{Host: "a.example.com", Path: "/api/v2/", Backend: "be_http:ns:a-v2"},
		{Host: "*.wild.example.com", Backend: "be_http:ns:wild"},
		{Host: "b.example.com", Path: "/a b", Backend: "be_http:ns:b"},
		{Host: "edge.example.com", Termination: "edge", InsecurePolicy: "Redirect", Backend: "be_edge_http:ns:edge"},
		{Host: "allow.example.com", Termination: "edge", InsecurePolicy: "Allow", Backend: "be_edge_http:ns:allow"},
		{Host: "pass.example.com", Termination: "passthrough", Backend: "be_tcp:ns:pass"},
	}
	want := strings.Join([]string{
		`^b\.example\.com\.?(:[0-9]+)?/a\x20b(/.*)?$ be_http:ns:b`,
		`^allow\.example\.com\.?(:[0-9]+)?(/.*)?$ be_edge_http:ns:allow`,
		`^a\.example\.com\.?(:[0-9]+)?/api/v2/(.*)?$ be_http:ns:a-v2`,
		`^a\.example\.com\.?(:[0-9]+)?/api(/.*)?$ be_http:ns:a-api`,
		`^a\.example\.com\.?(:[0-9]+)?(/.*)?$ be_http:ns:a-root`,
		`^[^\.]*\.wild\.example\.com\.?(:[0-9]+)?(/.*)?$ be_http:ns:wild`,
	}, "\n") + "\n"
	got := string(StockHTTPMap(routes))
	if got != want {
		t.Fatalf("StockHTTPMap:\n%s\nwant:\n%s", got, want)
	}
	// map_reg answers with the first line whose expression matches base (Host + path).
	lookup := func(base string) string {
		for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
			re, be, _ := strings.Cut(l, " ")
			if regexp.MustCompile(strings.ReplaceAll(re, `\x20`, " ")).MatchString(base) {
				return be
			}
		}
		return ""
	}
	for base, be := range map[string]string{
		"a.example.com/":            "be_http:ns:a-root",
		"a.example.com:8080/x":      "be_http:ns:a-root",
		"a.example.com./api":        "be_http:ns:a-api",
		"a.example.com/api/q1":      "be_http:ns:a-api",
		"a.example.com/apix":        "be_http:ns:a-root",
		"a.example.com/api/v2/q1":   "be_http:ns:a-v2",
		"a.example.com/api/v2":      "be_http:ns:a-api",
		"x.wild.example.com/p":      "be_http:ns:wild",
		"x.y.wild.example.com/p":    "",
		"b.example.com/a b/c":       "be_http:ns:b",
		"edge.example.com/":         "",
		"aa.example.com/":           "",
		"allow.example.com/a/b/c/d": "be_edge_http:ns:allow",
	} {
		if got := lookup(base); got != be {
			t.Errorf("lookup %q = %q, want %q", base, got, be)
		}
	}
}

// TestUseMapReg: the rewrite replaces exactly the lookup rules of frontend public and refuses a
// config it does not recognize.
func TestUseMapReg(t *testing.T) {
	cfg := strings.Join([]string{
		"frontend public",
		"  mode http",
		"  http-request set-header Host %[req.hdr(host),lower] if { req.hdr(host) -m found }",
		"  http-request set-var(txn.host) req.hdr(host),field(1,:),lower,regsub([.]$,)",
		"  http-request set-var(txn.key) var(txn.host),concat(,txn.path,)",
		"  http-request set-var(txn.be) var(txn.xkey),map_str(/d/conf/os_http_be.map)",
		"  http-request set-var(txn.be) var(txn.key),map_beg(/d/conf/os_http_be.map) if !{ var(txn.be) -m found }",
		"  http-request set-var(txn.fwd) var(txn.be),map_str(/d/conf/haroute_forwarded.map,append)",
		"  use_backend %[var(txn.be)] if { var(txn.be) -m found }",
		"",
		"frontend fe_sni",
		"  http-request set-var(txn.be) var(txn.xkey),map_str(/d/conf/os_edge_reencrypt_be.map)",
		"",
	}, "\n")
	got, err := UseMapReg([]byte(cfg), "/d/conf/os_http_be_reg.map")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"frontend public",
		"  mode http",
		"  http-request set-header Host %[req.hdr(host),lower] if { req.hdr(host) -m found }",
		"  http-request set-var(txn.be) base,map_reg(/d/conf/os_http_be_reg.map)",
		"  http-request set-var(txn.fwd) var(txn.be),map_str(/d/conf/haroute_forwarded.map,append)",
		"  use_backend %[var(txn.be)] if { var(txn.be) -m found }",
		"",
		"frontend fe_sni",
		"  http-request set-var(txn.be) var(txn.xkey),map_str(/d/conf/os_edge_reencrypt_be.map)",
		"",
	}, "\n")
	if string(got) != want {
		t.Errorf("UseMapReg:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{
		"frontend other\n  mode http\n",
		"frontend public\n  use_backend %[var(txn.be)]\n",
		"frontend public\n  http-request set-var(txn.be) var(txn.key),map_beg(/d/conf/os_http_be.map)\n  http-request redirect location /%[var(txn.host)]\n",
	} {
		if _, err := UseMapReg([]byte(bad), "/m"); err == nil {
			t.Errorf("UseMapReg(%q): no error", bad)
		}
	}
}
