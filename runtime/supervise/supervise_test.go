package supervise

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/runtime/socket"
)

// Test bounds.
const (
	startWait = 30 * time.Second
	stopWait  = 30 * time.Second
)

// procs returns the master PID and the current workers' PIDs from show proc.
func procs(t *testing.T, dir string) (int, []int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps, err := socket.NewMaster(layout.For(dir).MasterSocket(), socket.Options{}).ShowProc(ctx)
	if err != nil {
		t.Fatalf("show proc: %v", err)
	}
	var workers []int
	for _, w := range ps.Workers {
		if !w.Old {
			workers = append(workers, w.PID)
		}
	}
	if len(workers) == 0 {
		t.Fatalf("show proc: no current worker: %+v", ps)
	}
	return ps.Master.PID, workers
}

// adminPID asks the admin socket for show info and returns the worker's Pid.
func adminPID(t *testing.T, dir string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := socket.ShowInfo(ctx, socket.NewAdmin(layout.For(dir).AdminSocket(), socket.Options{}))
	if err != nil {
		t.Fatalf("admin socket: %v", err)
	}
	pid, err := strconv.Atoi(info["Pid"])
	if err != nil {
		t.Fatalf("show info Pid %q: %v", info["Pid"], err)
	}
	return pid
}

// TestSuperviseRealHAProxy starts the real HAProxy, kills its master and expects a restart, then
// cancels and expects a graceful stop with every process gone.
func TestSuperviseRealHAProxy(t *testing.T) {
	backend := startSlowBackend(t)
	dir, opts := renderDir(t, backend.Addr)
	rec := newRecorder(t)
	s := New(testkit.HAProxyBinary(), dir, slog.New(rec))
	s.StopTimeout = 5 * time.Second
	s.StartTimeout = 20 * time.Second
	r := startRun(t, s)

	waitStarted(t, s, startWait)
	pid1 := s.masterPID()
	if pid1 == 0 || !alive(pid1) {
		t.Fatalf("masterPID() = %d after Started, not a live process", pid1)
	}
	master1, workers1 := procs(t, dir)
	if master1 != pid1 {
		t.Fatalf("show proc master %d, masterPID() %d", master1, pid1)
	}
	if w := adminPID(t, dir); !slices.Contains(workers1, w) {
		t.Fatalf("admin socket answered from pid %d, not a current worker %v", w, workers1)
	}
	if len(rec.find(msgOutput)) == 0 {
		t.Errorf("no HAProxy output was logged")
	}
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a second Run = %v, want an already-running error", err)
	}

	// SIGKILL the master: the supervisor restarts it.
	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatalf("kill master %d: %v", pid1, err)
	}
	waitStarted(t, s, startWait)
	pid2 := s.masterPID()
	if pid2 == 0 || pid2 == pid1 {
		t.Fatalf("masterPID() = %d after the restart (was %d)", pid2, pid1)
	}
	master2, workers2 := procs(t, dir)
	if master2 != pid2 {
		t.Fatalf("show proc master %d after the restart, masterPID() %d", master2, pid2)
	}
	if w := adminPID(t, dir); !slices.Contains(workers2, w) || slices.Contains(workers1, w) {
		t.Fatalf("admin socket answered from pid %d; current workers %v, killed generation %v", w, workers2, workers1)
	}
	for _, w := range workers1 {
		waitFor(t, "worker "+strconv.Itoa(w)+" of the killed master gone", func() bool { return !alive(w) })
	}
	exits := rec.find(msgExited)
	if len(exits) != 1 || exits[0].Attrs["pid"] != strconv.Itoa(pid1) {
		t.Errorf("unexpected-exit records %+v, want one for pid %d", exits, pid1)
	}

	// Cancel while a slow request is in flight: the soft stop lets it finish, and Run returns once
	// everything is gone.
	waitFor(t, "HAProxy serving www.example.com", func() bool {
		code, body, err := get(opts.HTTPPort, "/")
		return err == nil && code == 200 && body == "answer /"
	})
	type answer struct {
		code int
		body string
		err  error
	}
	inflight := make(chan answer, 1)
	go func() {
		code, body, err := get(opts.HTTPPort, "/slow")
		inflight <- answer{code, body, err}
	}()
	select {
	case <-backend.Arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request did not reach the backend")
	}
	err := r.stop(t)
	if a := <-inflight; a.err != nil || a.code != 200 || a.body != "answer /slow" {
		t.Errorf("request in flight during the stop: %d %q %v, want 200 \"answer /slow\"", a.code, a.body, a.err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	for _, p := range append([]int{pid2}, workers2...) {
		if alive(p) {
			t.Errorf("pid %d still alive after Run returned", p)
		}
	}
	if s.masterPID() != 0 {
		t.Errorf("masterPID() = %d after Run returned, want 0", s.masterPID())
	}
	stops := rec.find(msgStopped)
	if len(stops) != 1 || stops[0].Attrs["pid"] != strconv.Itoa(pid2) || stops[0].Attrs["signal"] != "SIGUSR1" {
		t.Errorf("stop records %+v, want one soft stop (SIGUSR1) of pid %d", stops, pid2)
	}
	select {
	case <-s.Started():
		t.Errorf("Started fired without a third start")
	default:
	}
}

// TestMissingBinary: every start fails; Run retries with growing waits until ctx ends and returns
// ctx's end.
func TestMissingBinary(t *testing.T) {
	dir := testkit.TempDir(t)
	rec := newRecorder(t)
	s := New(filepath.Join(dir, "no-such-haproxy"), dir, slog.New(rec))
	const budget = 2500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	start := time.Now()
	err := s.Run(ctx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want context.DeadlineExceeded", err)
	}
	if took > budget+time.Second {
		t.Errorf("Run returned %v after start, %v after ctx's end", took, took-budget)
	}
	// 200 ms growing 1.5x with ±50 % jitter: between 5 and 8 attempts fit in 2.5 s; a busy loop would
	// make thousands.
	attempts := rec.find(msgStartFailed)
	if len(attempts) < 3 || len(attempts) > 12 {
		t.Errorf("%d start attempts in %v, want 3..12", len(attempts), budget)
	}
	for _, a := range attempts {
		if !strings.Contains(a.Attrs["err"], "no such file") {
			t.Errorf("start failure %q does not name the missing file", a.Attrs["err"])
		}
	}
	if s.masterPID() != 0 {
		t.Errorf("masterPID() = %d, want 0", s.masterPID())
	}
	select {
	case <-s.Started():
		t.Errorf("Started fired though nothing started")
	default:
	}
}

// TestArgumentsAndOutput runs a fake binary that prints its arguments, an alert and an over-long
// line, then exits: the output is logged line by line, bounded, and the early exit is a failed start.
func TestArgumentsAndOutput(t *testing.T) {
	dir := testkit.TempDir(t)
	bin := fakeBinary(t, `echo "$@"
echo "[ALERT]    (1) : boom" >&2
head -c 10000 /dev/zero | tr '\0' x; echo
exit 3`)
	rec := newRecorder(t)
	s := New(bin, dir, slog.New(rec))
	r := startRun(t, s)
	waitFor(t, "two failed starts", func() bool { return len(rec.find(msgStartFailed)) >= 2 })
	if err := r.stop(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	want := "-W -db -S " + dir + "/run/master.sock,mode,600 -f " + dir + "/conf/haproxy.cfg -f " + dir + "/conf/backends"
	var args, alert, long bool
	for _, o := range rec.find(msgOutput) {
		line := o.Attrs["line"]
		switch {
		case line == want && o.Attrs["stream"] == "stdout":
			args = true
		case strings.Contains(line, "[ALERT]") && o.Level == slog.LevelError && o.Attrs["stream"] == "stderr":
			alert = true
		case strings.HasPrefix(line, "xxx"):
			long = true
			if len(line) != maxLine {
				t.Errorf("long line logged with %d bytes, want %d", len(line), maxLine)
			}
		}
	}
	if !args || !alert || !long {
		t.Errorf("output records: arguments %v (want %q), alert as error %v, long line %v", args, want, alert, long)
	}
	if st, err := os.Stat(layout.For(dir).RunDir()); err != nil || !st.IsDir() {
		t.Errorf("run directory not created: %v", err)
	}
	if exits := rec.find(msgStartFailed); !strings.Contains(exits[0].Attrs["err"], "exit status 3") {
		t.Errorf("failed start %q does not carry the exit status", exits[0].Attrs["err"])
	}
	if stops := rec.find(msgStopped); len(stops) != 0 {
		t.Errorf("stop records %+v for processes that exited by themselves", stops)
	}
}

// TestStartTimeout: a process whose master socket never answers is killed after StartTimeout and
// started again.
func TestStartTimeout(t *testing.T) {
	dir := testkit.TempDir(t)
	rec := newRecorder(t)
	s := New(fakeBinary(t, "exec sleep 300"), dir, slog.New(rec))
	s.StartTimeout = 300 * time.Millisecond
	r := startRun(t, s)
	waitFor(t, "a second attempt", func() bool { return len(rec.find("haproxy starting")) >= 2 })
	if err := r.stop(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	failed := rec.find(msgStartFailed)
	if len(failed) == 0 || !strings.Contains(failed[0].Attrs["err"], "not answering after 300ms") {
		t.Fatalf("start failures %+v, want a master socket timeout", failed)
	}
	first := failed[0].Attrs["pid"]
	var killed bool
	for _, st := range rec.find(msgStopped) {
		killed = killed || (st.Attrs["pid"] == first && st.Attrs["signal"] == "SIGKILL")
	}
	if pid, _ := strconv.Atoi(first); !killed || alive(pid) {
		t.Errorf("the unanswering process %s was not killed (records %+v)", first, rec.find(msgStopped))
	}
	select {
	case <-s.Started():
		t.Errorf("Started fired for a process that never answered")
	default:
	}
}

// TestStopEscalation: a process ignoring SIGUSR1 gets SIGTERM after StopTimeout; one ignoring SIGTERM
// too gets SIGKILL. Run returns within the bounds, with the process gone.
func TestStopEscalation(t *testing.T) {
	for _, tc := range []struct {
		name, ignore, signal string
	}{
		{"term", "USR1", "SIGTERM"},
		{"kill", "USR1 TERM", "SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testkit.TempDir(t)
			mark := filepath.Join(dir, "trapped")
			bin := fakeBinary(t, "trap '' "+tc.ignore+"\ntouch "+mark+"\nexec sleep 300")
			rec := newRecorder(t)
			s := New(bin, dir, slog.New(rec))
			s.StopTimeout = 300 * time.Millisecond
			s.termTimeout = 300 * time.Millisecond
			r := startRun(t, s)
			waitFor(t, "fake binary running", func() bool {
				_, err := os.Stat(mark)
				return err == nil && s.masterPID() != 0
			})
			pid := s.masterPID()
			start := time.Now()
			if err := r.stop(t); !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v, want context.Canceled", err)
			}
			if took := time.Since(start); took > 300*time.Millisecond*2+killTimeout {
				t.Errorf("stop took %v", took)
			}
			if alive(pid) {
				t.Errorf("pid %d alive after Run returned", pid)
			}
			stops := rec.find(msgStopped)
			if len(stops) != 1 || stops[0].Attrs["signal"] != tc.signal {
				t.Errorf("stop records %+v, want one ending with %s", stops, tc.signal)
			}
		})
	}
}

// TestWaitForSockets: no HAProxy → ctx's end; an HAProxy started while waiting → nil.
func TestWaitForSockets(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		dir := testkit.TempDir(t)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := WaitForSockets(ctx, layout.For(dir).AdminSocket(), layout.For(dir).MasterSocket())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitForSockets = %v, want DeadlineExceeded", err)
		}
		if !errors.Is(err, socket.ErrUnavailable) {
			t.Errorf("WaitForSockets = %v, want the last probe error (ErrUnavailable) too", err)
		}
		if took := time.Since(start); took > 1300*time.Millisecond {
			t.Errorf("returned after %v", took)
		}
	})
	t.Run("started later", func(t *testing.T) {
		dir, _ := renderDir(t, netip.MustParseAddrPort("127.0.0.2:8080"))
		ctx, cancel := context.WithTimeout(context.Background(), startWait)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- WaitForSockets(ctx, layout.For(dir).AdminSocket(), layout.For(dir).MasterSocket())
		}()
		time.Sleep(200 * time.Millisecond)
		select {
		case err := <-done:
			t.Fatalf("WaitForSockets returned %v before HAProxy started", err)
		default:
		}
		testbed.Start(t, dir)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("WaitForSockets = %v", err)
			}
		case <-time.After(startWait):
			t.Fatalf("WaitForSockets did not return within %v of the start", startWait)
		}
	})
}

// TestRestartWaitKeepsToItsCap: the restart waits grow from initialBackoff and never pass
// maxBackoff, jitter included.
func TestRestartWaitKeepsToItsCap(t *testing.T) {
	eb := (&Supervisor{}).newBackOff()
	var longest time.Duration
	for i := range 500 {
		w := nextWait(eb)
		if w > maxBackoff || w <= 0 {
			t.Fatalf("wait %d is %v, want (0, %v]", i, w, maxBackoff)
		}
		longest = max(longest, w)
	}
	if longest < maxBackoff/2 {
		t.Fatalf("the waits never grew: longest %v", longest)
	}
}
