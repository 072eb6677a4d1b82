package controller

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/routetest"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
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

// fakeUpdater records what the controller asks of it. The first Update after a Forget (or from an
// unknown state) counts as a reload, like haproxy.Instance.
type fakeUpdater struct {
	mu      sync.Mutex
	applied *model.Config
	updates []*model.Config
	events  []string // "update" / "forget", in order
	fail    int      // the next fail Updates return an error
	// deferred makes the next Update report deferred deletions (retried by the controller).
	deferred int
	// readyAt, when in the future, is when a reload may be sent: an Update whose plan needs one
	// before then reports ReloadAt and changes nothing, like haproxy.Instance.
	readyAt time.Time
	// low makes the next runtime Updates report a low spare pool.
	low     int
	updated chan struct{}
}

func newFakeUpdater() *fakeUpdater { return &fakeUpdater{updated: make(chan struct{}, 1000)} }

func (u *fakeUpdater) Update(_ context.Context, desired *model.Config) (haproxy.Outcome, error) {
	return u.update("update", desired)
}

func (u *fakeUpdater) Refill(_ context.Context, desired *model.Config) (haproxy.Outcome, error) {
	return u.update("refill", desired)
}

func (u *fakeUpdater) update(event string, desired *model.Config) (haproxy.Outcome, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	defer func() { u.updated <- struct{}{} }()
	if u.fail > 0 {
		u.events = append(u.events, event)
		u.fail--
		return haproxy.Outcome{}, errors.New("injected failure")
	}
	p := plan.Compute(u.applied, desired)
	if p.NeedsReload() && time.Now().Before(u.readyAt) {
		u.events = append(u.events, "deferred")
		return haproxy.Outcome{Plan: p, ReloadAt: u.readyAt}, nil
	}
	u.events = append(u.events, event)
	out := haproxy.Outcome{Plan: p, Reloaded: p.NeedsReload(), Result: apply.Result{Counts: map[string]int{}}}
	if !p.NeedsReload() && u.low > 0 {
		u.low--
		out.PoolLow = []plan.PoolKey{{Kind: model.KindHTTP, Balance: "random"}}
	}
	for _, op := range p.Ops {
		out.Result.Counts[apply.OpName(op)]++
		out.Result.Applied++
	}
	if u.deferred > 0 {
		u.deferred--
		out.Result.Deferred = []plan.DelServer{{Backend: "b", Server: "s"}}
	}
	u.applied = p.Next
	u.updates = append(u.updates, desired)
	return out, nil
}

func (u *fakeUpdater) Applied() *model.Config {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.applied
}

func (u *fakeUpdater) Forget() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.applied = nil
	u.events = append(u.events, "forget")
}

func (u *fakeUpdater) snapshot() (updates []*model.Config, events []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*model.Config(nil), u.updates...), append([]string(nil), u.events...)
}

func (u *fakeUpdater) count(event string) int {
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

// fakeCLI answers HAProxy CLI commands on a unix socket: non-interactive framing (one command, the
// reply, close); for the master, commands are followed by "quit".
type fakeCLI struct {
	path    string
	handler func(cmd string) string
	cmds    atomic.Int64
}

func startFakeCLI(t *testing.T, handler func(cmd string) string) *fakeCLI {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fakeCLI{path: filepath.Join(dir, "s.sock"), handler: handler}
	l, err := net.Listen("unix", f.path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
				line, err := bufio.NewReader(conn).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return
				}
				f.cmds.Add(1)
				_, _ = io.WriteString(conn, f.handler(strings.TrimSpace(line)))
			}()
		}
	}()
	return f
}

// procReply is a 2.6 `show proc` answer.
func procReply(master, reloads int, workers ...int) string {
	var b strings.Builder
	b.WriteString("#<PID>          <type>          <reloads>       <uptime>        <version>\n")
	fmt.Fprintf(&b, "%d            master          %d [failed: 0]  0d00h00m10s     2.6.12\n", master, reloads)
	b.WriteString("# workers\n")
	for _, w := range workers {
		fmt.Fprintf(&b, "%d            worker          %d               0d00h00m05s     2.6.12\n", w, reloads)
	}
	b.WriteString("# old workers\n# programs\n\n")
	return b.String()
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

type atomicInt struct{ v atomic.Int64 }

func (a *atomicInt) get() int  { return int(a.v.Load()) }
func (a *atomicInt) set(v int) { a.v.Store(int64(v)) }

func newAdmin(path string) *socket.Admin {
	return socket.NewAdmin(path, socket.Options{Timeout: time.Second, RetryFor: -1})
}

func newMaster(path string) *socket.Master {
	return socket.NewMaster(path, socket.Options{Timeout: time.Second, RetryFor: -1})
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
