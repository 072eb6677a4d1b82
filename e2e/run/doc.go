// Package run holds the integration tests of `haroute run` in folder mode: the real binary, built
// once per test run, supervises a real HAProxy (managed mode) while the tests edit the manifest
// folder under a bounded loopback client and check what HAProxy serves, how many reloads it took,
// and how fast changes applied (event → applied latency, logged, never asserted).
package run
