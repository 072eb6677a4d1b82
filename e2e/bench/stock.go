//go:build e2e

package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// StockEnv names the environment variable that holds the stock router's build directory, the output
// of tools/build-stock-router.sh.
const StockEnv = "HAROUTE_BENCH_STOCK"

// Defaults and bounds of a stock router run.
const (
	DefaultStockName           = "stock"
	DefaultStockReloadInterval = 5 * time.Second // OpenShift's RELOAD_INTERVAL default
	DefaultStockReadyTimeout   = 3 * time.Minute
	stockPoll                  = 100 * time.Millisecond
	stockStopTimeout           = 10 * time.Second
	stockLogTail               = 8000
	probeTimeout               = 2 * time.Second
	// stockPath is the PATH of the router and its reload script (mount, curl, pidof, date, seq).
	stockPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// stockWrapper runs as PID 1 of the router's new PID and mount namespaces (the process is cloned into
// both), makes the namespace's mounts private, mounts the router's home on /var/lib/haproxy, a /proc
// of its own (the reload script's `pidof haproxy` then sees this router's HAProxy only) and, when the
// benchmark's HAProxy is not the one the reload script runs (scriptHAProxy), that binary on it; then
// it becomes the router. $1 is the home, $2 the HAProxy binary, $3 the path the reload script runs,
// the rest the router's command.
const stockWrapper = `set -eu
home=$1 haproxy=$2 script=$3
shift 3
mount --make-rprivate /
mount --bind "$home" ` + haproxyHome + `
mount -t proc proc /proc
if [ "$haproxy" != "$script" ]; then mount --bind "$haproxy" "$script"; fi
cd ` + haproxyHome + `/conf
exec "$@"`

// StockOptions say how a stock router runs.
type StockOptions struct {
	// Build is the directory tools/build-stock-router.sh wrote; empty means $HAROUTE_BENCH_STOCK.
	Build string
	// HTTPPort, HTTPSPort and StatsPort are its ports on 127.0.0.1 (ROUTER_SERVICE_HTTP_PORT,
	// ROUTER_SERVICE_HTTPS_PORT, STATS_PORT and ROUTER_LISTEN_ADDR); zero picks free ones.
	HTTPPort, HTTPSPort, StatsPort int
	// ReloadInterval is RELOAD_INTERVAL; zero means OpenShift's default, 5s.
	ReloadInterval time.Duration
	// Name is the router's name in Route status (--name); empty means "stock".
	Name string
	// HAProxy is the HAProxy binary, mounted in its namespace on the path its reload script runs
	// (scriptHAProxy); empty means HAProxy(t), the benchmark's.
	HAProxy string
	// ReadyTimeout bounds the wait for the router to serve; zero means DefaultStockReadyTimeout.
	ReadyTimeout time.Duration
	// Env adds environment variables (NAME=value) after the harness's own, which they override.
	Env []string

	// script is the HAProxy path the reload script runs (scriptHAProxy), set by stockDefaults.
	script string
}

// StockRouter is a running stock OpenShift router, the HAProxy it drives with its reload script, and
// a client for its ports.
type StockRouter struct {
	// Name is its name in Route status.
	Name string
	// Home is the directory mounted on /var/lib/haproxy in its namespace (conf/haproxy.config, run/…).
	Home string
	// HTTPPort, HTTPSPort and StatsPort are its ports on 127.0.0.1.
	HTTPPort, HTTPSPort, StatsPort int
	// Client sends requests to its HTTP and HTTPS ports.
	Client *testkit.Client
	// Proc is the router process: PID 1 of its PID namespace, so that HAProxy dies with it.
	Proc *testkit.Process
	// Started is when the process was started; Served when it first answered /healthz/ready.
	Started, Served time.Time
	// Commit is the source commit of the build.
	Commit string

	t                    testing.TB
	mountNS              string
	statsUser, statsPass string
}

// StartStockRouter runs the stock router against c with an admin kubeconfig and waits (bounded)
// until it serves: /healthz/ready on its stats port answers 200 (the routes are synced and HAProxy
// answers), HAProxy's pid file exists and its first reload has ended. dir is its home, mounted on
// /var/lib/haproxy; empty means a new temporary directory. The router is killed on cleanup, and
// HAProxy with it.
func StartStockRouter(t *testing.T, c *framework.Cluster, dir string, opts StockOptions) *StockRouter {
	t.Helper()
	opts = stockDefaults(t, opts)
	if dir == "" {
		dir = testkit.TempDir(t)
	}
	if err := prepareStockHome(opts.Build, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(haproxyHome, 0o755); err != nil {
		t.Fatalf("stock router: mount point: %v", err)
	}
	r := &StockRouter{
		Name: opts.Name, Home: dir, HTTPPort: opts.HTTPPort, HTTPSPort: opts.HTTPSPort, StatsPort: opts.StatsPort,
		Client: testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, nil),
		Commit: buildCommit(opts.Build), t: t, statsUser: "bench", statsPass: randomHex(),
	}
	kubeconfig := writeAdminKubeconfig(t, c, testkit.TempDir(t))
	args := []string{"-c", stockWrapper, "stock-router", dir, opts.HAProxy, opts.script,
		filepath.Join(opts.Build, stockBinary), "--name=" + opts.Name, "--v=2"}
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = append(append(testkit.CleanEnv(), r.env(opts, kubeconfig)...), opts.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID}
	r.Started = time.Now()
	// KillOnStop: SIGKILL of the namespace's PID 1 takes every HAProxy of the router with it, while a
	// graceful stop would first wait ROUTER_GRACEFUL_SHUTDOWN_DELAY (45s) for load balancers.
	r.Proc = testkit.StartProcess(t, "openshift-router ("+opts.Name+")", cmd, testkit.ProcessOptions{
		StopTimeout: stockStopTimeout, Deathsig: syscall.SIGKILL, KillOnStop: true, LogTail: stockLogTail,
	})
	t.Cleanup(r.Client.CloseIdleConnections)
	var err error
	if r.mountNS, err = MountNS(r.PID()); err != nil {
		t.Fatalf("stock router: %v", err)
	}
	if self, _ := MountNS(os.Getpid()); self == r.mountNS {
		t.Fatalf("stock router: runs in the test's mount namespace %s", self)
	}
	r.waitServing(opts.ReadyTimeout)
	t.Logf("stock router %q (commit %s, pid %d): serves on 127.0.0.1:%d/%d after %v", r.Name, r.Commit, r.PID(),
		r.HTTPPort, r.HTTPSPort, r.Served.Sub(r.Started).Round(time.Millisecond))
	return r
}

// stockDefaults fills the zero fields of opts.
func stockDefaults(t *testing.T, opts StockOptions) StockOptions {
	t.Helper()
	if opts.Build == "" {
		opts.Build = os.Getenv(StockEnv)
	}
	if err := checkStockBuild(opts.Build); err != nil {
		t.Fatal(err)
	}
	if opts.Name == "" {
		opts.Name = DefaultStockName
	}
	if opts.ReloadInterval == 0 {
		opts.ReloadInterval = DefaultStockReloadInterval
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = DefaultStockReadyTimeout
	}
	if opts.HAProxy == "" {
		opts.HAProxy = HAProxy(t)
	}
	abs, err := filepath.Abs(opts.HAProxy)
	if err != nil {
		t.Fatalf("stock router: HAProxy %s: %v", opts.HAProxy, err)
	}
	opts.HAProxy = abs
	// The stock router's reload script runs the HAProxy its own text names; the benchmark mounts the
	// selected binary ($HAROUTE_HAPROXY) on that path when they differ.
	if opts.script, err = scriptHAProxy(opts.Build); err != nil {
		t.Fatal(err)
	}
	if a, b := stat(opts.HAProxy), stat(opts.script); a != nil && b != nil && os.SameFile(a, b) {
		opts.HAProxy = opts.script
	} else if b == nil {
		t.Fatalf("stock router: its reload script runs %s, which is missing (the benchmark mounts %s on it)", opts.script, opts.HAProxy)
	}
	ports := testkit.ListenPorts(t, 3)
	for i, p := range []*int{&opts.HTTPPort, &opts.HTTPSPort, &opts.StatsPort} {
		if *p == 0 {
			*p = ports[i]
		}
	}
	return opts
}

func stat(path string) os.FileInfo {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return fi
}

// env is the router's environment: the paths of the router image, its ports on 127.0.0.1, the
// production deployment's metrics listener (ROUTER_METRICS_TYPE=haproxy on the stats port, which
// serves /healthz/ready and, with the stats credentials, /metrics).
func (r *StockRouter) env(opts StockOptions, kubeconfig string) []string {
	return []string{
		"PATH=" + stockPath,
		"KUBECONFIG=" + kubeconfig,
		"TEMPLATE_FILE=" + haproxyHome + "/conf/" + stockTemplate,
		"RELOAD_SCRIPT=" + haproxyHome + "/" + stockReload,
		"ROUTER_SERVICE_HTTP_PORT=" + strconv.Itoa(r.HTTPPort),
		"ROUTER_SERVICE_HTTPS_PORT=" + strconv.Itoa(r.HTTPSPort),
		"STATS_PORT=" + strconv.Itoa(r.StatsPort),
		"ROUTER_LISTEN_ADDR=127.0.0.1:" + strconv.Itoa(r.StatsPort),
		"ROUTER_METRICS_TYPE=haproxy",
		"STATS_USERNAME=" + r.statsUser,
		"STATS_PASSWORD=" + r.statsPass,
		"RELOAD_INTERVAL=" + opts.ReloadInterval.String(),
	}
}

// waitServing waits until /healthz/ready answers 200, run/haproxy.pid exists and the first run of
// the reload script has ended, then checks that the rendered configuration binds loopback only.
func (r *StockRouter) waitServing(timeout time.Duration) {
	r.t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(r.StatsPort) + "/healthz/ready"
	hc := &http.Client{Timeout: probeTimeout}
	pidFile := filepath.Join(r.Home, "run", "haproxy.pid")
	err := testkit.Eventually(timeout, stockPoll, func() error {
		if r.Proc.Exited() {
			return testkit.Final(fmt.Errorf("%s exited", r.Proc.Name))
		}
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		if _, err := os.Stat(pidFile); err != nil {
			return fmt.Errorf("no HAProxy pid file: %w", err)
		}
		// HAProxy may answer before the reload script has finished (it checks HAProxy last).
		if n, err := r.reloads(); err != nil || n < 1 {
			return fmt.Errorf("first reload not finished: %d reloads (%v)", n, err)
		}
		return nil
	})
	if err != nil {
		// The harness logs the output's tail on cleanup; its start says how the router came up.
		out := r.Proc.Out.String()
		r.t.Fatalf("stock router does not serve: %v\nrouter output (head):\n%s", err, out[:min(len(out), stockLogTail)])
	}
	r.Served = time.Now()
	if err := checkLoopbackBinds(r.ConfigPath()); err != nil {
		r.t.Fatal(err)
	}
}

// PID returns the router process's PID (in the test's PID namespace).
func (r *StockRouter) PID() int { return r.Proc.Cmd.Process.Pid }

// ConfigPath returns the HAProxy configuration the router last wrote.
func (r *StockRouter) ConfigPath() string { return filepath.Join(r.Home, "conf", "haproxy.config") }

// HAProxyPIDs returns every HAProxy process this router started that still runs, sorted: the
// processes of its mount namespace whose executable is HAProxy. The reload script daemonizes HAProxy,
// so HAProxy is no child of the router, and a process of an older configuration lives on after a
// reload until its connections end.
func (r *StockRouter) HAProxyPIDs() []int {
	r.t.Helper()
	pids, err := HAProxyInMountNS(r.mountNS)
	if err != nil {
		r.t.Fatalf("stock router's HAProxy processes: %v", err)
	}
	return pids
}

// Get sends GET http://host/path to the router's HTTP port and returns the status and the answering
// backend ("" when HAProxy answered itself).
func (r *StockRouter) Get(host, path string) (int, string, error) {
	resp, err := r.Client.Do(http.MethodGet, "http://"+host+path, nil)
	if err != nil {
		return 0, "", err
	}
	return resp.Status, resp.Backend, nil
}

// Stop kills the router, and with it (PID 1 of their namespace) every HAProxy it started, and waits
// (bounded) until none is left.
func (r *StockRouter) Stop() {
	r.t.Helper()
	if err := r.Proc.Kill(); err != nil {
		r.t.Fatalf("stop stock router: %v", err)
	}
	if err := testkit.Eventually(stockStopTimeout, stockPoll, func() error {
		if pids := r.HAProxyPIDs(); len(pids) > 0 {
			return fmt.Errorf("HAProxy processes %v still run", pids)
		}
		return nil
	}); err != nil {
		r.t.Fatalf("stop stock router: %v", err)
	}
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}
