// Package tools pins the control-plane binaries (kube-apiserver and etcd) that
// haroute's e2e tests run against. It is a separate module so that the large
// k8s.io/kubernetes dependency graph never enters the root module; `make e2e-bin`
// builds ./cmd/kube-apiserver and ./cmd/etcd into the root bin/ directory.
package tools
