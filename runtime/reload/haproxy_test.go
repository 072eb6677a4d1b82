package reload_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
)

// bed is a running router serving www.example.com from backend "one", with the inputs to render
// changed states for the same directory.
type bed struct {
	r       *testbed.StaticHAProxy
	opts    mapping.Options
	certPEM []byte
	one     *testkit.Backend
	two     *testkit.Backend
	rel     *reload.Reloader
}

func newBed(t *testing.T) *bed {
	t.Helper()
	ca := testkit.NewCA(t, "router CA")
	b := &bed{opts: testbed.RouterOptions(t), certPEM: ca.IssueBundle(t, "default.router.test")}
	b.one = testkit.StartHTTPBackend(t, "127.0.0.2", "one")
	b.two = testkit.StartHTTPBackend(t, "127.0.0.3", "two")
	b.r = testbed.StartStaticHAProxy(t, b.manifests(false).Input(t), b.opts, b.certPEM, ca.Pool())
	b.r.RequireAdmitted(t)
	b.rel = reload.New(testkit.HAProxyBinary(), b.r.Dir, socket.NewMaster(b.r.MasterSocket, socket.Options{}))
	b.rel.MinInterval = 0
	b.rel.WaitTimeout = 20 * time.Second
	return b
}

// manifests returns Route web/www (www.example.com → "one"), with Route web/new (new.example.com →
// "two") when withNew.
func (b *bed) manifests(withNew bool) *testbed.Manifests {
	m := &testbed.Manifests{}
	m.Service("web", "one", b.one).Route("web", "www", "www.example.com", "", "one")
	if withNew {
		m.Service("web", "two", b.two).Route("web", "new", "new.example.com", "", "two")
	}
	return m
}

