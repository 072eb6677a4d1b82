// Package testbed is the real-HAProxy harness of haroute's integration, traffic and end-to-end tests:
// the part of the test bed that needs haroute. Its neutral parts (ports, TLS material, backends, the
// client, processes, waits, golden files; testkit.HAProxyBinary names the executable) are
// internal/testkit; a test that needs only those imports testkit.
//
// It starts HAProxy in the production shape (master-worker, foreground, master socket) from rendered
// files laid out by mapping/layout (the process itself is testkit.RunHAProxy's); it builds
// Route/Service/EndpointSlice manifests in a few lines (Manifests, RouteOption), runs `haroute run`
// as a child process (RouterProcess).
//
// Two ways to put HAProxy in front of a test: StartStaticHAProxy translates and renders an input in
// the test process and starts HAProxy on the files (no haroute process), while RouterProcess runs
// the haroute binary (`haroute run`, built once by BuildHaroute) as a child process that drives
// HAProxy itself, with its readiness, `show proc` and traffic waits. Folder is the one bed of the
// folder-mode suites (e2e/run, e2e/faults): a watched manifest folder written atomically and an
// HAProxy directory that every haroute started on it, managed or sidecar, shares.
//
// Every helper takes a testing.TB, reports setup failures with t.Fatal and releases what it started
// with t.Cleanup. Only loopback addresses are used. The package holds no Kubernetes client code:
// manifests become mapping.Input through mapping.DecodeManifests, exactly as the manifest-folder mode
// reads them.
package testbed
