//go:build e2e

package framework

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of the child processes (etcd, kube-apiserver, backends).
const (
	stopTimeout = 15 * time.Second
	tailBytes   = 4000
)

// processOptions is how the framework owns its child processes: SIGKILL when the test binary dies,
// SIGTERM then SIGKILL after stopTimeout on cleanup, the log's tail written to the test log on failure.
func processOptions() testkit.ProcessOptions {
	return testkit.ProcessOptions{StopTimeout: stopTimeout, Deathsig: syscall.SIGKILL, LogTail: tailBytes}
}

// startProcess starts cmd as a child process owned by PID and stopped on cleanup (processOptions).
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *testkit.Process {
	t.Helper()
	return testkit.StartProcess(t, name, cmd, processOptions())
}

// freePorts returns n distinct free loopback ports.
func freePorts(t *testing.T, n int) []int { return testkit.ListenPorts(t, n) }

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

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
