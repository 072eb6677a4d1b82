//go:build e2e

package bench

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Names of the traces, as results.TraceRun.Trace holds them.
const (
	traceRolling = "rolling"
	traceScale   = "scale"
	traceChurn   = "churn"
	tracePreview = "preview"
	traceBurst   = "burst"
	traceCerts   = "certs"
	traceBalance = "balance"
)

// traceWriters is how many API calls the traces make in parallel: the burst's creates, the setup of
// the larger traces and the cleaning of a namespace.
const traceWriters = 16

// balanceAnnotation is OpenShift's per-Route balance algorithm: a backend option no runtime op
// changes, so haroute reloads for it in every mode.
const balanceAnnotation = "haproxy.router.openshift.io/balance"

// traceSizes size the traces (fullSizes for TestTraces, smokeSizes for TestTracesSmoke).
type traceSizes struct {
	// leadIn is how long the load and the long-lived connections run before the first change.
	leadIn time.Duration
	// rolling: rollingPods pods replaced one by one, a step every rollingStep (the new pod added,
	// the old one removed half a step later).
	rollingPods int
	rollingStep time.Duration
	// scale: 1 → scaleMax → 1 endpoints, scaleStep more or fewer every scaleEvery.
	scaleMax, scaleStep int
	scaleEvery          time.Duration
	// churn: churnRoutes Routes of two endpoints each; every churnEvery one endpoint of the next
	// Route moves to a new IP (a new pod), churnChanges times.
	churnRoutes, churnChanges int
	churnEvery                time.Duration
	// preview: previewLive Routes (each with its own Service and pod) at the start; every
	// previewEvery one more is created and, half a period later, the oldest deleted, previewChanges
	// times.
	previewLive, previewChanges int
	previewEvery                time.Duration
	// burst: burstRoutes Routes (to Services and pods that exist) created at once.
	burstRoutes int
	// certs: certRoutes edge Routes; one gets a new certificate and key every certEvery.
	certRoutes int
	certEvery  time.Duration
	// balance: one Route of balancePods endpoints changes to balance by source.
	balancePods int
}

// fullSizes are the sizes of TestTraces: modest enough for a 2-core machine that also runs the API
// server, etcd, HAProxy, the pods and the load.
func fullSizes() traceSizes {
	return traceSizes{
		leadIn:      2 * time.Second,
		rollingPods: 10, rollingStep: time.Second,
		scaleMax: 50, scaleStep: 5, scaleEvery: 500 * time.Millisecond,
		churnRoutes: 5, churnChanges: 40, churnEvery: 500 * time.Millisecond,
		previewLive: 10, previewChanges: 20, previewEvery: time.Second,
		burstRoutes: 100,
		certRoutes:  100, certEvery: 40 * time.Millisecond,
		balancePods: 4,
	}
}

// smokeSizes are the tiny sizes of TestTracesSmoke.
func smokeSizes() traceSizes {
	return traceSizes{
		leadIn:      time.Second,
		rollingPods: 3, rollingStep: 500 * time.Millisecond,
		scaleMax: 6, scaleStep: 5, scaleEvery: 500 * time.Millisecond,
		churnRoutes: 2, churnChanges: 4, churnEvery: 500 * time.Millisecond,
		previewLive: 2, previewChanges: 3, previewEvery: time.Second,
		burstRoutes: 5,
		certRoutes:  5, certEvery: 100 * time.Millisecond,
		balancePods: 4,
	}
}

// traceSpecs returns every trace, in the order a repeat runs them.
func traceSpecs() []traceSpec {
	return []traceSpec{
		{traceRolling, setupRolling},
		{traceScale, setupScale},
		{traceChurn, setupChurn},
		{tracePreview, setupPreview},
		{traceBurst, setupBurst},
		{traceCerts, setupCerts},
		{traceBalance, setupBalance},
	}
}

// podNames returns prefix-00, prefix-01, … (n names).
func podNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

// without returns pods less drop.
func without(pods []*framework.Backend, drop ...*framework.Backend) []*framework.Backend {
	return slices.DeleteFunc(slices.Clone(pods), func(p *framework.Backend) bool { return slices.Contains(drop, p) })
}

// setEndpoints makes Service svc's endpoints next, telling the load first that the Route for host
// gains added and loses removed.
func (r *traceRun) setEndpoints(svc, host string, next, added, removed []*framework.Backend) error {
	if err := r.load.podsChanged(time.Now(), host, added, removed); err != nil {
		return err
	}
	return r.api.setEndpoints(r.ctx, svc, next)
}

// plainRoute creates Service and Route name (host name.<domain>) with pods, and registers the Route
// with the load.
func (r *traceRun) plainRoute(ctx context.Context, name string, pods ...*framework.Backend) error {
	if err := r.api.createService(ctx, name, pods); err != nil {
		return err
	}
	if err := r.api.createRoute(ctx, name, r.host(name), name, nil); err != nil {
		return err
	}
	r.load.addRoute(r.host(name), false, "", pods...)
	return nil
}

