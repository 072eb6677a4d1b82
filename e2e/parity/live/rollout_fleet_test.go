//go:build e2e

package live

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench"
	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Kinds of replica.
const (
	kindStock   = "stock"
	kindHaroute = "haroute"
)

// Paces and bounds of the fleet's load balancer and replicas.
const (
	// probePeriod, probeTimeout and probeFailures are the load balancer's readiness probe of each
	// replica's /healthz/ready (a Service's endpoint goes NotReady after probeFailures failures).
	probePeriod   = 100 * time.Millisecond
	probeTimeout  = time.Second
	probeFailures = 2
	// gracefulDelay is both kinds' ROUTER_GRACEFUL_SHUTDOWN_DELAY: after SIGTERM a replica reports
	// NotReady and serves on for this long, then stops (45s in production, shortened here).
	gracefulDelay = 3 * time.Second
	// outOfRotationTimeout bounds the wait for the load balancer to take a stopping replica out;
	// exitTimeout the wait for it to end.
	outOfRotationTimeout = 10 * time.Second
	exitTimeout          = 30 * time.Second
	dialTimeout          = 5 * time.Second
)

// replica is one router of the fleet: a stock router or haroute, each with its own HAProxy, its own
// ports on 127.0.0.1, and a transport that sends each request on a new connection to them.
type replica struct {
	name, kind string
	statsPort  int
	transport  *http.Transport
	proc       *testkit.Process
	// reloads returns the HAProxy reloads so far (from the test's goroutine only: it may fail it).
	reloads func() int
	// haproxyLeft returns the HAProxy processes of the replica that still run.
	haproxyLeft func() ([]int, error)
	// reloadsIn is the reload counter when the replica entered the rotation, reloadsOut when it
	// left the fleet (or at the end).
	reloadsIn, reloadsOut int
}

// newTransport returns a transport to a replica's ports: http:// URLs go to httpPort, https:// URLs
// to httpsPort (TLS with the URL's host as SNI, verified against roots), one connection per request,
// as a load balancer that balances every connection sees them.
func newTransport(httpPort, httpsPort int, roots *x509.CertPool) *http.Transport {
	d := &net.Dialer{Timeout: dialTimeout}
	return &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			port := httpPort
			if _, p, err := net.SplitHostPort(addr); err == nil && p == "443" {
				port = httpsPort
			}
			return d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		},
		TLSClientConfig:    &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DisableKeepAlives:  true,
		DisableCompression: true,
	}
}

// fleet starts the replicas: every one with the same settings, against the same API server.
type fleet struct {
	t       *testing.T
	c       *framework.Cluster
	build   string
	haproxy string
	env     []string
	roots   *x509.CertPool
	// commit is the stock router's source commit (its build's).
	commit string
}

// startStock starts a stock router named name and returns it once it serves (its /healthz/ready and
// its first reload: bench.StartStockRouter).
func (f *fleet) startStock(name string) *replica {
	f.t.Helper()
	s := bench.StartStockRouter(f.t, f.c, "", bench.StockOptions{
		Build: f.build, HAProxy: f.haproxy, Name: name, ReloadInterval: stockReload, Env: f.env})
	f.commit = s.Commit
	r := &replica{
		name: name, kind: kindStock, statsPort: s.StatsPort, proc: s.Proc,
		transport:   newTransport(s.HTTPPort, s.HTTPSPort, f.roots),
		reloads:     s.Reloads,
		haproxyLeft: func() ([]int, error) { return s.HAProxyPIDs(), nil },
	}
	r.reloadsIn = r.reloads()
	return r
}

// startHaroute starts haroute named name with a managed HAProxy and returns it once its
// /healthz/ready answers 200.
func (f *fleet) startHaroute(name string) *replica {
	f.t.Helper()
	h := f.c.StartRouterArgs(f.t, []string{"--managed-haproxy=" + f.haproxy}, append(f.env, "ROUTER_NAME="+name)...)
	masters, err := bench.HAProxyDescendants(h.Proc.Cmd.Process.Pid)
	if err != nil || len(masters) == 0 {
		f.t.Fatalf("%s: its HAProxy processes: %v (found %v)", name, err, masters)
	}
	r := &replica{
		name: name, kind: kindHaroute, statsPort: h.StatsPort, proc: h.Proc,
		transport: newTransport(h.HTTPPort, h.HTTPSPort, f.roots),
		reloads:   h.Reloads,
		haproxyLeft: func() ([]int, error) {
			// haroute's HAProxy outlives haroute only by mistake: any of the processes seen at the
			// start (or a worker of a later reload, a child of the same master) still running is one.
			return haproxyStillRunning(masters)
		},
	}
	r.reloadsIn = r.reloads()
	return r
}

// haproxyStillRunning returns those of pids that still run HAProxy.
func haproxyStillRunning(pids []int) ([]int, error) {
	procs, err := bench.Procs()
	if err != nil {
		return nil, err
	}
	want := map[int]bool{}
	for _, p := range pids {
		want[p] = true
	}
	var left []int
	for _, p := range procs {
		if want[p.PID] && p.IsHAProxy() {
			left = append(left, p.PID)
		}
	}
	return left, nil
}

