package testbed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/socket"
)

// Fixed paces of a RouterProcess's waits (the bounds are the suite's, in RouterProcessBounds).
const (
	readyPoll     = 50 * time.Millisecond // how often /healthz/ready (or another stats path) is asked
	probeTimeout  = time.Second           // one request to the stats port
	showProcPoll  = 20 * time.Millisecond // the pause between two `show proc` attempts
	serversPoll   = 5 * time.Millisecond  // how often WaitServers reads the servers' state
	reloadSettle  = 1500 * time.Millisecond
	backendsTries = 4 // WaitBackendsURL sends this many requests per wanted backend and attempt
)

// RouterProcessBounds bound the waits of a RouterProcess; every suite that runs haroute sets its own.
type RouterProcessBounds struct {
	// Ready bounds the wait for /healthz/ready to answer 200 after the start, and `haroute run --once`.
	Ready time.Duration
	// Apply bounds the waits for a change to show in HAProxy: servers, answers, a reload.
	Apply time.Duration
	// Poll is the pause between two attempts of the answer and reload waits.
	Poll time.Duration
	// ShowProc bounds the retries of `show proc` while the master socket refuses connections (as it
	// does for a moment while HAProxy reloads or restarts).
	ShowProc time.Duration
	// Socket bounds one exchange on HAProxy's master or admin socket.
	Socket time.Duration
}

// RouterProcessConfig is what a suite chooses about the `haroute run` processes it starts.
type RouterProcessConfig struct {
	// Binary is the haroute executable, as BuildHaroute returned it.
	Binary string
	// Dir is the HAProxy directory (--haproxy-dir); empty means a new TempDir. Its run/ holds unix
	// sockets, so it must be short.
	Dir string
	// Source are the flags that name what haroute reads: "--manifests", DIR or "--kubeconfig", FILE.
	Source []string
	// Env are environment variables (NAME=value) added to CleanEnv's for every run.
	Env []string
	// Bounds bound the waits.
	Bounds RouterProcessBounds
	// Process says how the process is owned and stopped.
	Process testkit.ProcessOptions
}

// RouterProcess is `haroute run` as a child process of the test, with the HAProxy it drives: its
// loopback ports, its HAProxy directory and sockets, and a client for its public ports.
type RouterProcess struct {
	// Dir is the HAProxy directory (--haproxy-dir): conf/ and run/ with the sockets.
	Dir string
	// HTTPPort, HTTPSPort and StatsPort are HAProxy's public ports and haroute's stats port, on
	// 127.0.0.1.
	HTTPPort, HTTPSPort, StatsPort int
	// Admin and Master talk to HAProxy's worker and master sockets under Dir/run.
	Admin  *socket.Admin
	Master *socket.Master
	// Client sends requests to HAProxy's public ports (certificates recorded, not verified).
	Client *testkit.Client
	// Proc is the running haroute, set by Start.
	Proc *testkit.Process

	t   testing.TB
	cfg RouterProcessConfig
	// masters are HAProxy master PIDs that must have ended once haroute has stopped.
	masters []int
}

// NewRouterProcess prepares a haroute run: it picks the ports and the HAProxy directory and makes the
// socket clients and the HTTP client. Start runs it.
func NewRouterProcess(t testing.TB, cfg RouterProcessConfig) *RouterProcess {
	t.Helper()
	if cfg.Binary == "" {
		t.Fatal("testbed: no haroute binary: build one with BuildHaroute in TestMain")
	}
	dir := cfg.Dir
	if dir == "" {
		dir = testkit.TempDir(t)
	}
	ports := testkit.ListenPorts(t, 3)
	return &RouterProcess{
		Dir:      dir,
		HTTPPort: ports[0], HTTPSPort: ports[1], StatsPort: ports[2],
		Admin:  socket.NewAdmin(adminSocket(dir), socket.Options{}),
		Master: socket.NewMaster(masterSocket(dir), socket.Options{}),
		Client: testkit.NewClient(t, ports[0], ports[1], nil),
		t:      t,
		cfg:    cfg,
	}
}

// ManagedHAProxyFlag returns the flag that makes haroute start and supervise testkit.HAProxyBinary itself.
func ManagedHAProxyFlag() string { return "--managed-haproxy=" + testkit.HAProxyBinary() }

// Args returns the `haroute run` command line: the source flags, the harness's own (this HAProxy
// directory, the loopback address and ports, no delay between reloads) and then extra, which may
// override them (the last of a repeated flag wins).
func (r *RouterProcess) Args(extra ...string) []string {
	args := append([]string{"run"}, r.cfg.Source...)
	args = append(args,
		"--haproxy-dir", r.Dir,
		"--bind-address", "127.0.0.1",
		"--http-port", strconv.Itoa(r.HTTPPort),
		"--https-port", strconv.Itoa(r.HTTPSPort),
		"--stats-port", strconv.Itoa(r.StatsPort),
		"--reload-interval", "0s",
	)
	return append(args, extra...)
}

