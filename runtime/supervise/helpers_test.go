package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
)

// masterPID returns the master's process id, 0 while no process runs.
func (s *Supervisor) masterPID() int { return int(s.pid.Load()) }

// renderDir renders a small model (Route www.example.com to one endpoint) into a new short directory
// with reload.WriteFiles and returns the directory and the options (ports) it was rendered with.
func renderDir(t *testing.T, endpoint netip.AddrPort) (string, mapping.Options) {
	t.Helper()
	dir := testkit.TempDir(t)
	m := &testbed.Manifests{}
	m.ServiceAt("web", "one", endpoint).Route("web", "www", "www.example.com", "", "one")
	opts := testbed.RouterOptions(t)
	cfg, problems := mapping.Translate(m.Input(t), opts)
	for _, p := range problems {
		if !p.Warning {
			t.Fatalf("route rejected: %v", p)
		}
	}
	ca := testkit.NewCA(t, "supervise CA")
	files, err := render.Render(cfg, render.Options{Dir: dir, DefaultCertificatePEM: ca.IssueBundle(t, "default.router.test")})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if err := reload.WriteFiles(dir, files); err != nil {
		t.Fatalf("write files: %v", err)
	}
	return dir, opts
}

// slowBackend is an HTTP server on 127.0.0.2 that answers "/slow" after slowFor and everything else
// at once; Arrived receives a value when a slow request comes in.
type slowBackend struct {
	Addr    netip.AddrPort
	Arrived chan struct{}
}

const slowFor = time.Second

func startSlowBackend(t *testing.T) *slowBackend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	b := &slowBackend{Addr: l.Addr().(*net.TCPAddr).AddrPort(), Arrived: make(chan struct{}, 1)}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case b.Arrived <- struct{}{}:
			default:
			}
			time.Sleep(slowFor)
		}
		_, _ = io.WriteString(w, "answer "+r.URL.Path)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return b
}

// get sends GET path with Host www.example.com to HAProxy's HTTP port on a new connection.
func get(port int, path string) (int, string, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = "www.example.com"
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// fakeBinary writes an executable shell script into a new directory and returns its path.
func fakeBinary(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(testkit.TempDir(t), "fake-haproxy")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runner runs a Supervisor's Run in the background; stop cancels it and returns Run's error.
type runner struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once Run has returned
	err    error         // Run's error, set before done is closed
}

// startRun starts s.Run; the test's cleanup cancels it and waits for it to return.
func startRun(t *testing.T, s *Supervisor) *runner {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{cancel: cancel, done: make(chan struct{})}
	go func() {
		r.err = s.Run(ctx)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(60 * time.Second):
			t.Errorf("Run did not return on cleanup")
		}
	})
	return r
}

// stop cancels Run and waits up to stopWait for it to return.
func (r *runner) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		return r.err
	case <-time.After(stopWait):
		t.Fatalf("Run did not return within %v of the cancel", stopWait)
		return nil
	}
}

// waitStarted waits up to d for a value on Started.
func waitStarted(t *testing.T, s *Supervisor, d time.Duration) {
	t.Helper()
	select {
	case <-s.Started():
	case <-time.After(d):
		t.Fatalf("Started did not fire within %v", d)
	}
}

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	const d = 10 * time.Second
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid exists (signal 0). Only used on PIDs the test's own supervisor started.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// record is one log record: its level, message and attributes as text.
type record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// recorder is a slog.Handler keeping every record (and writing it to the test log while the test
// runs).
type recorder struct {
	mu      *sync.Mutex
	records *[]record
	attrs   []slog.Attr
	t       *testing.T
	done    *bool
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{mu: &sync.Mutex{}, records: &[]record{}, t: t, done: new(bool)}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		*r.done = true
	})
	return r
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := map[string]string{}
	var b strings.Builder
	add := func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	}
	for _, a := range r.attrs {
		add(a)
	}
	rec.Attrs(add)
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.records = append(*r.records, record{Level: rec.Level, Msg: rec.Message, Attrs: attrs})
	if !*r.done {
		r.t.Logf("%s %s%s", rec.Level, rec.Message, b.String())
	}
	return nil
}

func (r *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	c := *r
	c.attrs = append(append([]slog.Attr(nil), r.attrs...), as...)
	return &c
}

func (r *recorder) WithGroup(string) slog.Handler { return r }

// find returns the records with message msg.
func (r *recorder) find(msg string) []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []record
	for _, rec := range *r.records {
		if rec.Msg == msg {
			out = append(out, rec)
		}
	}
	return out
}
