package reload_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
)

// holdBed is HAProxy serving hold.example.com from a server that accepts and never answers, so that
// a request in flight keeps the worker that took it alive across reloads.
type holdBed struct {
	r        *testbed.StaticHAProxy
	rel      *reload.Reloader
	files    []render.File
	accepted atomic.Int32 // connections the never-answering server took
}

func newHoldBed(t *testing.T, maxWorkerReloads int) *holdBed {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.5:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &holdBed{}
	held := make(chan net.Conn, 16)
	t.Cleanup(func() {
		ln.Close()
		close(held)
		for c := range held {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.accepted.Add(1)
			select {
			case held <- c:
			default:
				c.Close()
			}
		}
	}()
	ca := testkit.NewCA(t, "router CA")
	opts := testbed.RouterOptions(t)
	opts.MaxWorkerReloads = maxWorkerReloads
	m := &testbed.Manifests{}
	m.ServiceAt("web", "hold", netip.MustParseAddrPort(ln.Addr().String())).Route("web", "hold", "hold.example.com", "", "hold")
	r := testbed.StartStaticHAProxy(t, m.Input(t), opts, ca.IssueBundle(t, "default.router.test"), ca.Pool())
	r.RequireAdmitted(t)
	// Reloads of the same files, without the configuration check: only the workers matter here.
	rel := reload.New("", r.Dir, socket.NewMaster(r.MasterSocket, socket.Options{}))
	rel.MinInterval = 0
	rel.WaitTimeout = 20 * time.Second
	b.r, b.rel, b.files = r, rel, r.Files
	return b
}

// hold sends a request that the server never answers and returns its connection, and the worker
// that took it.
func (b *holdBed) hold(t *testing.T) (net.Conn, int) {
	t.Helper()
	st, err := socket.NewMaster(b.r.MasterSocket, socket.Options{}).ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w, ok := st.Serving()
	if !ok {
		t.Fatalf("no serving worker: %+v", st)
	}
	before := b.accepted.Load()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(b.r.Options.HTTPPort)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte("GET /slow HTTP/1.1\r\nHost: hold.example.com\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The request has reached the server once the server has accepted a connection.
	for deadline := time.Now().Add(10 * time.Second); b.accepted.Load() == before; {
		if time.Now().After(deadline) {
			t.Fatal("the held request did not reach its server")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c, w.PID
}

// reloads reloads n times and returns the workers listed afterwards.
func (b *holdBed) reloads(t *testing.T, n int) []socket.Proc {
	t.Helper()
	for i := range n {
		if _, err := b.rel.Reload(context.Background(), b.files); err != nil {
			t.Fatalf("reload %d: %v", i+1, err)
		}
	}
	st, err := socket.NewMaster(b.r.MasterSocket, socket.Options{}).ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Workers
}

func listed(ws []socket.Proc, pid int) bool {
	return slices.ContainsFunc(ws, func(w socket.Proc) bool { return w.PID == pid })
}

// TestMaxWorkerReloadsStopsOldWorker: the limit haroute writes reaches HAProxy's master, which stops
// an old worker (and its connections) once it has seen more reloads than that.
func TestMaxWorkerReloadsStopsOldWorker(t *testing.T) {
	b := newHoldBed(t, 2)
	c, pid := b.hold(t)
	if ws := b.reloads(t, 2); !listed(ws, pid) {
		t.Fatalf("worker %d gone after 2 reloads with mworker-max-reloads 2: %+v", pid, ws)
	}
	ws := b.reloads(t, 1)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(c).ReadByte(); err == nil {
		t.Fatal("the held connection got an answer; want it cut with its worker")
	}
	if deadline := time.Now().Add(10 * time.Second); listed(ws, pid) {
		for listed(ws, pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			ws = b.reloads(t, 0)
		}
		if listed(ws, pid) {
			t.Fatalf("worker %d still listed after 3 reloads with mworker-max-reloads 2: %+v", pid, ws)
		}
	}
}

// TestDefaultKeepsOldWorkerPast50Reloads: with haroute's default, an old worker holding a request
// outlives the 50 reloads after which HAProxy 3.3 and later stop it by default, on every version.
func TestDefaultKeepsOldWorkerPast50Reloads(t *testing.T) {
	if testing.Short() {
		t.Skip("52 reloads")
	}
	opts := mapping.DefaultOptions()
	b := newHoldBed(t, opts.MaxWorkerReloads)
	c, pid := b.hold(t)
	if ws := b.reloads(t, 52); !listed(ws, pid) {
		t.Fatalf("worker %d gone after 52 reloads: %+v", pid, ws)
	}
	if err := c.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(c).ReadByte(); !isTimeout(err) {
		t.Fatalf("the held connection: %v, want it still open", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
