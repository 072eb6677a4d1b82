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
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: the scenarios create network namespaces for their pods and need root: run `sudo make e2e`")
		return 1
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

// Router is `haroute run --kubeconfig …` as a child process, with the HAProxy it drives.
type Router struct {
	t                              *testing.T
	Dir                            string
	HTTPPort, HTTPSPort, StatsPort int
	Proc                           *Process
	Admin                          *socket.Admin
	Master                         *socket.Master
	Client                         *testbed.Client
	// HAProxy is the HAProxy the test started for a sidecar-style router (nil when managed).
	HAProxy *testbed.HAProxy
}

// StartRouter runs haroute against the cluster with the router's (RBAC-limited) kubeconfig and a
// managed HAProxy, and waits until /healthz/ready answers 200. env adds environment variables
// (NAME=value).
func (c *Cluster) StartRouter(t *testing.T, env ...string) *Router {
	t.Helper()
	r := c.newRouter(t)
	r.launch(c, env, "--managed-haproxy="+testbed.HAProxyBinary())
	return r
}

// StartRouterArgs is StartRouter with extra `haroute run` flags (they override the harness's own, e.g.
// "--reload-interval 5s" for OpenShift's default instead of the harness's 0s).
func (c *Cluster) StartRouterArgs(t *testing.T, args []string, env ...string) *Router {
	t.Helper()
	r := c.newRouter(t)
	r.launch(c, env, append([]string{"--managed-haproxy=" + testbed.HAProxyBinary()}, args...)...)
	return r
}

// StartSidecarRouter runs haroute the way a sidecar deployment does: `haroute run --once` writes the
// first configuration (the init container), the test starts HAProxy on it (`haproxy -W -S …`, the
// HAProxy container), then haroute runs with only the shared directory and its sockets.
func (c *Cluster) StartSidecarRouter(t *testing.T, env ...string) *Router {
	t.Helper()
	r := c.newRouter(t)
	ctx, cancel := context.WithTimeout(context.Background(), routerReadyTimeout)
	defer cancel()
	once := exec.CommandContext(ctx, haroute, append(r.args(c), "--once")...)
	once.Env = r.env(env)
	if out, err := once.CombinedOutput(); err != nil {
		t.Fatalf("haroute run --once: %v\n%s", err, out)
	}
	r.HAProxy = testbed.Start(t, r.Dir)
	r.launch(c, env)
	return r
}

func (c *Cluster) newRouter(t *testing.T) *Router {
	t.Helper()
	if haroute == "" {
		t.Fatal("haroute binary not built: call framework.Main from TestMain")
	}
	ports := freePorts(t, 3)
	// A short directory: unix socket paths are limited to 108 bytes.
	r := &Router{t: t, Dir: testbed.TempDir(t), HTTPPort: ports[0], HTTPSPort: ports[1], StatsPort: ports[2]}
	r.Admin = socket.NewAdmin(filepath.Join(r.Dir, "run", "haproxy.sock"), socket.Options{})
	r.Master = socket.NewMaster(filepath.Join(r.Dir, "run", "master.sock"), socket.Options{})
	r.Client = testbed.NewClient(t, r.HTTPPort, r.HTTPSPort, nil)
	return r
}

func (r *Router) args(c *Cluster) []string {
	return []string{"run",
		"--kubeconfig", c.Kubeconfig,
		"--haproxy-dir", r.Dir,
		"--bind-address", "127.0.0.1",
		"--http-port", strconv.Itoa(r.HTTPPort),
		"--https-port", strconv.Itoa(r.HTTPSPort),
		"--stats-port", strconv.Itoa(r.StatsPort),
		"--reload-interval", "0s",
	}
}

func (r *Router) env(extra []string) []string {
	return append(append(testbed.CleanEnv(), "ROUTER_MAX_CONNECTIONS=auto"), extra...)
}

// launch starts haroute run and waits until it is ready.
func (r *Router) launch(c *Cluster, env []string, extraArgs ...string) {
	t := r.t
	t.Helper()
	cmd := exec.Command(haroute, append(r.args(c), extraArgs...)...)
	cmd.Env = r.env(env)
	r.Proc = startProcess(t, "haroute", cmd)
	t.Cleanup(func() {
		// Before haroute stops (cleanups run last-in first-out): HAProxy's soft stop waits for open
		// connections, and a kept-alive passthrough connection would hold it to its bound.
		r.Client.CloseIdleConnections()
		if t.Failed() {
			t.Logf("show servers state:\n%s", r.serversDump())
		}
	})
	if err := eventually(routerReadyTimeout, waitInterval, r.ready); err != nil {
		t.Fatalf("haroute not ready: %v", err)
	}
}

// ready reports whether haroute answers 200 on /healthz/ready.
func (r *Router) ready() error {
	if r.Proc.Exited() {
		return fmt.Errorf("haroute exited")
	}
	hc := &http.Client{Timeout: time.Second}
	url := "http://127.0.0.1:" + strconv.Itoa(r.StatsPort) + "/healthz/ready"
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// ShowProc returns the master's `show proc`, retried (bounded): while HAProxy reloads or restarts its
// master socket refuses connections for a moment.
func (r *Router) ShowProc() socket.ProcState {
	r.t.Helper()
	var st socket.ProcState
	if err := eventually(WaitTimeout, waitInterval, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), socketTimeout)
		defer cancel()
		var err error
		st, err = r.Master.ShowProc(ctx)
		return err
	}); err != nil {
		r.t.Fatalf("show proc: %v", err)
	}
	return st
}

