// Package operatorenv loads the router container environment that OpenShift's
// cluster-ingress-operator renders for a set of IngressControllers, as captured
// in e2e/cluster/testdata/operator (see the README there).
//
// Each file holds one variant: the IngressController that was given, the
// cluster settings around it, the status the operator derived, and the router
// container's env, volume mounts and the pod volumes behind them, exactly as
// the operator rendered them. Tests use it to check that haroute accepts, and
// maps onto HAProxy, what a real deployment passes to the stock router.
package operatorenv
