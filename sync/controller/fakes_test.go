package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/routetest"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/sync/source"
)

// fakeSource is an in-memory Source.
type fakeSource struct {
	mu        sync.Mutex
	in        mapping.Input
	synced    atomic.Bool
	changes   chan struct{}
	snapshots atomic.Int64
}

func newFakeSource(in mapping.Input) *fakeSource {
	return &fakeSource{in: in, changes: make(chan struct{}, 1)}
}

func (f *fakeSource) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (f *fakeSource) Changes() <-chan struct{}      { return f.changes }
func (f *fakeSource) HasSynced() bool               { return f.synced.Load() }

func (f *fakeSource) Snapshot() (mapping.Input, []source.FileError) {
	f.snapshots.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.in, nil
}

// set replaces the objects and signals a change.
func (f *fakeSource) set(in mapping.Input) {
	f.mu.Lock()
	f.in = in
	f.mu.Unlock()
	f.signal()
}

func (f *fakeSource) signal() {
	select {
	case f.changes <- struct{}{}:
	default:
	}
}

var _ source.Source = (*fakeSource)(nil)

// fakeHAProxy records what the controller asks of the HAProxy side. It plans like haproxy.Instance
// (the first Update from an unknown state is a reload, labelled with the reason it was forgotten for;
// with reloadEveryChange every change is a reload) and forgets its state on a restart after a
// runtime change, as the Instance does.
type fakeHAProxy struct {
	mu      sync.Mutex
	applied *model.Config
	unknown plan.Reason
	touched bool
	updates []*model.Config
	events  []string                 // "update" / "refill" / "deferred" / "forget", in order
	repairs int                      // Repair calls with a known state
	fail    int                      // the next fail Updates return an error
	failIf  func(*model.Config) bool // Updates of a desired state it holds for fail (a bad input)
	// deferred makes the next Update report deferred deletions (retried by the controller).
	deferred int
	// readyAt, when in the future, is when a reload may be sent: an Update whose plan needs one
	// before then reports ReloadAt and changes nothing, like haproxy.Instance.
	readyAt time.Time
	// low makes the next runtime Updates report a low spare pool.
	low int
	// reloadEveryChange is the Instance's reload mode.
	reloadEveryChange bool
	// procs answers Processes; restart is reported once by the next Processes.
	workers int
	restart string
	// repair answers Repair (a resync forgets the state with reason Drift).
	repair haproxy.RepairOutcome
	// pingErr answers Ping.
	pingErr error
	updated chan struct{}
}

func newFakeHAProxy() *fakeHAProxy {
	return &fakeHAProxy{updated: make(chan struct{}, 1000), workers: 1}
}

var _ HAProxy = (*fakeHAProxy)(nil)

func (u *fakeHAProxy) Update(_ context.Context, desired *model.Config) (haproxy.Outcome, error) {
	return u.update("update", desired)
}

func (u *fakeHAProxy) Refill(_ context.Context, desired *model.Config) (haproxy.Outcome, error) {
	return u.update("refill", desired)
}

func (u *fakeHAProxy) update(event string, desired *model.Config) (haproxy.Outcome, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	defer func() { u.updated <- struct{}{} }()
	if u.fail > 0 || u.failIf != nil && u.failIf(desired) {
		u.events = append(u.events, event)
		u.fail = max(u.fail-1, 0)
		// The first update of an Instance is a reload: it fails as a refused configuration would.
		return haproxy.Outcome{Reason: plan.Reason{Kind: plan.Initial}}, errors.New("injected failure")
	}
	p := plan.ComputeWith(u.applied, desired, plan.Options{Unknown: u.unknown, ReloadEveryChange: u.reloadEveryChange})
	out := haproxy.Outcome{Plan: p, Reason: p.Reason()}
	if p.NeedsReload() && time.Now().Before(u.readyAt) {
		u.events = append(u.events, "deferred")
		out.ReloadAt = u.readyAt
		return out, nil
	}
	u.events = append(u.events, event)
	out.Reloaded = p.NeedsReload()
	out.Result.Counts = map[string]int{}
	if !p.NeedsReload() && u.low > 0 {
		u.low--
		out.PoolLow = []plan.PoolKey{{Kind: model.KindHTTP, Balance: "random"}}
	}
	for _, op := range p.Ops {
		out.Result.Counts[opName(op)]++
		out.Result.Applied++
	}
	if u.deferred > 0 {
		u.deferred--
		out.Result.Deferred = []plan.DelServer{{Backend: "b", Server: "s"}}
	}
	if out.Reloaded || out.Result.Applied > 0 {
		u.touched = true
	}
	u.applied, u.unknown = p.Next, plan.Reason{}
	u.updates = append(u.updates, desired)
	return out, nil
}

