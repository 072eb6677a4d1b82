//go:build e2e

// Package framework is the harness of haroute's end-to-end tests against a real control plane.
//
// Start runs etcd and kube-apiserver on loopback ports (token authentication, RBAC on), installs the
// Route CRD that github.com/openshift/api ships, grants the router's ServiceAccount user exactly what
// a router needs and hands the test admin clientsets plus a kubeconfig carrying the router's token.
// NewPodNetwork creates a network namespace joined to the host by a veth pair (198.18.N.0/24) and
// runs HTTP backends inside it, standing in for pods, because the API server rejects loopback
// addresses in EndpointSlices. StartRouter runs `haroute run --kubeconfig … --managed-haproxy`.
//
// Every process is owned by PID and stopped in t.Cleanup; every wait is bounded. Files carry the
// build constraint `e2e` so `go test ./...` leaves them out; `make e2e` runs them (root needed).
package framework
