//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/runtime/socket"
)

// Bounds of the router helpers.
const (
	routerReadyTimeout = 60 * time.Second
	// WaitTimeout bounds every eventually-style check.
	WaitTimeout   = 20 * time.Second
	waitInterval  = 50 * time.Millisecond
	socketTimeout = 5 * time.Second
)

// haroute is the binary Main builds.
var haroute string

// Main is the TestMain of e2e packages: a re-executed backend serves and exits; otherwise haroute is
// built into a temporary directory, the tests run and the directory is removed.
func Main(m *testing.M) int {
	if asked, code := ServeBackendIfAsked(); asked {
		return code
	}
	path, remove, err := testbed.BuildHaroute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer remove()
	haroute = path
	return m.Run()
}

// Router is `haroute run --kubeconfig … --managed-haproxy` as a child process.
type Router struct {
	t                              *testing.T
	Dir                            string
	HTTPPort, HTTPSPort, StatsPort int
	Proc                           *Process
	Admin                          *socket.Admin
	Client                         *testbed.Client
}

// StartRouter runs haroute against the cluster with the router's (RBAC-limited) kubeconfig and waits
// until /healthz/ready answers 200. env adds environment variables (NAME=value).
func (c *Cluster) StartRouter(t *testing.T, env ...string) *Router {
	t.Helper()
	if haroute == "" {
		t.Fatal("haroute binary not built: call framework.Main from TestMain")
	}
	ports := freePorts(t, 3)
	r := &Router{t: t, Dir: filepath.Join(t.TempDir(), "haproxy"), HTTPPort: ports[0], HTTPSPort: ports[1], StatsPort: ports[2]}
	cmd := exec.Command(haroute, "run",
		"--kubeconfig", c.Kubeconfig,
		"--managed-haproxy="+testbed.HAProxyBinary,
		"--haproxy-dir", r.Dir,
		"--bind-address", "127.0.0.1",
		"--http-port", strconv.Itoa(r.HTTPPort),
		"--https-port", strconv.Itoa(r.HTTPSPort),
		"--stats-port", strconv.Itoa(r.StatsPort),
		"--reload-interval", "0s",
	)
	cmd.Env = append(append(cleanEnv(), "ROUTER_MAX_CONNECTIONS=auto"), env...)
	r.Proc = startProcess(t, "haroute", cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("show servers state:\n%s", r.serversDump())
		}
	})
	r.Admin = socket.NewAdmin(filepath.Join(r.Dir, "run", "haproxy.sock"), socket.Options{})
	r.Client = testbed.NewClient(t, r.HTTPPort, r.HTTPSPort, nil)
	hc := &http.Client{Timeout: time.Second}
	url := "http://127.0.0.1:" + strconv.Itoa(r.StatsPort) + "/healthz/ready"
	if err := eventually(routerReadyTimeout, waitInterval, func() error {
		if r.Proc.Exited() {
			return fmt.Errorf("haroute exited")
		}
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	}); err != nil {
		t.Fatalf("haroute not ready: %v", err)
	}
	return r
}

// cleanEnv is the test's environment without router settings that would change the run.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "ROUTER_") || name == "RELOAD_INTERVAL" || name == "STATS_PORT" ||
			name == "KUBECONFIG" || strings.HasPrefix(name, "HAROUTE_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Get sends GET http://host/path through HAProxy and returns the status and the answering backend.
func (r *Router) Get(host, path string) (int, string, error) {
	resp, err := r.Client.Do(http.MethodGet, "http://"+host+path, nil)
	if err != nil {
		return 0, "", err
	}
	return resp.Status, resp.Backend, nil
}

// WaitAnswer waits (bounded) until GET host/path answers status from backend ("" for HAProxy itself).
func (r *Router) WaitAnswer(host, path string, status int, backend string) {
	r.t.Helper()
	if err := eventually(WaitTimeout, waitInterval, func() error {
		if r.Proc.Exited() {
			return fmt.Errorf("haroute exited")
		}
		code, be, err := r.Get(host, path)
		if err != nil {
			return err
		}
		if code != status || be != backend {
			return fmt.Errorf("answer %d from %q", code, be)
		}
		return nil
	}); err != nil {
		r.t.Fatalf("GET %s%s: want %d from %q: %v", host, path, status, backend, err)
	}
}

// WaitBackends waits until requests to host/path have been answered by every backend in want (and by
// no other) within one bounded window, returning the backends seen.
func (r *Router) WaitBackends(host, path string, want ...string) {
	r.t.Helper()
	wantSet := strings.Join(sortedCopy(want), " ")
	if err := eventually(WaitTimeout, waitInterval, func() error {
		seen := map[string]bool{}
		for range 4 * len(want) {
			code, be, err := r.Get(host, path)
			if err != nil {
				return err
			}
			if code != http.StatusOK {
				return fmt.Errorf("answer %d from %q", code, be)
			}
			seen[be] = true
		}
		var got []string
		for be := range seen {
			got = append(got, be)
		}
		if s := strings.Join(sortedCopy(got), " "); s != wantSet {
			return fmt.Errorf("backends seen %q", s)
		}
		return nil
	}); err != nil {
		r.t.Fatalf("GET %s%s: want answers from exactly %q: %v", host, path, wantSet, err)
	}
}

// serversDump returns show servers state as text (or the error).
func (r *Router) serversDump() string {
	ctx, cancel := context.WithTimeout(context.Background(), socketTimeout)
	defer cancel()
	states, err := socket.ShowServersState(ctx, r.Admin, "")
	if err != nil {
		return "show servers state: " + err.Error()
	}
	var b strings.Builder
	for _, s := range states {
		fmt.Fprintf(&b, "%s/%s %s:%d op=%d admin=%#x weight=%d\n", s.Backend, s.Server, s.Addr, s.Port, s.OpState, s.AdminState, s.UserWeight)
	}
	return b.String()
}

// Stop sends SIGTERM to haroute and waits (bounded).
func (r *Router) Stop() {
	if !r.Proc.Exited() {
		_ = r.Proc.Cmd.Process.Signal(syscall.SIGTERM)
	}
	r.Proc.stop(r.t)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