// Env returns haroute's environment: CleanEnv, then the suite's variables, then extra (NAME=value).
func (r *RouterProcess) Env(extra ...string) []string {
	env := append(testkit.CleanEnv(), r.cfg.Env...)
	return append(env, extra...)
}

// RunOnce runs `haroute run … --once` (write the first configuration, then exit), bounded by
// Bounds.Ready, and fails the test when it does not succeed.
func (r *RouterProcess) RunOnce(extra []string, env ...string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Bounds.Ready)
	defer cancel()
	once := exec.CommandContext(ctx, r.cfg.Binary, append(r.Args(extra...), "--once")...)
	once.Env = r.Env(env...)
	if out, err := once.CombinedOutput(); err != nil {
		r.t.Fatalf("haroute run --once: %v\n%s", err, out)
	}
}

// Start runs `haroute run` with Args(extra...) and Env(env...) and waits until /healthz/ready
// answers 200. On cleanup, idle client connections are closed (HAProxy's soft stop would wait for
// a kept-alive one), the servers' state is logged when the test failed, haroute is stopped as
// Process says and every master given to MustStopWith is checked to be gone.
func (r *RouterProcess) Start(extra []string, env ...string) {
	t := r.t
	t.Helper()
	if r.Proc != nil {
		t.Fatal("testbed: RouterProcess.Start called twice")
	}
	cmd := exec.Command(r.cfg.Binary, r.Args(extra...)...)
	cmd.Env = r.Env(env...)
	opts := r.cfg.Process
	opts.AfterStop = r.checkMastersGone
	r.Proc = testkit.StartProcess(t, "haroute", cmd, opts)
	// Registered after the process's own cleanup, so it runs before haroute is stopped.
	t.Cleanup(func() {
		r.Client.CloseIdleConnections()
		if t.Failed() {
			t.Logf("show servers state:\n%s", r.serversDump())
		}
	})
	r.WaitHTTP("/healthz/ready", http.StatusOK, r.cfg.Bounds.Ready)
}

// MustStopWith records an HAProxy master PID that must have ended once haroute has stopped (haroute
// stops the HAProxy it manages); the cleanup fails the test, and kills that PID, when it still runs.
func (r *RouterProcess) MustStopWith(pid int) { r.masters = append(r.masters, pid) }

// checkMastersGone is the check MustStopWith asks for; it runs after haroute has stopped.
func (r *RouterProcess) checkMastersGone(t testing.TB) {
	for _, pid := range r.masters {
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			t.Errorf("HAProxy master %d still runs after haroute stopped", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// wait calls cond every interval until it returns nil, timeout passes or haroute exits (then what is
// waited for cannot come), and returns the reason it gave up.
func (r *RouterProcess) wait(timeout, interval time.Duration, cond func() error) error {
	return testkit.Eventually(timeout, interval, func() error {
		if r.Proc != nil && r.Proc.Exited() {
			return testkit.Final(fmt.Errorf("%s exited", r.Proc.Name))
		}
		return cond()
	})
}

// WaitHTTP waits (bounded by timeout) until GET path on haroute's stats port answers want.
func (r *RouterProcess) WaitHTTP(path string, want int, timeout time.Duration) {
	r.t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(r.StatsPort) + path
	hc := &http.Client{Timeout: probeTimeout}
	if err := r.wait(timeout, readyPoll, func() error {
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("answer %s", resp.Status)
		}
		return nil
	}); err != nil {
		r.t.Fatalf("%s did not answer %d: %v", url, want, err)
	}
}

// ShowProc returns the master's `show proc`, retried (bounded by Bounds.ShowProc): while HAProxy
// reloads or restarts, its master socket refuses or drops connections for a moment.
func (r *RouterProcess) ShowProc() socket.ProcState {
	r.t.Helper()
	var st socket.ProcState
	if err := testkit.Eventually(r.cfg.Bounds.ShowProc, showProcPoll, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Bounds.Socket)
		defer cancel()
		var err error
		st, err = r.Master.ShowProc(ctx)
		return err
	}); err != nil {
		r.t.Fatalf("show proc: %v", err)
	}
	return st
}

// MasterPID returns the HAProxy master's PID from one `show proc` (bounded by Bounds.Socket), or 0
// when the master socket does not answer now (no retry: a test polls it across a restart).
func (r *RouterProcess) MasterPID() int {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Bounds.Socket)
	defer cancel()
	st, err := r.Master.ShowProc(ctx)
	if err != nil {
		return 0
	}
	return st.Master.PID
}

// Reloads returns the HAProxy master's reload counter.
func (r *RouterProcess) Reloads() int { return r.ShowProc().Master.Reloads }