// opName names the ops the fake counts, as apply.OpName does for the ones these tests make.
func opName(op plan.Op) string {
	switch op.(type) {
	case plan.AddServer:
		return "add_server"
	case plan.DelServer:
		return "del_server"
	}
	return fmt.Sprintf("%T", op)
}

func (u *fakeHAProxy) Repair(context.Context) (haproxy.RepairOutcome, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.applied == nil {
		return haproxy.RepairOutcome{}, haproxy.ErrNoState
	}
	u.repairs++
	out := u.repair
	u.repair = haproxy.RepairOutcome{}
	if out.Resync {
		u.forget(out.Reason)
	}
	return out, nil
}

func (u *fakeHAProxy) Restarted(why string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.touched {
		return false
	}
	u.touched = false
	u.forget(plan.Reason{Kind: plan.Restart, Detail: why})
	return true
}

func (u *fakeHAProxy) forget(r plan.Reason) {
	u.applied, u.unknown = nil, r
	u.events = append(u.events, "forget")
}

func (u *fakeHAProxy) Processes(context.Context) (haproxy.Processes, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := haproxy.Processes{Workers: u.workers, Restart: u.restart}
	u.restart = ""
	return out, nil
}

func (u *fakeHAProxy) Ping(context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.pingErr
}

func (u *fakeHAProxy) Applied() *model.Config {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.applied
}

func (u *fakeHAProxy) set(f func(u *fakeHAProxy)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f(u)
}

func (u *fakeHAProxy) snapshot() (updates []*model.Config, events []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*model.Config(nil), u.updates...), append([]string(nil), u.events...)
}

func (u *fakeHAProxy) count(event string) int {
	_, ev := u.snapshot()
	n := 0
	for _, e := range ev {
		if e == event {
			n++
		}
	}
	return n
}

// fakeStatus records status writes; fail makes the next calls fail.
type fakeStatus struct {
	mu    sync.Mutex
	calls int
	fail  int
	last  []mapping.Problem
}

func (s *fakeStatus) Apply(_ context.Context, _ []*routev1.Route, _ *model.Config, problems []mapping.Problem) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.last = problems
	if s.fail > 0 {
		s.fail--
		return errors.New("injected status failure")
	}
	return nil
}

func (s *fakeStatus) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// testLogger writes to the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// waitFor polls cond every 5 ms up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// input builders ----------------------------------------------------------------------------------

// webInput is one Route to a Service with the given endpoint addresses.
func webInput(addrs ...string) mapping.Input {
	return mapping.Input{
		Routes:         []*routev1.Route{routetest.Route("demo", "web", "www.example.com", 0)},
		Services:       []*corev1.Service{routetest.Service("demo", "web")},
		EndpointSlices: []*discoveryv1.EndpointSlice{routetest.PodSlice("demo", "web", addrs...)},
	}
}

// serversOf returns the addresses of the servers of the backend serving ns/name in cfg.
func serversOf(cfg *model.Config, ns, name string) []string {
	if cfg == nil {
		return nil
	}
	for _, r := range cfg.Routes {
		if r.Namespace != ns || r.Name != name {
			continue
		}
		b := cfg.Backend(r.Backend)
		if b == nil {
			return nil
		}
		var out []string
		for _, s := range b.Servers {
			out = append(out, s.Addr)
		}
		return out
	}
	return nil
}

// translate returns the desired state of in under the default options.
func translate(t *testing.T, in mapping.Input) *model.Config {
	t.Helper()
	cfg, problems := mapping.Translate(in, mapping.DefaultOptions())
	for _, p := range problems {
		if !p.Warning {
			t.Fatalf("translate: %s", p)
		}
	}
	return cfg
}

// value returns the value of a counter or gauge.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatalf("metric %s is neither a counter nor a gauge", m.Desc())
	return 0
}

// series counts the series a collector has.
func series(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 1000)
	c.Collect(ch)
	close(ch)
	return len(ch)
}