// stop stops a replica as Kubernetes stops a pod: SIGTERM, after which the router reports NotReady
// and serves on for gracefulDelay; the load balancer's probe takes it out of rotation; then it
// stops its HAProxy and exits. It waits (bounded) for both and checks that no HAProxy of the replica
// is left.
func (f *fleet) stop(r *replica, lb *balancer) {
	f.t.Helper()
	r.reloadsOut = r.reloads()
	if err := r.proc.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		f.t.Fatalf("%s: SIGTERM: %v", r.name, err)
	}
	lb.events.add("%s: SIGTERM", r.name)
	if err := testkit.Eventually(outOfRotationTimeout, probePeriod, func() error {
		if lb.inRotation(r) {
			return errors.New("still in rotation")
		}
		return nil
	}); err != nil {
		f.t.Fatalf("%s: the load balancer does not take it out after SIGTERM: %v", r.name, err)
	}
	select {
	case <-r.proc.Done():
	case <-time.After(exitTimeout):
		f.t.Fatalf("%s: still runs %v after SIGTERM", r.name, exitTimeout)
	}
	lb.remove(r)
	lb.events.add("%s: exited", r.name)
	if err := testkit.Eventually(exitTimeout, probePeriod, func() error {
		left, err := r.haproxyLeft()
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("HAProxy processes %v still run", left)
		}
		return nil
	}); err != nil {
		f.t.Fatalf("%s: after it exited: %v", r.name, err)
	}
	r.transport.CloseIdleConnections()
}

// balancer is the fleet's load balancer, in the test as a Service's is in front of router pods: its
// rotation is every replica whose readiness probe passes, in the order they joined; each client
// alternates over the rotation on every request.
type balancer struct {
	mu      sync.Mutex
	members []*member
	// phase is the index of the scenario's current phase (the clients count their requests per phase).
	phase atomic.Int32
	// empty counts the picks that found no replica in rotation.
	empty  atomic.Int64
	events *timeline
	hc     *http.Client
}

type member struct {
	r     *replica
	ready bool
	fails int
}

func newBalancer(events *timeline) *balancer {
	return &balancer{events: events, hc: &http.Client{Timeout: probeTimeout}}
}

// add puts a ready replica into the rotation.
func (b *balancer) add(r *replica) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.members = append(b.members, &member{r: r, ready: true})
	b.events.add("%s: ready, in rotation", r.name)
}

// remove forgets a replica (its pod is gone).
func (b *balancer) remove(r *replica) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, m := range b.members {
		if m.r == r {
			b.members = append(b.members[:i], b.members[i+1:]...)
			return
		}
	}
}

// rotation returns the replicas in rotation.
func (b *balancer) rotation() []*replica {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*replica
	for _, m := range b.members {
		if m.ready {
			out = append(out, m.r)
		}
	}
	return out
}

// names returns the names of the replicas in rotation, for the log.
func (b *balancer) names() string {
	var names []string
	for _, r := range b.rotation() {
		names = append(names, r.name)
	}
	return strings.Join(names, " + ")
}

func (b *balancer) inRotation(r *replica) bool {
	for _, x := range b.rotation() {
		if x == r {
			return true
		}
	}
	return false
}

// pick returns the replica of a client's n-th request: the rotation's (n mod its size)-th, so that a
// client's consecutive requests go to the replicas in turn; nil when none is in rotation.
func (b *balancer) pick(n int) *replica {
	rot := b.rotation()
	if len(rot) == 0 {
		b.empty.Add(1)
		return nil
	}
	return rot[n%len(rot)]
}

// probe asks every member's /healthz/ready each probePeriod until ctx ends, and takes a member out
// of rotation after probeFailures failures in a row (back in after one success).
func (b *balancer) probe(ctx context.Context) {
	tick := time.NewTicker(probePeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.mu.Lock()
		members := append([]*member(nil), b.members...)
		b.mu.Unlock()
		for _, m := range members {
			ok := b.ready(ctx, m.r)
			b.mu.Lock()
			switch {
			case ok && !m.ready:
				m.ready, m.fails = true, 0
				b.events.add("%s: Ready again, back in rotation", m.r.name)
			case ok:
				m.fails = 0
			case m.ready:
				m.fails++
				if m.fails >= probeFailures {
					m.ready = false
					b.events.add("%s: NotReady, out of rotation", m.r.name)
				}
			}
			b.mu.Unlock()
		}
	}
}

// ready reports whether the replica's /healthz/ready answers 200.
func (b *balancer) ready(ctx context.Context, r *replica) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(r.statsPort)+"/healthz/ready", nil)
	if err != nil {
		return false
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// timeline records the scenario's events with their time since its start.
type timeline struct {
	mu    sync.Mutex
	start time.Time
	lines []string
}

func (tl *timeline) add(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.lines = append(tl.lines, fmt.Sprintf("%6.1fs  ", time.Since(tl.start).Seconds())+fmt.Sprintf(format, args...))
}

func (tl *timeline) String() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return strings.Join(tl.lines, "\n")
}
