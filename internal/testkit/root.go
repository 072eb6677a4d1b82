package testkit

import (
	"os"
	"testing"
)

// NeedsRoot marks a test that needs root (mount or network namespaces, privileged ports, files
// root owns): under -short (the quick lane, `make quick`, which any user runs) it is skipped, saying
// why; otherwise a run without root fails it at once with that reason, rather than later with an
// obscure error.
func NeedsRoot(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs root (%s): skipped in short mode", why)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("needs root (%s): run as root, or with -short to skip", why)
	}
}
