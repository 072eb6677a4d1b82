//go:build e2e

package framework

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of the router helpers.
const (
	routerReadyTimeout = 60 * time.Second
	routerStopTimeout  = 15 * time.Second
	routerLogTail      = 4000
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

// ClusterRouter is `haroute run --kubeconfig …` against a Cluster, as a child process, with the
// HAProxy it drives. The process harness (ports, sockets, readiness, waits, stop) is
// testbed.RouterProcess.
type ClusterRouter struct {
	*testbed.RouterProcess
	// HAProxy is the HAProxy the test started for a sidecar-style router (nil when managed).
	HAProxy *testbed.HAProxy
}

// StartRouter runs haroute against the cluster with the router's (RBAC-limited) kubeconfig and a
// managed HAProxy, and waits until /healthz/ready answers 200. env adds environment variables
// (NAME=value).
func (c *Cluster) StartRouter(t *testing.T, env ...string) *ClusterRouter {
	t.Helper()
	r := c.newRouter(t)
	r.Start([]string{testbed.ManagedHAProxyFlag()}, env...)
	return r
}

// StartRouterArgs is StartRouter with extra `haroute run` flags (they override the harness's own, e.g.
// "--reload-interval 5s" for OpenShift's default instead of the harness's 0s).
func (c *Cluster) StartRouterArgs(t *testing.T, args []string, env ...string) *ClusterRouter {
	t.Helper()
	r := c.newRouter(t)
	r.Start(append([]string{testbed.ManagedHAProxyFlag()}, args...), env...)
	return r
}

// StartSidecarRouter runs haroute the way a sidecar deployment does: `haroute run --once` writes the
// first configuration (the init container), the test starts HAProxy on it (`haproxy -W -S …`, the
// HAProxy container), then haroute runs with only the shared directory and its sockets.
func (c *Cluster) StartSidecarRouter(t *testing.T, env ...string) *ClusterRouter {
	t.Helper()
	r := c.newRouter(t)
	r.StartSidecar(t, nil, env...)
	return r
}

// NewRouter prepares a router as StartRouter does, without starting it: its HAProxy directory and
// ports are known before the start, for an environment that names them (a master socket, a mounted
// file inside the HAProxy directory). Start it with Start([]string{testbed.ManagedHAProxyFlag()},
// env...) for a managed HAProxy, or with StartSidecar.
func (c *Cluster) NewRouter(t *testing.T) *ClusterRouter {
	t.Helper()
	return c.newRouter(t)
}

// StartSidecar starts a router from NewRouter the way StartSidecarRouter does: `haroute run --once`,
// then HAProxy started by the test on the files it wrote, then `haroute run`; args are extra flags of
// both runs.
func (r *ClusterRouter) StartSidecar(t *testing.T, args []string, env ...string) {
	t.Helper()
	r.RunOnce(args, env...)
	r.HAProxy = testbed.Start(t, r.Dir)
	r.Start(args, env...)
}

// newRouter prepares a router process with the cluster suite's flags, environment and bounds.
func (c *Cluster) newRouter(t *testing.T) *ClusterRouter {
	t.Helper()
	if haroute == "" {
		t.Fatal("haroute binary not built: call framework.Main from TestMain")
	}
	return &ClusterRouter{RouterProcess: testbed.NewRouterProcess(t, testbed.RouterProcessConfig{
		Binary: haroute,
		Source: []string{"--kubeconfig", c.Kubeconfig},
		Env:    []string{"ROUTER_MAX_CONNECTIONS=auto"},
		Bounds: testbed.RouterProcessBounds{
			Ready:    routerReadyTimeout,
			Apply:    WaitTimeout,
			Poll:     waitInterval,
			ShowProc: WaitTimeout,
			Socket:   socketTimeout,
		},
		Process: testkit.ProcessOptions{
			StopTimeout: routerStopTimeout,
			Deathsig:    syscall.SIGKILL,
			LogTail:     routerLogTail,
		},
	})}
}

// Eventually polls cond (bounded by WaitTimeout) until it returns nil, and returns its last error.
func Eventually(cond func() error) error { return testkit.Eventually(WaitTimeout, waitInterval, cond) }

// Inspect runs `haroute <args> --haproxy-dir <r's>` (an inspection command: state, diff, explain,
// doctor) and returns its standard output and exit status.
func (r *ClusterRouter) Inspect(t *testing.T, args ...string) ([]byte, int) {
	t.Helper()
	out, err := exec.Command(haroute, append(args, "--haproxy-dir", r.Dir)...).Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out, ee.ExitCode()
	case err != nil:
		t.Fatalf("haroute %v: %v", args, err)
	}
	return out, 0
}
