package run

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

// Bounds of the harness.
const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 20 * time.Second
	applyTimeout = 10 * time.Second
	pollEvery    = 5 * time.Millisecond
	procRetryFor = 5 * time.Second
)

// binary is the haroute binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	path, remove, err := testbed.BuildHaroute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/run:", err)
		return 1
	}
	defer remove()
	binary = path
	return m.Run()
}

// router is `haroute run --manifests … --managed-haproxy` running as a child process.
type router struct {
	t                              *testing.T
	manifests, haproxyDir          string
	httpPort, httpsPort, statsPort int
	cmd                            *exec.Cmd
	out                            *testbed.LogBuffer
	exited                         chan struct{}
	master                         *socket.Master
	admin                          *socket.Admin
	client                         *testbed.Client
	// masters are the HAProxy master PIDs seen, checked to be gone after the router stopped.
	masters []int
}

// startRouter writes files (name → content) into a new manifest folder, runs haroute on it and waits
// until it reports ready.
func startRouter(t *testing.T, files map[string]string) *router {
	t.Helper()
	dir := testbed.TempDir(t)
	r := &router{
		t:          t,
		manifests:  filepath.Join(dir, "m"),
		haproxyDir: filepath.Join(dir, "h"),
		out:        &testbed.LogBuffer{},
		exited:     make(chan struct{}),
	}
	if err := os.MkdirAll(r.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		r.write(name, data)
	}
	ports := testbed.ListenPorts(t, 3)
	r.httpPort, r.httpsPort, r.statsPort = ports[0], ports[1], ports[2]
	r.cmd = exec.Command(binary, "run",
		"--manifests", r.manifests,
		"--haproxy-dir", r.haproxyDir,
		"--managed-haproxy="+testbed.HAProxyBinary(),
		"--bind-address", "127.0.0.1",
		"--http-port", strconv.Itoa(r.httpPort),
		"--https-port", strconv.Itoa(r.httpsPort),
		"--stats-port", strconv.Itoa(r.statsPort),
		"--allow-loopback-endpoints",
		"--reload-interval", "0s",
	)
	r.cmd.Env = append(testbed.CleanEnv(), "ROUTER_MAX_CONNECTIONS=2000")
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start haroute: %v", err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(r.stop)
	r.master = socket.NewMaster(filepath.Join(r.haproxyDir, "run", "master.sock"), socket.Options{})
	r.admin = socket.NewAdmin(filepath.Join(r.haproxyDir, "run", "haproxy.sock"), socket.Options{})
	r.client = testbed.NewClient(t, r.httpPort, r.httpsPort, nil)
	r.waitHTTP("/healthz/ready", http.StatusOK, readyTimeout)
	r.masters = append(r.masters, r.proc().Master.PID)
	return r
}

// Ports the routers listen on come from below Linux's default ephemeral range (32768-60999): a port

// stop sends SIGTERM, waits (bounded) and checks that the managed HAProxy is gone too.
func (r *router) stop() {
	t := r.t
	select {
	case <-r.exited:
		t.Errorf("haroute exited before the test ended")
	default:
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(stopTimeout):
			_ = r.cmd.Process.Kill()
			<-r.exited
			t.Errorf("haroute did not stop within %v of SIGTERM", stopTimeout)
		}
	}
	for _, pid := range r.masters {
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			t.Errorf("HAProxy master %d still runs after haroute stopped", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if t.Failed() {
		t.Logf("haroute output:\n%s", r.out.String())
	}
}

// write replaces a manifest file atomically (the watcher never sees half a file).
func (r *router) write(name, data string) {
	r.t.Helper()
	path := filepath.Join(r.manifests, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		r.t.Fatal(err)
	}
}

// remove deletes a manifest file.
func (r *router) remove(name string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.manifests, name)); err != nil {
		r.t.Fatal(err)
	}
}

// waitHTTP polls a stats path until it answers want (or the router exits, or time runs out).
func (r *router) waitHTTP(path string, want int, timeout time.Duration) {
	r.t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(r.statsPort) + path
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-r.exited:
			r.t.Fatalf("haroute exited while waiting for %s", path)
		default:
		}
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("%s did not answer %d within %v (last: %s)", path, want, timeout, last)
}

