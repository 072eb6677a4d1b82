// Package testkit is haroute's neutral test kit: the helpers of tests that need nothing of haroute
// itself. It names the HAProxy executable the tests run (HAProxyBinary: $HAROUTE_HAPROXY, by default
// Debian's /usr/sbin/haproxy); reserves loopback ports (FreePort, ListenPorts) and short temporary
// directories (TempDir); issues TLS material from throw-away CAs (NewCA, CA.Issue, KeyPair,
// CA.IssueClient, CA.RevocationList); runs HTTP, TLS and echo backends on loopback addresses that name
// themselves in every answer (StartHTTPBackend, StartTLSBackend, StartEchoBackend, ServeConns);
// provides an HTTP client that sends every request to one address whatever the URL's host (NewClient),
// continuous load (StartLoad), child processes owned by PID with bounded output (StartProcess,
// LogBuffer, Buffer), HAProxy in the production shape on the paths its caller names, with its admin
// and master sockets and `show stat` (RunHAProxy, HAProxy), bounded waits (Eventually, Final),
// golden files (CompareGolden, GoldenOrphans, LineDiff) and small Kubernetes YAML documents
// (ServiceYAML, SliceYAML, RouteYAML).
//
// It imports nothing of haroute (a depguard rule in .golangci.yml holds it to that), so the tests of
// any layer may import it — mapping/, runtime/, sync/, cmd/ and e2e/ alike — without depending on
// the packages they test or on the HAProxy harness. What needs haroute (HAProxy started on rendered
// files, `haroute run` as a child process, Route manifests) is e2e/testbed, built on this package.
//
// Every helper takes a testing.TB, reports setup failures with t.Fatal and releases what it started
// with t.Cleanup (processes are stopped with SIGTERM, then SIGKILL after a bound). Only loopback
// addresses are used.
package testkit
