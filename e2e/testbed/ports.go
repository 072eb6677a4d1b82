package testbed

import (
	"net"
	"os"
	"testing"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago (listen on :0, close).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testbed: find a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatalf("testbed: release port %d: %v", port, err)
	}
	return port
}

// TempDir returns a new, short, absolute directory that is removed on cleanup. HAProxy directories
// hold unix sockets, whose paths may not exceed 107 bytes; t.TempDir() embeds the (sub)test name and
// can get too long for them.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "haroute-")
	if err != nil {
		t.Fatalf("testbed: temp dir: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("testbed: remove %s: %v", dir, err)
		}
	})
	return dir
}
