//go:build e2e

// Package bench is the benchmark harness that compares haroute side by side with the stock OpenShift
// router (github.com/openshift/router): the same machine, the same kube-apiserver (e2e/framework), the
// same workload of Routes, Services and EndpointSlices, and the same HAProxy.
//
// StartStockRouter runs the stock router built by tools/build-stock-router.sh (HAROUTE_BENCH_STOCK
// names its output directory) in mount and PID namespaces of its own, with a fresh directory on
// /var/lib/haproxy, the path its template and reload script hard-code; haroute runs through
// framework's StartRouter. The proc.go helpers find the HAProxy processes of either router and read
// their memory from /proc; the tests log their measurements as FIGURES lines.
//
// Every file carries the build constraint `e2e`, so `go test ./...` leaves the package out; run it as
// root with `HAROUTE_BENCH_STOCK=DIR go test -tags e2e ./e2e/bench`.
package bench
