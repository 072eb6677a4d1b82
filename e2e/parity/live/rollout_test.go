//go:build e2e

package live

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/e2e/bench"
	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/e2e/parity"
	"github.com/haroute/haroute/internal/testkit"
)

// The mixed fleet's scenario: its phases, how long each steady phase lasts, its clients.
const (
	// Phases (the balancer's phase index).
	phaseStock = iota
	phaseReplaceStock1
	phaseMixed
	phaseReplaceStock2
	phaseHaroute
	phaseBack
	phaseMixedBack
	phaseCount

	holdStock     = 4 * time.Second
	holdMixed     = 10 * time.Second
	holdHaroute   = 6 * time.Second
	holdMixedBack = 6 * time.Second
	// clientsA run through the whole scenario; clientsB start once the fleet is all haroute, so that
	// haroute issues their cookies, and go on through the step back to a stock router.
	clientsA = 20
	clientsB = 8
	// fleetTimeout bounds the scenario, clients included.
	fleetTimeout = 3 * time.Minute
	fleetNS      = "fleet"
)

var fleetPhases = [phaseCount]string{
	phaseStock:         "stock-1 + stock-2",
	phaseReplaceStock1: "stock-1 stops, haroute-1 starts",
	phaseMixed:         "stock-2 + haroute-1",
	phaseReplaceStock2: "stock-2 stops, haroute-2 starts",
	phaseHaroute:       "haroute-1 + haroute-2",
	phaseBack:          "haroute-1 stops, stock-3 starts (back to the stock router)",
	phaseMixedBack:     "haroute-2 + stock-3",
}

