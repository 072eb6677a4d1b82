//go:build e2e

package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
)

// Bounds of the harness.
const (
	stopTimeout = 15 * time.Second
	tailBytes   = 4000
)

// Process is a child process owned by PID.
type Process struct {
	t    *testing.T
	Name string
	Cmd  *exec.Cmd
	Out  *testbed.LogBuffer
	// kill makes stop send SIGKILL at once (for a process whose cleanup may run while clients it
	// would wait for still run).
	kill   bool
	exited chan struct{}
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

// startProcess starts cmd (stdout and stderr captured) and stops it on cleanup: SIGTERM, then SIGKILL
// after stopTimeout. On failure the log's tail is written to the test log.
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{t: t, Name: name, Cmd: cmd, Out: &testbed.LogBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", name, tail(p.Out.String(), tailBytes))
		}
	})
	return p
}

// stop ends the process (bounded); it is idempotent.
func (p *Process) stop(t *testing.T) {
	if p.Exited() {
		return
	}
	if p.kill {
		_ = p.Cmd.Process.Kill()
		<-p.exited
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.Cmd.Process.Kill()
		<-p.exited
		t.Errorf("%s did not stop within %v of SIGTERM", p.Name, stopTimeout)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// freePorts returns n distinct free loopback ports.
func freePorts(t *testing.T, n int) []int { return testbed.ListenPorts(t, n) }

// binDir is where `make e2e-bin` puts etcd and kube-apiserver; HAROUTE_E2E_BIN overrides it.
func binDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HAROUTE_E2E_BIN")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatalf("bin dir: %v", err)
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(abs, name)); err != nil {
			t.Fatalf("%s missing (run `make e2e-bin` at the repository root): %v", name, err)
		}
	}
	return abs
}

// eventually polls cond every interval until it returns nil or timeout passes; it returns the last error.
func eventually(timeout, interval time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v: %w", timeout, err)
		}
		time.Sleep(interval)
	}
}
