//go:build e2e

// Package live is `make parity`: the stock OpenShift router (built at its pinned commit by
// tools/build-stock-router.sh, run by e2e/bench's StartStockRouter) and haroute, each with its own
// HAProxy 3.2, against one API server (e2e/framework) holding the corpus of package parity, with the
// same pods (echo servers in a pod network on fixed addresses); the same requests through both,
// compared field by field. It records the stock router's answers into ../testdata, writes the
// report into $HAROUTE_PARITY_OUT (bin/parity) and fails on a difference that
// ../testdata/known-differences.yaml does not accept.
//
// Every file carries the build constraint `e2e`; the test needs root (network namespaces) and the
// stock router's build ($HAROUTE_BENCH_STOCK).
package live
