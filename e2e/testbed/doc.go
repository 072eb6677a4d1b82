// Package testbed is the real-HAProxy test bed of haroute's integration, traffic and end-to-end tests.
//
// It starts HAProxy (HAProxyBinary: $HAROUTE_HAPROXY, by default Debian's /usr/sbin/haproxy) in the production shape (master-worker, foreground, master socket)
// from rendered files, owns the process by PID and talks to its admin and master sockets; it issues
// TLS material from throw-away CAs, runs HTTP and TLS backends on loopback addresses that name
// themselves in every answer, builds Route/Service/EndpointSlice manifests in a few lines, and
// provides an HTTP client that sends every request to HAProxy whatever the URL's host, so tests can
// use real host names, ports and SNI.
//
// Two ways to put HAProxy in front of a test: StartStaticHAProxy translates and renders an input in
// the test process and starts HAProxy on the files (no haroute process), while RouterProcess runs
// the haroute binary (`haroute run`, built once by BuildHaroute) as a child process that drives
// HAProxy itself, with its readiness, `show proc` and traffic waits; the suites that test the binary
// embed it. Process owns any other child process by PID.
//
// Every helper takes a testing.TB, reports setup failures with t.Fatal and releases what it started
// with t.Cleanup (processes are stopped with SIGTERM, then SIGKILL after a bound). Only loopback
// addresses are used. The package holds no Kubernetes client code: manifests become mapping.Input
// through mapping.DecodeManifests, exactly as the manifest-folder mode reads them.
package testbed
