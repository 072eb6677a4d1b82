package haproxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haroute/haroute/runtime/haproxy"
)

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

// fakeInstance returns an Instance whose master and admin sockets are fake CLIs.
func fakeInstance(t *testing.T, master, admin *fakeCLI) *haproxy.Instance {
	t.Helper()
	inst, err := haproxy.New(haproxy.Config{Dir: t.TempDir(), MasterSocket: master.path, AdminSocket: admin.path})
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// TestProcessesReportsOthersReloads: the first look records the serving worker; later looks report
// a new serving worker that did not come from a reload of the Instance's, once.
func TestProcessesReportsOthersReloads(t *testing.T) {
	var worker, reloads atomic.Int64
	worker.Store(101)
	master := startFakeCLI(t, func(cmd string) string {
		if cmd != "show proc" {
			return "Unknown command.\n\n"
		}
		return procReply(100, int(reloads.Load()), int(worker.Load()))
	})
	admin := startFakeCLI(t, func(cmd string) string {
		return fmt.Sprintf("Name: HAProxy\nVersion: 2.6.12\nPid: %d\n\n", worker.Load())
	})
	inst := fakeInstance(t, master, admin)
	ctx := context.Background()
	for range 3 {
		ps, err := inst.Processes(ctx)
		if err != nil || ps.Workers != 1 || ps.Restart != "" {
			t.Fatalf("Processes = %+v, %v; want 1 worker, no restart", ps, err)
		}
	}
	reloads.Store(1)
	worker.Store(102) // someone else reloaded HAProxy
	ps, err := inst.Processes(ctx)
	if err != nil || !strings.Contains(ps.Restart, "replaced by [102]") {
		t.Fatalf("Processes after an external reload = %+v, %v", ps, err)
	}
	if ps, _ := inst.Processes(ctx); ps.Restart != "" {
		t.Fatalf("the restart was reported twice: %+v", ps)
	}
}

// TestReloadInFlightIsNotARestart: while someone else's reload is in flight, a 3.1+ master lists the
// new worker under "# workers" before it serves (and drops it again if it fails). A new worker set is
// a restart only once that worker answers on the admin socket.
func TestReloadInFlightIsNotARestart(t *testing.T) {
	var worker, reloads, answering atomic.Int64
	worker.Store(101)
	answering.Store(101)
	master := startFakeCLI(t, func(cmd string) string {
		if cmd != "show proc" {
			return "Unknown command.\n\n"
		}
		return procReply(100, int(reloads.Load()), int(worker.Load()))
	})
	admin := startFakeCLI(t, func(cmd string) string {
		if cmd == "show info" {
			return fmt.Sprintf("Name: HAProxy\nVersion: 3.2.26-1\nPid: %d\n\n", answering.Load())
		}
		return "Unknown command.\n\n"
	})
	inst := fakeInstance(t, master, admin)
	ctx := context.Background()
	if _, err := inst.Processes(ctx); err != nil {
		t.Fatal(err)
	}
	// A reload in flight: the master lists worker 102, but 101 still serves.
	reloads.Store(1)
	worker.Store(102)
	for range 3 {
		if ps, err := inst.Processes(ctx); err != nil || ps.Restart != "" {
			t.Fatalf("a reload in flight was taken for a restart: %+v, %v", ps, err)
		}
	}
	// It completes: 102 answers, which is a reload of someone else's.
	answering.Store(102)
	if ps, err := inst.Processes(ctx); err != nil || ps.Restart == "" {
		t.Fatalf("the completed reload was not reported: %+v, %v", ps, err)
	}
}

// TestPing: Ping answers with the admin socket.
func TestPing(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	admin := startFakeCLI(t, func(cmd string) string {
		if cmd == "show version" && up.Load() {
			return "2.6.12-1+deb12u4\n\n"
		}
		return ""
	})
	inst := fakeInstance(t, admin, admin)
	if err := inst.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	up.Store(false)
	if err := inst.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "admin socket") {
		t.Fatalf("Ping with a silent admin socket: %v", err)
	}
}