// next renders the first state plus Route web/new for the router's directory.
func (b *bed) next(t *testing.T) []render.File {
	t.Helper()
	cfg, problems := mapping.Translate(b.manifests(true).Input(t), b.opts)
	for _, p := range problems {
		if !p.Warning {
			t.Fatalf("route rejected: %v", p)
		}
	}
	files, err := render.Render(cfg, render.Options{Dir: b.r.Dir, DefaultCertificatePEM: b.certPEM})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// withConfig returns files with text appended to conf/haproxy.cfg.
func withConfig(files []render.File, text string) []render.File {
	out := make([]render.File, len(files))
	copy(out, files)
	for i, f := range out {
		if f.Path == layout.Config {
			out[i].Data = append(bytes.Clone(f.Data), text...)
		}
	}
	return out
}

func (b *bed) procs(t *testing.T) socket.ProcState {
	t.Helper()
	st, err := socket.NewMaster(b.r.MasterSocket, socket.Options{}).ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// serving returns the PID of the worker that serves new connections (0: none).
func serving(st socket.ProcState) int {
	w, _ := st.Serving()
	return w.PID
}

// expect checks who answers a host.
func (b *bed) expect(t *testing.T, host string, status int, backend string) {
	t.Helper()
	resp, err := b.r.Client.Do("GET", "http://"+host+"/", nil)
	if err != nil {
		t.Errorf("GET %s: %v", host, err)
		return
	}
	if resp.Status != status || resp.Backend != backend {
		t.Errorf("GET %s: %d from %q, want %d from %q", host, resp.Status, resp.Backend, status, backend)
	}
}

// onDisk checks that the directory holds exactly files under conf/ and router/.
func (b *bed) onDisk(t *testing.T, files []render.File) {
	t.Helper()
	want := map[string][]byte{}
	for _, f := range files {
		want[f.Path] = f.Data
	}
	got := map[string][]byte{}
	for _, sub := range []string{"conf", "router"} {
		root := filepath.Join(b.r.Dir, sub)
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if errors.Is(err, os.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(b.r.Dir, p)
			got[filepath.ToSlash(rel)] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for p, w := range want {
		if g, ok := got[p]; !ok || !bytes.Equal(g, w) {
			t.Errorf("%s on disk differs from the expected file (present: %v)", p, ok)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected file %s on disk", p)
		}
	}
}

func TestReloadServesNewConfig(t *testing.T) {
	b := newBed(t)
	b.expect(t, "new.example.com", 503, "")
	before := b.procs(t)
	files := b.next(t)
	res, err := b.rel.Reload(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	after := b.procs(t)
	if after.Master.Reloads != before.Master.Reloads+1 || after.Failed != before.Failed {
		t.Errorf("reload counter %d → %d, failed %d → %d; want +1 and unchanged",
			before.Master.Reloads, after.Master.Reloads, before.Failed, after.Failed)
	}
	cur, _ := after.Current()
	if cur.PID == 0 || cur.PID != res.Worker || cur.PID == serving(before) {
		t.Errorf("current worker %d after the reload (before %d), result worker %d: want a new worker",
			cur.PID, serving(before), res.Worker)
	}
	if res.Reloads != after.Master.Reloads {
		t.Errorf("result reloads %d, show proc %d", res.Reloads, after.Master.Reloads)
	}
	b.onDisk(t, files)
	b.expect(t, "new.example.com", 200, "two")
	b.expect(t, "www.example.com", 200, "one")
}

func TestReloadInvalidConfigKeepsServing(t *testing.T) {
	b := newBed(t)
	before := b.procs(t)
	_, err := b.rel.Reload(context.Background(), withConfig(b.next(t), "\nbackend broken\n  no_such_keyword 1\n"))
	if !errors.Is(err, reload.ErrInvalidConfig) {
		t.Fatalf("error %v, want ErrInvalidConfig", err)
	}
	var ce *reload.CheckError
	if !errors.As(err, &ce) || !bytes.Contains([]byte(ce.Output), []byte("no_such_keyword")) {
		t.Errorf("error %v does not carry HAProxy's output", err)
	}
	after := b.procs(t)
	if after.Master.Reloads != before.Master.Reloads {
		t.Errorf("reload counter %d → %d after a refused check", before.Master.Reloads, after.Master.Reloads)
	}
	b.onDisk(t, b.r.Files)
	b.expect(t, "www.example.com", 200, "one")
	b.expect(t, "new.example.com", 503, "")
}

func TestReloadFailingStartKeepsOldWorker(t *testing.T) {
	b := newBed(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = busy.Close() })
	before := b.procs(t)
	// Passes haproxy -c (which binds nothing) but cannot start: the port is taken.
	bad := withConfig(b.next(t), fmt.Sprintf("\nfrontend taken\n  mode http\n  bind %s\n", busy.Addr()))
	_, err = b.rel.Reload(context.Background(), bad)
	if !errors.Is(err, reload.ErrReloadFailed) {
		t.Fatalf("error %v, want ErrReloadFailed", err)
	}
	// Every version: "reload failed", the worker that keeps serving, and HAProxy's own reason where
	// the master gives one (2.7+; 2.6 writes it to its log only).
	want := []string{"reload failed", fmt.Sprintf("worker %d still serving the previous configuration", serving(before))}
	if socket.CapabilitiesOf(before.Version).SyncReload {
		want = append(want, "cannot bind socket")
	} else {
		want = append(want, "reason only in its log")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	after := b.procs(t)
	if after.Failed != before.Failed+1 {
		t.Errorf("failed reloads %d → %d, want +1", before.Failed, after.Failed)
	}
	b.keptServing(t, before)
	b.reloadsAgain(t)
}

// keptServing checks the state after a failed reload: the worker that served before serves still,
// the last good files are on disk, and the answers are the old ones.
func (b *bed) keptServing(t *testing.T, before socket.ProcState) {
	t.Helper()
	if after := b.procs(t); serving(after) == 0 || serving(after) != serving(before) {
		t.Errorf("serving worker %d after a failed reload (show proc %+v), want the old one %d", serving(after), after, serving(before))
	}
	b.onDisk(t, b.r.Files)
	b.expect(t, "www.example.com", 200, "one")
	b.expect(t, "new.example.com", 503, "")
}

// reloadsAgain checks that the master reloads valid files after a failed reload.
func (b *bed) reloadsAgain(t *testing.T) {
	t.Helper()
	files := b.next(t)
	if _, err := b.rel.Reload(context.Background(), files); err != nil {
		t.Fatalf("reload after a failed one: %v", err)
	}
	b.onDisk(t, files)
	b.expect(t, "new.example.com", 200, "two")
	b.expect(t, "www.example.com", 200, "one")
}

func TestReloadMinIntervalOrdersReloads(t *testing.T) {
	b := newBed(t)
	b.rel.MinInterval = 300 * time.Millisecond
	start := b.procs(t).Master.Reloads
	first, err := b.rel.Reload(context.Background(), b.next(t))
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.rel.Reload(context.Background(), b.r.Files)
	if err != nil {
		t.Fatal(err)
	}
	if first.Reloads != start+1 || second.Reloads != start+2 {
		t.Errorf("reload counters %d, %d after starting at %d", first.Reloads, second.Reloads, start)
	}
	if gap := second.Sent.Sub(first.Sent); gap < b.rel.MinInterval {
		t.Errorf("second reload sent %v after the first, earlier than MinInterval %v", gap, b.rel.MinInterval)
	}
	b.onDisk(t, b.r.Files)
	b.expect(t, "new.example.com", 503, "")
}

// TestReloadWithoutBinaryRollsBackRefusedConfig is the sidecar's case: no HAProxy binary next to
// haroute, so the master's reload is the check. A configuration the new worker refuses fails the
// reload, the last good files are back on disk (a restart of HAProxy's container starts from them),
// the old worker keeps serving, and the next valid reload goes through.
func TestReloadWithoutBinaryRollsBackRefusedConfig(t *testing.T) {
	b := newBed(t)
	b.rel.Binary = ""
	before := b.procs(t)
	_, err := b.rel.Reload(context.Background(), withConfig(b.next(t), "\nbackend broken\n  no_such_keyword 1\n"))
	if !errors.Is(err, reload.ErrReloadFailed) {
		t.Fatalf("error %v, want ErrReloadFailed", err)
	}
	if socket.CapabilitiesOf(before.Version).SyncReload && !strings.Contains(err.Error(), "no_such_keyword") {
		t.Errorf("error %q does not carry HAProxy's reason", err)
	}
	b.keptServing(t, before)
	b.reloadsAgain(t)
}
