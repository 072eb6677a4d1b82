//go:build e2e

// Package bench is the benchmark harness that compares haroute side by side with the stock OpenShift
// router (github.com/openshift/router): the same machine, the same kube-apiserver (e2e/framework), the
// same workload of Routes, Services and EndpointSlices, and the same HAProxy.
//
// StartStockRouter runs the stock router built by tools/build-stock-router.sh (HAROUTE_BENCH_STOCK
// names its output directory) in mount and PID namespaces of its own, with a fresh directory on
// /var/lib/haproxy, the path its template and reload script hard-code; haroute runs through
// framework's StartRouter. The proc.go helpers find the HAProxy processes of either router and read
// their memory from /proc; the tests log their measurements as FIGURES lines. TestIdleMemory measures
// both routers idle, then (measureHeld) after endpoint churn with long-lived connections held, which
// is where reloads cost memory: each reload leaves an old HAProxy process until its connections end.
//
// TestDataPlane (dataplane.go) needs neither the API server nor the stock router: it measures
// requests per second through two HAProxies that differ only in their host and path lookup,
// haroute's maps and the stock router's map_reg (StockHTTPMap, UseMapReg). The tests write their
// results as JSON (package results) to OutDir, $HAROUTE_BENCH_OUT or bin/bench, each measurement
// repeated $HAROUTE_BENCH_REPEATS times (Repeats); e2e/bench/report turns them into docs/bench.md.
//
// TestTraces (trace*.go) needs the API server but not the stock router: it replays seven traces of
// changes — a rolling update, a scale 1→50→1, pod IP churn over several Routes, preview environments
// coming and going, a burst of 100 new Routes, the rotation of 100 edge certificates and one balance
// annotation — through the API under load (traceLoad: each answer judged against what the Route may
// answer at that moment, each change timed from its API write to the first answer that shows it),
// with one more long-lived streaming connection every second (longLived, which pins the HAProxy
// worker that accepted it). Each trace runs in three modes of haroute (runtime, and --mode reload
// at 5 s and 1 s), interleaved over the repeats, each run with a fresh namespace, pod network and
// haroute; a sampler reads HAProxy's processes, their RSS and the reload counter every
// results.SampleInterval. The runs go to traces.json (results.Traces). TestTracesSmoke runs three of
// the traces at tiny sizes in make e2e and checks correctness only; TestTraceLoadJudges pins the
// load's rules on made-up answers.
//
// Every file carries the build constraint `e2e`, so `go test ./...` leaves the package out; run it as
// root with `HAROUTE_BENCH_STOCK=DIR go test -tags e2e ./e2e/bench` (the stock router is needed by
// the side-by-side tests only).
package bench