// proc returns the master's show proc, retried for a few seconds: while HAProxy reloads, the master
// re-executes itself and its socket refuses or drops connections for a moment.
func (r *router) proc() socket.ProcState {
	r.t.Helper()
	deadline := time.Now().Add(procRetryFor)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := r.master.ShowProc(ctx)
		cancel()
		if err == nil {
			return st
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("show proc: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reloads returns the master's reload counter.
func (r *router) reloads() int { return r.proc().Master.Reloads }

// activeServers returns "ip:port" of every server HAProxy has not put in maintenance, sorted.
func (r *router) activeServers() ([]string, error) { return testbed.ActiveServers(r.admin) }

// waitServers waits until the active servers are exactly want (ip:port).
func (r *router) waitServers(want []string) {
	r.t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	deadline := time.Now().Add(applyTimeout)
	var got []string
	var err error
	for time.Now().Before(deadline) {
		if got, err = r.activeServers(); err == nil && strings.Join(got, " ") == strings.Join(want, " ") {
			return
		}
		time.Sleep(pollEvery)
	}
	r.t.Fatalf("active servers did not become %v within %v: %v (%v)", want, applyTimeout, got, err)
}

// get sends one GET for host and returns the status and the answering backend.
func (r *router) get(host string) (int, string, error) {
	resp, err := r.client.Do(http.MethodGet, "http://"+host+"/", nil)
	if err != nil {
		return 0, "", err
	}
	return resp.Status, resp.Backend, nil
}

// waitAnswer polls host until it answers status from backend (backend "" for HAProxy itself) and
// returns when that first happened.
func (r *router) waitAnswer(host string, status int, backend string) time.Time {
	r.t.Helper()
	deadline := time.Now().Add(applyTimeout)
	var last string
	for time.Now().Before(deadline) {
		code, be, err := r.get(host)
		if err == nil && code == status && be == backend {
			return time.Now()
		}
		last = fmt.Sprintf("%d %q %v", code, be, err)
		time.Sleep(pollEvery)
	}
	r.t.Fatalf("%s did not answer %d from %q within %v (last: %s)", host, status, backend, applyTimeout, last)
	return time.Time{}
}

// backendYAML returns a Service named svc with one EndpointSlice per backend (port name http).
func serviceYAML(svc string, backends []*testbed.Backend) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: %s, namespace: e2e}
spec:
  ports: [{name: http, port: 80, targetPort: http}]
`, svc)
	for _, be := range backends {
		fmt.Fprintf(&b, `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %s-%s-%d
  namespace: e2e
  labels: {kubernetes.io/service-name: %s}
addressType: IPv4
ports: [{name: http, port: %d, protocol: TCP}]
endpoints:
- addresses: [%q]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: e2e, name: %s}
`, svc, strings.ReplaceAll(be.IP, ".", "-"), be.Port, svc, be.Port, be.IP, be.Name)
	}
	return b.String()
}

// routeYAML returns a Route name for host to Service svc, with annotations (key: value pairs).
func routeYAML(name, host, svc string, annotations ...string) string {
	var ann string
	if len(annotations) > 0 {
		ann = "\n  annotations:"
		for i := 0; i+1 < len(annotations); i += 2 {
			ann += fmt.Sprintf("\n    %s: %q", annotations[i], annotations[i+1])
		}
	}
	return fmt.Sprintf(`apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: %s
  namespace: e2e%s
spec:
  host: %s
  to: {kind: Service, name: %s}
  port: {targetPort: http}
`, name, ann, host, svc)
}

// addrs returns the backends' "ip:port".
func addrs(bs []*testbed.Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Addr()
	}
	return out
}

// percentiles returns the p50 and p99 of ds (nearest rank).
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return rank(0.50), rank(0.99)
}

// logLatency logs p50/p99 of an event → applied latency series.
func logLatency(t *testing.T, what string, ds []time.Duration) {
	t.Helper()
	p50, p99 := percentiles(ds)
	t.Logf("event → applied latency, %s: n=%d p50=%v p99=%v", what, len(ds), p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond))
}