// TestMixedFleet replaces a fleet of two stock routers by two haroute replicas, one at a time, under
// load from clients that each keep a cookie jar and alternate between the replicas in rotation on
// every request, as a load balancer in front of a mixed fleet sends them; then it puts one stock
// router back in place of a haroute replica. Every client must stay on the pod of its first answer,
// through every replica, and no request may fail.
func TestMixedFleet(t *testing.T) {
	build := os.Getenv(bench.StockEnv)
	if build == "" {
		t.Fatalf("%s is not set: run `make parity`, which builds the stock router", bench.StockEnv)
	}
	hb := bench.HAProxy(t)
	versionLine, version, err := parity.HAProxyVersion(hb)
	if err != nil {
		t.Fatal(err)
	}
	if version.Less(parity.Version{Major: 3, Minor: 0}) {
		t.Fatalf("%s: the mixed fleet needs HAProxy 3.0 or later, where haroute's cookie values are the stock router's "+
			"(before, a client is balanced once more at its first haroute replica: docs/deploy.md)", versionLine)
	}

	c := framework.Start(t)
	ns := c.Namespace(t, fleetNS)
	pki := parity.NewPKI(t)
	routes := createFleetRoutes(t, c, ns, framework.NewPodNetwork(t), pki)
	files, err := parity.WriteRouterFiles(testkit.TempDir(t), pki)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{t: t, c: c, build: build, haproxy: hb, roots: pki.RouteCA.Pool(),
		env: append(parity.RouterEnv(files), "ROUTER_GRACEFUL_SHUTDOWN_DELAY="+gracefulDelay.String())}

	events := &timeline{start: time.Now()}
	lb := newBalancer(events)
	stock1, stock2 := f.startStock("stock-1"), f.startStock("stock-2")
	replicas := []*replica{stock1, stock2}
	events.start = time.Now()
	lb.add(stock1)
	lb.add(stock2)

	ctx, cancel := context.WithTimeout(context.Background(), fleetTimeout)
	defer cancel()
	probing, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	go lb.probe(probing)

	phase := func(p int) {
		lb.phase.Store(int32(p))
		events.add("phase %d: %s (rotation: %s)", p, fleetPhases[p], lb.names())
	}
	hold := func(d time.Duration) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	replace := func(p int, old *replica, start func(string) *replica, name string) *replica {
		phase(p)
		f.stop(old, lb)
		r := start(name)
		lb.add(r)
		replicas = append(replicas, r)
		phase(p + 1)
		return r
	}

	waveA := sessions("a", routes, clientsA, phaseStock)
	phase(phaseStock)
	loadA := startLoad(ctx, lb, waveA)
	hold(holdStock)
	haroute1 := replace(phaseReplaceStock1, stock1, f.startHaroute, "haroute-1")
	hold(holdMixed)
	haroute2 := replace(phaseReplaceStock2, stock2, f.startHaroute, "haroute-2")
	waveB := sessions("b", routes, clientsB, phaseHaroute)
	loadB := startLoad(ctx, lb, waveB)
	hold(holdHaroute)
	stock3 := replace(phaseBack, haroute1, f.startStock, "stock-3")
	hold(holdMixedBack)
	loadA.end()
	loadB.end()
	events.add("load ended")
	stopProbe()
	if err := ctx.Err(); err != nil {
		t.Fatalf("the scenario took longer than %v", fleetTimeout)
	}
	for _, r := range []*replica{haroute2, stock3} {
		r.reloadsOut = r.reloads()
	}

	rep := &fleetReport{stockCommit: f.commit, haproxy: versionLine, phases: fleetPhases[:],
		routes: routes, replicas: replicas, sessions: append(waveA, waveB...), events: events, emptyPicks: lb.empty.Load()}
	out := os.Getenv(parity.OutEnv)
	if out == "" {
		out = defaultOut
	}
	path, err := rep.write(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mixed fleet (also in %s):\n%s", path, rep)
	for _, s := range waveA {
		if s.firstKind != kindStock {
			t.Errorf("client %s: first answered by %s, want a stock router (the fleet starts all stock)", s.id, s.firstReplica)
		}
	}
	for _, s := range waveB {
		if s.firstKind != kindHaroute {
			t.Errorf("client %s: first answered by %s, want haroute (the clients of wave b start when the fleet is all haroute)", s.id, s.firstReplica)
		}
	}
	for _, p := range rep.problems() {
		t.Error(p)
	}
}

// sessions returns n clients named <wave>-<i>, spread over the routes in turn.
func sessions(wave string, routes []*fleetRoute, n, firstPhase int) []*session {
	out := make([]*session, 0, n)
	for i := range n {
		out = append(out, newSession(fmt.Sprintf("%s-%02d", wave, i+1), routes[i%len(routes)], phaseCount, firstPhase, i/len(routes)))
	}
	return out
}

// createFleetRoutes starts the pods and writes the Services, their EndpointSlices and the Routes:
// an HTTP Route, an edge Route, a reencrypt Route (the pods serve TLS for <service>.<ns>.svc, signed
// by the routers' default destination CA and the Route's destinationCACertificate), three pods each,
// and an HTTP Route split 2:1 over two Services of three pods.
func createFleetRoutes(t *testing.T, c *framework.Cluster, ns string, n *framework.PodNetwork, pki *parity.PKI) []*fleetRoute {
	t.Helper()
	plain := n.StartEchoBackends("web-1", "web-2", "web-3", "shop-1", "shop-2", "shop-3",
		"blue-1", "blue-2", "blue-3", "green-1", "green-2", "green-3")
	cert, key := pki.Backend("vault." + ns + ".svc")
	var vault []*framework.Backend
	for i := 1; i <= 3; i++ {
		vault = append(vault, n.StartTLSEchoBackend(fmt.Sprintf("vault-%d", i), cert, key))
	}
	services := map[string][]*framework.Backend{
		"web": plain[0:3], "shop": plain[3:6], "blue": plain[6:9], "green": plain[9:12], "vault": vault}
	for svc, backends := range services {
		c.CreateService(t, ns, svc, backends...)
	}
	route := func(name, scheme string, svcs ...string) *fleetRoute {
		r := &fleetRoute{name: name, url: scheme + "://" + name + ".fleet.test/", cookie: parity.StockCookieName(ns, name),
			pods: map[string]parity.Endpoint{}}
		for _, svc := range svcs {
			for _, b := range services[svc] {
				r.pods[b.Name] = parity.Endpoint{Pod: b.Name, Service: svc, PortName: "http", Addr: netip.MustParseAddrPort(b.Addr())}
			}
		}
		return r
	}
	host := func(name string) string { return name + ".fleet.test" }
	c.CreateRoute(t, ns, "web", host("web"), "web")
	shopCert, shopKey := pki.Route(host("shop"))
	c.CreateRoute(t, ns, "shop", host("shop"), "shop", framework.Edge(shopCert, shopKey, routev1.InsecureEdgeTerminationPolicyNone))
	vaultCert, vaultKey := pki.Route(host("vault"))
	c.CreateRoute(t, ns, "vault", host("vault"), "vault", framework.Reencrypt(vaultCert, vaultKey, pki.BackendCA.PEM()))
	c.CreateRoute(t, ns, "split", host("split"), "blue", framework.Weight(2), framework.Alternate("green", 1))
	return []*fleetRoute{route("web", "http", "web"), route("shop", "https", "shop"),
		route("vault", "https", "vault"), route("split", "http", "blue", "green")}
}
