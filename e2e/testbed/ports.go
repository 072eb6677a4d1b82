package testbed

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
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
		t.Fatalf("testbed: temp dir: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("testbed: remove %s: %v", dir, err)
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
// for servers a test starts as child processes (haroute, HAProxy, kube-apiserver, etcd).
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
			t.Fatalf("testbed: release port %d: %v", p, err)
		}
		taken[p] = true
		out = append(out, p)
	}
	if len(out) < n {
		t.Fatalf("testbed: only %d of %d free ports in %d-%d after %d attempts", len(out), n, lowPortMin, lowPortMax, lowPortAttempts)
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
		t.Fatalf("testbed: %v", err)
	}
	return string(b)
}

// FileMode returns the permission bits of path, failing the test when it cannot be read.
func FileMode(t testing.TB, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("testbed: %v", err)
	}
	return st.Mode().Perm()
}