// setupRolling: a Route with rollingPods endpoints whose pods are replaced one by one, as a rolling
// update with maxSurge 1 and maxUnavailable 0 does: the new pod is added, then the old one removed.
func setupRolling(r *traceRun) (func() error, error) {
	n, step := r.sizes.rollingPods, r.sizes.rollingStep
	pods := r.startPods(append(podNames("old", n), podNames("new", n)...)...)
	old, repl := pods[:n], pods[n:]
	if err := r.plainRoute(r.ctx, "web", old...); err != nil {
		return nil, err
	}
	return func() error {
		host, cur, start := r.host("web"), slices.Clone(old), time.Now()
		for i := range n {
			if err := r.sleepUntil(start.Add(time.Duration(i) * step)); err != nil {
				return err
			}
			cur = append(cur, repl[i])
			if err := r.setEndpoints("web", host, cur, repl[i:i+1], nil); err != nil {
				return err
			}
			if err := r.sleepUntil(start.Add(time.Duration(i)*step + step/2)); err != nil {
				return err
			}
			cur = without(cur, old[i])
			if err := r.setEndpoints("web", host, cur, nil, old[i:i+1]); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// setupScale: a Route scaled 1 → scaleMax → 1 endpoints, scaleStep at a time every scaleEvery.
func setupScale(r *traceRun) (func() error, error) {
	most, step, every := r.sizes.scaleMax, r.sizes.scaleStep, r.sizes.scaleEvery
	pods := r.startPods(podNames("pod", most)...)
	if err := r.plainRoute(r.ctx, "web", pods[0]); err != nil {
		return nil, err
	}
	return func() error {
		host, n, start := r.host("web"), 1, time.Now()
		sizes := []int{}
		for k := 1 + step; k < most; k += step {
			sizes = append(sizes, k)
		}
		sizes = append(sizes, most)
		for k := most - step; k > 1; k -= step {
			sizes = append(sizes, k)
		}
		sizes = append(sizes, 1)
		for i, next := range sizes {
			if err := r.sleepUntil(start.Add(time.Duration(i) * every)); err != nil {
				return err
			}
			var added, removed []*framework.Backend
			if next > n {
				added = pods[n:next]
			} else {
				removed = pods[next:n]
			}
			if err := r.setEndpoints("web", host, pods[:next], added, removed); err != nil {
				return err
			}
			n = next
		}
		return nil
	}, nil
}

// setupChurn: churnRoutes Routes of two endpoints each; every churnEvery one endpoint of the next
// Route in turn moves to a new IP (a new pod replaces it in one write).
func setupChurn(r *traceRun) (func() error, error) {
	routes, changes, every := r.sizes.churnRoutes, r.sizes.churnChanges, r.sizes.churnEvery
	var names []string
	for j := range routes {
		names = append(names, podNames(fmt.Sprintf("c%d", j), 2)...)
	}
	pods := r.startPods(append(names, podNames("moved", changes)...)...)
	cur := make([][]*framework.Backend, routes)
	for j := range routes {
		cur[j] = slices.Clone(pods[2*j : 2*j+2])
		if err := r.plainRoute(r.ctx, fmt.Sprintf("c%d", j), cur[j]...); err != nil {
			return nil, err
		}
	}
	moved := pods[2*routes:]
	return func() error {
		start := time.Now()
		for i := range changes {
			if err := r.sleepUntil(start.Add(time.Duration(i) * every)); err != nil {
				return err
			}
			j, slot := i%routes, (i/routes)%2
			name, old := fmt.Sprintf("c%d", j), cur[j][slot]
			cur[j][slot] = moved[i]
			if err := r.setEndpoints(name, r.host(name), slices.Clone(cur[j]), moved[i:i+1], []*framework.Backend{old}); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// setupPreview: preview environments, each a Route with its own Service and pod; every
// previewEvery one is created (Service, EndpointSlice, then the Route) and, half a period later,
// the oldest deleted (the Route, then its Service and EndpointSlice).
func setupPreview(r *traceRun) (func() error, error) {
	live, changes, every := r.sizes.previewLive, r.sizes.previewChanges, r.sizes.previewEvery
	pods := r.startPods(podNames("pv", live+changes)...)
	name := func(i int) string { return fmt.Sprintf("pv-%02d", i) }
	for i := range live {
		if err := r.plainRoute(r.ctx, name(i), pods[i]); err != nil {
			return nil, err
		}
	}
	return func() error {
		start := time.Now()
		for s := range changes {
			if err := r.sleepUntil(start.Add(time.Duration(s) * every)); err != nil {
				return err
			}
			add := name(live + s)
			if err := r.api.createService(r.ctx, add, pods[live+s:live+s+1]); err != nil {
				return err
			}
			r.load.routeCreated(time.Now(), r.host(add), false, "", pods[live+s])
			if err := r.api.createRoute(r.ctx, add, r.host(add), add, nil); err != nil {
				return err
			}
			if err := r.sleepUntil(start.Add(time.Duration(s)*every + every/2)); err != nil {
				return err
			}
			drop := name(s)
			if err := r.load.routeDeleted(time.Now(), r.host(drop)); err != nil {
				return err
			}
			if err := r.api.deleteRoute(r.ctx, drop); err != nil {
				return err
			}
			if err := r.api.deleteService(r.ctx, drop); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// setupBurst: burstRoutes Routes created at once (by traceWriters parallel writers), each to a
// Service and pod of its own that exist already, beside one steady Route.
func setupBurst(r *traceRun) (func() error, error) {
	n := r.sizes.burstRoutes
	pods := r.startPods(append(podNames("b", n), "steady")...)
	if err := r.plainRoute(r.ctx, "steady", pods[n]); err != nil {
		return nil, err
	}
	name := func(i int) string { return fmt.Sprintf("b-%03d", i) }
	if err := forEach(r.ctx, n, traceWriters, func(ctx context.Context, i int) error {
		return r.api.createService(ctx, name(i), pods[i:i+1])
	}); err != nil {
		return nil, err
	}
	return func() error {
		return forEach(r.ctx, n, traceWriters, func(ctx context.Context, i int) error {
			r.load.routeCreated(time.Now(), r.host(name(i)), false, "", pods[i])
			return r.api.createRoute(ctx, name(i), r.host(name(i)), name(i), nil)
		})
	}, nil
}

// setupCerts: certRoutes edge Routes, each to a Service and pod of its own, requested over TLS with
// their host as SNI; every certEvery one gets a new certificate and key, and traffic sees it when
// the new certificate's serial is served.
func setupCerts(r *traceRun) (func() error, error) {
	n, every := r.sizes.certRoutes, r.sizes.certEvery
	pods := r.startPods(podNames("tls", n)...)
	ca := testkit.NewCA(r.t, "trace-ca")
	type pair struct {
		cert, key []byte
		serial    string
	}
	issue := func(host string) (pair, error) {
		cert, key := ca.Issue(r.t, host)
		serial, err := certSerial(cert)
		return pair{cert, key, serial}, err
	}
	first, next := make([]pair, n), make([]pair, n)
	name := func(i int) string { return fmt.Sprintf("tls-%03d", i) }
	for i := range n {
		var err1, err2 error
		first[i], err1 = issue(r.host(name(i)))
		next[i], err2 = issue(r.host(name(i)))
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
	}
	if err := forEach(r.ctx, n, traceWriters, func(ctx context.Context, i int) error {
		if err := r.api.createService(ctx, name(i), pods[i:i+1]); err != nil {
			return err
		}
		tls := &routev1.TLSConfig{Termination: routev1.TLSTerminationEdge, Certificate: string(first[i].cert),
			Key: string(first[i].key), InsecureEdgeTerminationPolicy: routev1.InsecureEdgeTerminationPolicyNone}
		return r.api.createRoute(ctx, name(i), r.host(name(i)), name(i), tls)
	}); err != nil {
		return nil, err
	}
	for i := range n {
		r.load.addRoute(r.host(name(i)), true, first[i].serial, pods[i])
	}
	return func() error {
		start := time.Now()
		for i := range n {
			if err := r.sleepUntil(start.Add(time.Duration(i) * every)); err != nil {
				return err
			}
			if err := r.load.certRotated(time.Now(), r.host(name(i)), next[i].serial); err != nil {
				return err
			}
			if err := r.api.rotateCertificate(r.ctx, name(i), next[i].cert, next[i].key); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// certSerial returns the serial number of the PEM certificate, as the load reads it from a handshake.
func certSerial(certPEM []byte) (string, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return "", errors.New("certificate: no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("certificate: %w", err)
	}
	return c.SerialNumber.String(), nil
}

// setupBalance: one Route of balancePods endpoints gets the balance annotation "source" (a reload in
// every mode); traffic sees it when balanceRun answers in a row come from one pod.
func setupBalance(r *traceRun) (func() error, error) {
	pods := r.startPods(podNames("bal", r.sizes.balancePods)...)
	if err := r.plainRoute(r.ctx, "web", pods...); err != nil {
		return nil, err
	}
	return func() error {
		if err := r.load.balanceChanged(time.Now(), r.host("web")); err != nil {
			return err
		}
		return r.api.annotateRoute(r.ctx, "web", balanceAnnotation, "source")
	}, nil
}