// Reloads returns the HAProxy master's reload counter.
func (r *Router) Reloads() int { return r.ShowProc().Master.Reloads }

// KillHAProxy SIGKILLs HAProxy's master and its workers and returns the master's PID.
func (r *Router) KillHAProxy() int {
	r.t.Helper()
	st := r.ShowProc()
	pids := []int{st.Master.PID}
	for _, w := range st.Workers {
		pids = append(pids, w.PID)
	}
	for _, pid := range pids {
		if pid <= 0 {
			r.t.Fatalf("show proc lists PID %d", pid)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
			r.t.Fatalf("kill %d: %v", pid, err)
		}
	}
	return st.Master.PID
}

// Get sends GET http://host/path through HAProxy and returns the status and the answering backend.
func (r *Router) Get(host, path string) (int, string, error) {
	resp, err := r.Client.Do(http.MethodGet, "http://"+host+path, nil)
	if err != nil {
		return 0, "", err
	}
	return resp.Status, resp.Backend, nil
}

// Do sends one request through HAProxy (http:// to its HTTP port, https:// to its HTTPS port with the
// URL's host as SNI; certificates are recorded, not verified).
func (r *Router) Do(method, url string) (*testbed.Response, error) {
	return r.Client.Do(method, url, nil)
}

// WaitResponse waits (bounded) until GET url gets a response for which check returns nil, and
// returns that response. Every attempt uses a new connection, so a TLS check sees the certificate
// served now, not the one a kept-alive connection got at its handshake.
func (r *Router) WaitResponse(url string, check func(*testbed.Response) error) *testbed.Response {
	r.t.Helper()
	var got *testbed.Response
	if err := eventually(WaitTimeout, waitInterval, func() error {
		if r.Proc.Exited() {
			return fmt.Errorf("haroute exited")
		}
		r.Client.CloseIdleConnections()
		resp, err := r.Do(http.MethodGet, url)
		if err != nil {
			return err
		}
		got = resp
		return check(resp)
	}); err != nil {
		r.t.Fatalf("GET %s: %v", url, err)
	}
	return got
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

// WaitBackends waits until requests to http://host/path have been answered by every backend in want
// (and by no other) within one bounded window.
func (r *Router) WaitBackends(host, path string, want ...string) {
	r.t.Helper()
	r.WaitBackendsURL("http://"+host+path, want...)
}

// WaitBackendsURL waits until GETs of url have been answered with 200 by every backend in want (and
// by no other) within one bounded window.
func (r *Router) WaitBackendsURL(url string, want ...string) {
	r.t.Helper()
	wantSet := strings.Join(sortedCopy(want), " ")
	if err := eventually(WaitTimeout, waitInterval, func() error {
		seen := map[string]bool{}
		for range 4 * len(want) {
			resp, err := r.Do(http.MethodGet, url)
			if err != nil {
				return err
			}
			if resp.Status != http.StatusOK {
				return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
			}
			seen[resp.Backend] = true
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
		r.t.Fatalf("GET %s: want answers from exactly %q: %v", url, wantSet, err)
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

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// WaitServers waits (bounded) until HAProxy's servers not in maintenance, over all backends, are
// exactly want ("ip:port"): the endpoints written have reached the runtime state.
func (r *Router) WaitServers(want []string) {
	r.t.Helper()
	wantSet := strings.Join(sortedCopy(want), " ")
	var got []string
	if err := eventually(WaitTimeout, 5*time.Millisecond, func() error {
		var err error
		if got, err = testbed.ActiveServers(r.Admin); err != nil {
			return err
		}
		if strings.Join(got, " ") != wantSet {
			return fmt.Errorf("active servers %v", got)
		}
		return nil
	}); err != nil {
		r.t.Fatalf("active servers did not become %v: %v", want, err)
	}
}

// Eventually polls cond (bounded by WaitTimeout) until it returns nil, and returns its last error.
func Eventually(cond func() error) error { return eventually(WaitTimeout, waitInterval, cond) }

// settle is how long WaitOneReload keeps watching after the reload, to see that no second one follows.
const settle = 1500 * time.Millisecond

// WaitOneReload waits (bounded) until HAProxy's reload counter rises above before, then checks that
// it rose by exactly one and stays there for a moment.
func (r *Router) WaitOneReload(before int) {
	r.t.Helper()
	if err := Eventually(func() error {
		if r.Reloads() == before {
			return fmt.Errorf("reload counter still %d", before)
		}
		return nil
	}); err != nil {
		r.t.Fatalf("no reload: %v", err)
	}
	time.Sleep(settle)
	if got := r.Reloads(); got != before+1 {
		r.t.Errorf("reload counter went from %d to %d, want exactly one reload", before, got)
	}
}
