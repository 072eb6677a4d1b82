//go:build e2e

// Package live is `make parity`: the stock OpenShift router (built at its pinned commit by
// tools/build-stock-router.sh, run by e2e/bench's StartStockRouter) and haroute, each with its own
// HAProxy 3.2, against one API server (e2e/framework) holding the corpus of package parity, with the
// same pods (echo servers in a pod network on fixed addresses); the same requests through both,
// compared field by field. It records the stock router's answers into ../testdata, writes the
// report into $HAROUTE_PARITY_OUT (bin/parity) and fails on a difference that
// ../testdata/known-differences.yaml does not accept.
//
// TestMixedFleet (rollout_*_test.go) is the migration of a fleet: two stock router replicas replaced
// one at a time by haroute replicas, and one put back, while clients with their own cookie jars
// alternate between the replicas in rotation on every request (the test's load balancer, which
// probes each replica's /healthz/ready as a Service does); every client must stay on the pod of its
// first answer and no request may fail. Its figures go to fleet.txt beside the report.
//
// Every file carries the build constraint `e2e`; the test needs root (network namespaces) and the
// stock router's build ($HAROUTE_BENCH_STOCK).
package live
