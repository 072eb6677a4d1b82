// Package oracle is haroute's equivalence oracle for the runtime path, and its churn-under-traffic
// test.
//
// A seeded random walk (Walker) mutates a small world of Routes, Services and endpoints (World) one
// step at a time. Each state is translated (mapping.Translate) and driven into HAProxy "A" the way
// `haroute run` does it (Driver): plan.Compute against what A runs, render, then a reload for a
// structural plan or write-through files plus runtime operations (runtime/apply) otherwise. After
// every step a fresh HAProxy "B" is started from the rendered files of plan.WithPool(desired), and
// the oracle checks that
//
//   - both observed states (runtime/observe) agree per Route: servers, and map entries with
//     backend names translated to the Route they serve (A serves new Routes from claimed spares,
//     B from backends of their own name);
//   - both answer a request corpus built from the admitted Routes (exact path, sub-path, near-miss
//     path, upper-case host with a port, near-miss host, over http and https/SNI, plus an unknown
//     host) with the same status, the same certificate, a backend of the same Route, and the same
//     redirect Location;
//   - A's reload counter rose exactly on the steps whose plan had structural reasons.
//
// The churn test keeps a bounded loopback client sending requests to a few stable Routes while a
// random walk of runtime-only mutations runs, and requires no failed request, no answer from a
// backend that was not an endpoint of the Route, and no reload.
//
// Backends are testbed HTTP and TLS servers on 127.0.0.x, started once per test; every Service has
// endpoints of its own, so the backend that answers names the Route. The generator, the views and
// the corpus are plain code (unit-tested here); the tests start real HAProxy processes through
// e2e/testbed.
//
// Run: go test ./e2e/oracle/ -v -run . -count=1 [-oracle.seed N] [-oracle.steps N]
package oracle