// WaitOneReload waits (bounded by Bounds.Apply) until HAProxy's reload counter rises above before,
// then checks that it rose by exactly one and stays there for a moment.
func (r *RouterProcess) WaitOneReload(before int) {
	r.t.Helper()
	if err := r.wait(r.cfg.Bounds.Apply, r.cfg.Bounds.Poll, func() error {
		if r.Reloads() == before {
			return fmt.Errorf("reload counter still %d", before)
		}
		return nil
	}); err != nil {
		r.t.Fatalf("no reload: %v", err)
	}
	time.Sleep(reloadSettle)
	if got := r.Reloads(); got != before+1 {
		r.t.Errorf("reload counter went from %d to %d, want exactly one reload", before, got)
	}
}

// KillHAProxy SIGKILLs HAProxy's master and its workers and returns the master's PID.
func (r *RouterProcess) KillHAProxy() int {
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
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			r.t.Fatalf("kill %d: %v", pid, err)
		}
	}
	return st.Master.PID
}

// ActiveServers returns "ip:port" of every server HAProxy has not put in maintenance, sorted.
func (r *RouterProcess) ActiveServers() ([]string, error) { return ActiveServers(r.Admin) }

// WaitServers waits (bounded by Bounds.Apply) until HAProxy's servers not in maintenance, over all
// backends, are exactly want ("ip:port"): the endpoints written have reached the runtime state.
func (r *RouterProcess) WaitServers(want []string) {
	r.t.Helper()
	wantSet := strings.Join(sortedCopy(want), " ")
	if err := r.wait(r.cfg.Bounds.Apply, serversPoll, func() error {
		got, err := r.ActiveServers()
		if err != nil {
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

// Get sends GET http://host/path through HAProxy and returns the status and the answering backend.
func (r *RouterProcess) Get(host, path string) (int, string, error) {
	resp, err := r.Client.Do(http.MethodGet, "http://"+host+path, nil)
	if err != nil {
		return 0, "", err
	}
	return resp.Status, resp.Backend, nil
}

// Do sends one request through HAProxy (http:// to its HTTP port, https:// to its HTTPS port with
// the URL's host as SNI; certificates are recorded, not verified).
func (r *RouterProcess) Do(method, url string) (*testkit.Response, error) {
	return r.Client.Do(method, url, nil)
}

// WaitAnswer waits (bounded by Bounds.Apply) until GET host/path answers status from backend (""
// for HAProxy itself), and returns when that answer came.
func (r *RouterProcess) WaitAnswer(host, path string, status int, backend string) time.Time {
	r.t.Helper()
	var at time.Time
	if err := r.wait(r.cfg.Bounds.Apply, r.cfg.Bounds.Poll, func() error {
		code, be, err := r.Get(host, path)
		if err != nil {
			return err
		}
		if code != status || be != backend {
			return fmt.Errorf("answer %d from %q", code, be)
		}
		at = time.Now()
		return nil
	}); err != nil {
		r.t.Fatalf("GET %s%s: want %d from %q: %v", host, path, status, backend, err)
	}
	return at
}

// WaitResponse waits (bounded by Bounds.Apply) until GET url gets a response for which check
// returns nil, and returns that response. Every attempt uses a new connection, so a TLS check sees
// the certificate served now, not the one a kept-alive connection got at its handshake.
func (r *RouterProcess) WaitResponse(url string, check func(*testkit.Response) error) *testkit.Response {
	r.t.Helper()
	var got *testkit.Response
	if err := r.wait(r.cfg.Bounds.Apply, r.cfg.Bounds.Poll, func() error {
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

// WaitBackends waits until requests to http://host/path have been answered by every backend in want
// (and by no other) within one bounded window.
func (r *RouterProcess) WaitBackends(host, path string, want ...string) {
	r.t.Helper()
	r.WaitBackendsURL("http://"+host+path, want...)
}

// WaitBackendsURL waits (bounded by Bounds.Apply) until GETs of url have been answered with 200 by
// every backend in want (and by no other) within one attempt.
func (r *RouterProcess) WaitBackendsURL(url string, want ...string) {
	r.t.Helper()
	wantSet := strings.Join(sortedCopy(want), " ")
	if err := r.wait(r.cfg.Bounds.Apply, r.cfg.Bounds.Poll, func() error {
		seen := map[string]bool{}
		for range backendsTries * len(want) {
			resp, err := r.Do(http.MethodGet, url)
			if err != nil {
				return err
			}
			if resp.Status != http.StatusOK {
				return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
			}
			seen[resp.Backend] = true
		}
		got := make([]string, 0, len(seen))
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

// serversDump returns `show servers state` as text (or the error), for the log of a failed test.
func (r *RouterProcess) serversDump() string {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Bounds.Socket)
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
