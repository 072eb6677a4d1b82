package testkit

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// ProcessOptions say how a Process is owned: what the kernel does with it when the test binary
// dies, how it is stopped on cleanup and how its output reaches the test log.
type ProcessOptions struct {
	// StopTimeout is how long the process has after SIGTERM before it gets SIGKILL.
	StopTimeout time.Duration
	// Deathsig is the signal the process gets when the test binary dies; zero means SIGKILL.
	Deathsig syscall.Signal
	// KillOnStop makes the cleanup send SIGKILL at once, for a process whose graceful stop would
	// wait for clients that are still connected when its cleanup runs.
	KillOnStop bool
	// MustOutlive makes the cleanup fail the test when the process has exited on its own before it.
	MustOutlive bool
	// LogTail, when positive, limits the output logged on failure to its last LogTail bytes; zero
	// logs all that the LogBuffer kept.
	LogTail int
	// AfterStop, when set, runs in the cleanup once the process has ended and before its output is
	// logged, so that what it reports comes with the output.
	AfterStop func(testing.TB)
}

// Process is a child process owned by PID: its stdout and stderr are captured in Out, and it is
// stopped (bounded) on cleanup, after which its output is logged when the test failed.
type Process struct {
	// Name names the process in messages.
	Name string
	// Cmd is the started command; Cmd.Process.Pid is its PID.
	Cmd *exec.Cmd
	// Out holds what the process wrote.
	Out *LogBuffer

	opts   ProcessOptions
	exited chan struct{} // closed once the process has been reaped
}

// StartProcess starts cmd (stdout and stderr captured, opts.Deathsig set) and registers its stop
// as a cleanup: SIGTERM, then SIGKILL after opts.StopTimeout.
func StartProcess(t testing.TB, name string, cmd *exec.Cmd, opts ProcessOptions) *Process {
	t.Helper()
	p := &Process{Name: name, Cmd: cmd, Out: &LogBuffer{}, opts: opts, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = opts.Deathsig
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testkit: start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if p.Out.SawKeyMaterial() {
			t.Errorf("%s wrote a PEM private key to its output: keys must never reach a log", p.Name)
		}
		if opts.AfterStop != nil {
			opts.AfterStop(t)
		}
		if t.Failed() {
			p.logOutput(t)
		}
	})
	return p
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Done is closed once the process has ended and been reaped.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Kill sends SIGKILL and waits until the process has been reaped.
func (p *Process) Kill() error {
	if err := p.Cmd.Process.Kill(); err != nil && !p.Exited() {
		return fmt.Errorf("kill %s: %w", p.Name, err)
	}
	<-p.exited
	return nil
}

// stop ends the process (bounded) as its options say; it is idempotent.
func (p *Process) stop(t testing.TB) {
	if p.Exited() {
		if p.opts.MustOutlive {
			t.Errorf("%s exited before the test ended", p.Name)
		}
		return
	}
	if p.opts.KillOnStop {
		_ = p.Cmd.Process.Kill()
		<-p.exited
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(p.opts.StopTimeout):
		_ = p.Cmd.Process.Kill()
		<-p.exited
		t.Errorf("%s did not stop within %v of SIGTERM", p.Name, p.opts.StopTimeout)
	}
}

// logOutput writes the process's output (or its tail, as the options say) to the test log.
func (p *Process) logOutput(t testing.TB) {
	out := p.Out.String()
	if n := p.opts.LogTail; n > 0 {
		if len(out) > n {
			out = out[len(out)-n:]
		}
		t.Logf("%s log (tail):\n%s", p.Name, out)
		return
	}
	t.Logf("%s output:\n%s", p.Name, out)
}

// Eventually calls cond every interval until it returns nil or timeout has passed, and then returns
// its last error. An error wrapped by Final ends the wait at once.
func Eventually(timeout, interval time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		var final finalError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &final):
			return final.error
		case time.Now().After(deadline):
			return fmt.Errorf("not within %v: %w", timeout, err)
		}
		time.Sleep(interval)
	}
}

// Final marks err as one no further attempt can change (a process that exited), for Eventually.
func Final(err error) error { return finalError{err} }

type finalError struct{ error }

func (e finalError) Unwrap() error { return e.error }
