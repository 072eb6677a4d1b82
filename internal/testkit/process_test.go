package testkit

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cleanupRecorder collects the cleanups and errors of StartProcess so a test can run the cleanups
// when it wants and read what they reported; everything else goes to the real test.
type cleanupRecorder struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (r *cleanupRecorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *cleanupRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *cleanupRecorder) Failed() bool { return len(r.errors) > 0 }

// runCleanups runs the cleanups last in, first out, as the testing package does.
func (r *cleanupRecorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

// ignoresTERM is a command that ignores SIGTERM (the ignored disposition survives the exec).
func ignoresTERM() *exec.Cmd {
	return exec.Command("sh", "-c", `trap "" TERM; exec sleep 60`)
}

func TestProcessStopsOnCleanup(t *testing.T) {
	rec := &cleanupRecorder{TB: t}
	p := StartProcess(rec, "sleep", exec.Command("sleep", "60"), ProcessOptions{StopTimeout: 5 * time.Second})
	if p.Exited() {
		t.Fatal("sleep exited right after start")
	}
	rec.runCleanups()
	if !p.Exited() {
		t.Fatal("sleep still runs after the cleanup")
	}
	if len(rec.errors) > 0 {
		t.Errorf("cleanup reported %q", rec.errors)
	}
	if got := p.Cmd.SysProcAttr.Pdeathsig; got != syscall.SIGKILL {
		t.Errorf("Pdeathsig = %v, want SIGKILL when the options name none", got)
	}
}

func TestProcessKilledAfterStopTimeout(t *testing.T) {
	rec := &cleanupRecorder{TB: t}
	p := StartProcess(rec, "stubborn", ignoresTERM(), ProcessOptions{StopTimeout: 200 * time.Millisecond})
	time.Sleep(100 * time.Millisecond) // let sh set the trap and exec
	rec.runCleanups()
	if !p.Exited() {
		t.Fatal("the process still runs after the cleanup")
	}
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "did not stop within") {
		t.Errorf("cleanup reported %q, want one `did not stop within` error", rec.errors)
	}
}

func TestProcessKillOnStop(t *testing.T) {
	rec := &cleanupRecorder{TB: t}
	p := StartProcess(rec, "stubborn", ignoresTERM(), ProcessOptions{StopTimeout: time.Minute, KillOnStop: true})
	start := time.Now()
	rec.runCleanups()
	if !p.Exited() {
		t.Fatal("the process still runs after the cleanup")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("cleanup took %v; KillOnStop should not wait for SIGTERM", took)
	}
	if len(rec.errors) > 0 {
		t.Errorf("cleanup reported %q", rec.errors)
	}
}

func TestProcessMustOutlive(t *testing.T) {
	rec := &cleanupRecorder{TB: t}
	p := StartProcess(rec, "echo", exec.Command("sh", "-c", "echo bye"), ProcessOptions{StopTimeout: time.Second, MustOutlive: true})
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("sh did not exit")
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill of an ended process: %v", err)
	}
	rec.runCleanups()
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "exited before the test ended") {
		t.Errorf("cleanup reported %q, want one `exited before the test ended` error", rec.errors)
	}
	if got := p.Out.String(); got != "bye\n" {
		t.Errorf("output %q, want %q", got, "bye\n")
	}
}

func TestEventuallyReturnsLastError(t *testing.T) {
	calls := 0
	err := Eventually(30*time.Millisecond, 5*time.Millisecond, func() error {
		calls++
		return fmt.Errorf("attempt %d", calls)
	})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("attempt %d", calls)) {
		t.Errorf("Eventually = %v after %d calls, want the last attempt's error", err, calls)
	}
	if err := Eventually(time.Second, time.Millisecond, func() error { return nil }); err != nil {
		t.Errorf("Eventually with a condition that holds = %v", err)
	}
}

func TestEventuallyStopsAtAFinalError(t *testing.T) {
	calls := 0
	gone := errors.New("gone")
	err := Eventually(time.Minute, time.Millisecond, func() error {
		calls++
		if calls == 2 {
			return Final(gone)
		}
		return errors.New("not yet")
	})
	if !errors.Is(err, gone) || calls != 2 {
		t.Errorf("Eventually = %v after %d calls, want gone after 2", err, calls)
	}
}

// TestProcessOutputWithKeyFails: a process that prints a PEM private key fails the test, even when
// the armour is split across writes or dropped by the buffer's bounds.
func TestProcessOutputWithKeyFails(t *testing.T) {
	var b LogBuffer
	_, _ = b.Write([]byte("start\n-----BEGIN EC PRIVATE"))
	if b.SawKeyMaterial() {
		t.Fatal("half the armour counted")
	}
	_, _ = b.Write([]byte(" KEY-----\nMHcCAQEE\n"))
	if !b.SawKeyMaterial() {
		t.Fatal("armour split across two writes not seen")
	}
	r := &cleanupRecorder{TB: t}
	StartProcess(r, "leaky", exec.Command("sh", "-c", "echo '-----BEGIN PRIVATE KEY-----'"), ProcessOptions{StopTimeout: time.Second})
	time.Sleep(200 * time.Millisecond)
	r.runCleanups()
	if !r.Failed() || !strings.Contains(strings.Join(r.errors, "\n"), "private key") {
		t.Fatalf("a process printing a key did not fail the test: %v", r.errors)
	}
}
