package testkit

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// FreePort returns one port as ListenPorts does; for several ports, call ListenPorts, which makes
// them distinct.
func FreePort(t testing.TB) int {
	t.Helper()
	return ListenPorts(t, 1)[0]
}

// TempDir returns a new, short, absolute directory that is removed on cleanup. HAProxy directories
// hold unix sockets, whose paths may not exceed 107 bytes; t.TempDir() embeds the (sub)test name and
// can get too long for them.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "haroute-")
	if err != nil {
		t.Fatalf("testkit: temp dir: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("testkit: remove %s: %v", dir, err)
		}
	})
	return dir
}

// Bounds of ListenPorts: below Linux's default ephemeral range (32768–60999), so an outgoing
// connection cannot take a port between the probe and the server's bind.
const (
	lowPortMin      = 20000
	lowPortMax      = 32000
	lowPortAttempts = 200
)

// ListenPorts returns n distinct ports in [20000, 32000) that were free on 127.0.0.1 a moment ago,
// for servers a test starts as child processes (haroute, HAProxy, kube-apiserver, etcd), and
// reserves them until t's cleanups run.
//
// The reservation is a lock (flock) on a file per port in portLockDir(), which every test process of
// the repository takes before it hands a port out: go test runs packages in parallel, and a probe
// cannot see a port another package probed but whose server has not bound it yet. HAProxy binds
// with SO_REUSEPORT, so two of them on one port would not fail but share the connections: a test
// would meet the other test's HAProxy. The kernel drops the lock of a process that dies.
func ListenPorts(t testing.TB, n int) []int {
	t.Helper()
	taken := map[int]bool{}
	out := make([]int, 0, n)
	for range lowPortAttempts {
		if len(out) == n {
			break
		}
		p := lowPortMin + rand.IntN(lowPortMax-lowPortMin)
		if taken[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		if err := l.Close(); err != nil {
			t.Fatalf("testkit: release port %d: %v", p, err)
		}
		taken[p] = true
		if !reservePort(t, p) {
			continue
		}
		out = append(out, p)
	}
	if len(out) < n {
		t.Fatalf("testkit: only %d of %d free ports in %d-%d after %d attempts", len(out), n, lowPortMin, lowPortMax, lowPortAttempts)
	}
	return out
}

// CleanEnv is the test process's environment without the router settings (ROUTER_*, HAROUTE_*,
// RELOAD_INTERVAL, STATS_PORT, TEMPLATE_FILE, DEFAULT_CERTIFICATE_PATH, KUBECONFIG) that would change
// a haroute child's run.
func CleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "ROUTER_") || strings.HasPrefix(name, "HAROUTE_") || name == "RELOAD_INTERVAL" ||
			name == "STATS_PORT" || name == "TEMPLATE_FILE" || name == "DEFAULT_CERTIFICATE_PATH" || name == "KUBECONFIG" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// ReadFile returns the content of path, failing the test when it cannot be read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return string(b)
}

// FileMode returns the permission bits of path, failing the test when it cannot be read.
func FileMode(t testing.TB, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return st.Mode().Perm()
}

// portLockDir returns the directory of the files ListenPorts locks, one per port handed out.
func portLockDir() string { return filepath.Join(os.TempDir(), "haroute-test-ports") }

// reservePort takes the lock of port p until t's cleanups run; false when another test (of this
// process or another) holds it.
func reservePort(t testing.TB, p int) bool {
	t.Helper()
	dir := portLockDir()
	// Shared by every user's tests (ports are too), like /tmp: anyone creates files, a lock file is
	// readable by all, and a read-only descriptor takes the lock.
	if err := os.Mkdir(dir, 0o755); err == nil {
		if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
			t.Fatalf("testkit: port locks: %v", err)
		}
	} else if !errors.Is(err, os.ErrExist) {
		t.Fatalf("testkit: port locks: %v", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatalf("testkit: port lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false
		}
		t.Fatalf("testkit: lock port %d: %v", p, err)
	}
	// Closing the file drops the lock; the file stays for the next test.
	t.Cleanup(func() { _ = f.Close() })
	return true
}
