// Package traffic holds haroute's traffic tests: Routes are translated (mapping.Translate), rendered
// (mapping/render) and served by a real HAProxy started by e2e/testbed, and real requests check what
// a user of the Route would see — the backend that answers, the certificate, the status, redirects,
// rewrites and the share of traffic per Service. BenchmarkRequests measures requests per second at
// 10 and 10,000 Routes with varied hosts and paths.
//
// Run: go test ./e2e/traffic, and go test ./e2e/traffic -run XXX -bench Requests -benchtime 5000x.
package traffic
