package run

import (
	"strings"
	"syscall"
	"testing"
)

// containsLine reports whether text has a line that is want once trimmed.
func containsLine(text, want string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// killPID sends SIGKILL to a process this test's router started (found through its master socket).
func killPID(t *testing.T, pid int) {
	t.Helper()
	if pid <= 0 {
		t.Fatalf("no PID to kill")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
}
