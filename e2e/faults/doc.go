// Package faults holds fault-injection tests of `haroute run` in folder mode: the real binary, built
// once per test run (or $HAROUTE_BINARY), drives a real HAProxy ($HAROUTE_HAPROXY, default
// /usr/sbin/haproxy) on loopback while one fault is injected under continuous load (testkit.Load on a
// Route that exists throughout). The tests assert correctness — no answer from a wrong backend,
// recovery without intervention, no backend holding a server twice, failures reported in the log,
// /healthz/ready or /metrics — and never wall-clock timings: every wait is bounded, and what a fault
// cost is logged on a "FIGURES" line (requests lost of those sent, split into refused ones, which
// found no listener, and the others; the time until service was back; the reloads).
//
//   - TestHarouteKilledMidApply: SIGKILL of haroute in the middle of hundreds of runtime operations.
//     Sidecar shape (HAProxy started beside haroute): HAProxy serves on, no request fails; a new
//     haroute adopts it and converges with no server twice. Managed shape: HAProxy dies with haroute
//     (Pdeathsig), leaving no process behind; a new haroute serves the manifest again.
//   - TestHAProxyKilledUnderLoad: SIGKILL of the managed HAProxy's master, of its worker, and of its
//     worker within the supervisor's start-up window: a new HAProxy without help, resynced, serving
//     the runtime changes made before, readiness 200 again, the killed processes gone.
//   - TestAdminSocketStalled: SIGSTOP of the worker (3 s, then 12 s: past the admin socket's
//     timeouts) while an endpoint change applies: readiness names the stalled admin socket, haroute
//     never hangs, the long stall is reported as a failed runtime update, the change is served after
//     SIGCONT.
//   - TestHAProxyDirUnwritable: conf/ read-only (EROFS) or full (ENOSPC) in a private mount namespace
//     made with unshare: the change fails clearly (log, haroute_update_failures_total, readiness
//     body), HAProxy serves the old state, and recovers on its own once conf/ is writable.
//   - TestBrokenCustomTemplate: a custom template (--template) that breaks one Route at runtime (it is
//     left out, the others served), then restarts with templates that fail to parse, to execute, or
//     that HAProxy refuses: the running HAProxy and the haproxy.cfg on disk stay as they were.
//   - TestRouteBurst: 500 Routes in one manifest write, then removed: no request of the load fails;
//     reloads and the times until all answer and until all are 503 again are logged.
//   - TestGracefulStopUnderLoad: SIGTERM of haroute with a request in flight and idle kept-alive
//     connections: exit status 0 within the stop timeout, the request in flight answered, the idle
//     connections closed, no HAProxy process left.
//
// The tests use loopback addresses 127.0.50.0/24 to 127.0.56.0/24 and run as any user, except
// TestHAProxyDirUnwritable, which needs root (a mount namespace) and unshare, nsenter and mount from
// util-linux, and skips under -short (make quick). Run them with
//
//	go test ./e2e/faults/ -count=1 -v
//	HAROUTE_HAPROXY=/path/to/haproxy-3.2 go test ./e2e/faults/ -count=1 -v
//
// and one with -run TestName; grep the output for FIGURES.
package faults
