// Package parity is haroute's differential suite against the stock OpenShift router: the same
// Routes, Services and pods, the same requests, and the answers compared field by field.
//
// The corpus (Build; corpus_*.go) holds every kind of Route, host, path, TLS policy, weight and
// annotation the compatibility table (mapping/compat) lists, hostile-looking values included, and
// the requests that show how a router serves them: HTTP and HTTPS with SNI, path boundaries, host
// case, port and trailing dot, redirects, sticky cookies over repeated requests (and the stock
// router's own cookie sent to haroute, as a client of a mixed fleet would), header actions,
// forwarding headers, allowlists and rate limits. Every pod is an echo server
// (testkit.EchoHandler), so an answer tells what the pod received.
//
// An Answer (answer.go) is normalised only where two routers that behave alike must still differ
// (their ports, the pods' addresses inside cookie values, a pod picked at random), and Comparison
// compares two of them on each Field: status, pod, the target the pod received, Location, HSTS,
// cookie names, values and attributes, the request headers the pod received, the response headers,
// the certificate served and the protocol agreed. Before HAProxy 3.0 haroute's cookie values cannot
// be the stock router's (Comparison says why); those fields are then left out, and reported so.
//
// Every difference must be accepted by an entry of testdata/known-differences.yaml that names the
// row of the compatibility table documenting it (Kind and Name of mapping/compat; the row must say
// Different or NotSupported), or marks it open (OpenIssue) until it is fixed or documented.
//
// Two runs compare: `make parity` (package e2e/parity/live, as root) runs the stock router, built
// at its pinned commit, and haroute side by side against one API server, compares their answers
// and records the stock router's into testdata/stock-answers.json (Recording, naming its commit and
// HAProxy version); TestReplay, in `go test ./...` and the HAProxy matrix, runs haroute alone on the
// same objects from a manifest folder with the same pods on loopback addresses and compares its
// answers with the recording.
package parity
