//go:build e2e

package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench/results"
	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

// Bounds and paces of a trace run.
const (
	// traceRunTimeout bounds every API call of one run.
	traceRunTimeout = 15 * time.Minute
	// traceServedTimeout bounds the wait for haroute to serve the Routes that exist at its start.
	traceServedTimeout = 2 * time.Minute
	// settleTimeout bounds the wait after the last change until traffic has seen every change and
	// HAProxy's current worker has no removed pod among its active servers.
	settleTimeout = time.Minute
	settlePoll    = 100 * time.Millisecond
	// traceTail is how long the load goes on once everything is in effect: answers still in flight
	// on an old worker's connections arrive, and the last samples are taken.
	traceTail = time.Second
	// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on Linux).
	clockTicks        = 100
	sampleMax         = int(traceLoadMaxTime / results.SampleInterval)
	sampleSocketLimit = time.Second
	metricsTimeout    = 5 * time.Second
	cleanTimeout      = 2 * time.Minute
	// runtimeOpsMetric counts the runtime API operations haroute sent, by op and result.
	runtimeOpsMetric = "haroute_runtime_ops_total"
	// unsettledLogTail is how much of haroute's log a run whose changes did not all take effect logs.
	unsettledLogTail = 6000
	kB               = 1024.0
)

// traceMode is one way haroute runs a trace.
type traceMode struct {
	name string
	args []string
}

// traceModes returns the modes in the order each trace runs them: haroute's default (runtime API,
// OpenShift's 5 s reload interval for what needs a reload), then every change a reload, coalesced
// at the stock router's default interval and at 1 s.
func traceModes() []traceMode {
	return []traceMode{
		{results.ModeRuntime, []string{"--reload-interval", haproxy.DefaultReloadInterval.String()}},
		{results.ModeReload5s, []string{"--mode", "reload", "--reload-interval", "5s"}},
		{results.ModeReload1s, []string{"--mode", "reload", "--reload-interval", "1s"}},
	}
}

// traceSpec is one trace: setup creates its objects before haroute starts (in the run's namespace,
// with pods of its pod network), registers its Routes with the load and returns play, which makes
// its changes while the load runs.
type traceSpec struct {
	name  string
	setup func(r *traceRun) (play func() error, err error)
}

// traceRun is one trace in one mode: its namespace, pods, API writer and load.
type traceRun struct {
	t    *testing.T
	ctx  context.Context
	api  *traceAPI
	pods *framework.PodNetwork
	load *traceLoad
	// domain ends every host of the run: <namespace>.bench.test.
	domain string
	sizes  traceSizes
}

// host returns the host of Route name.
func (r *traceRun) host(name string) string { return name + "." + r.domain }

// startPods starts one pod per name, all served by one process, and returns them in order.
func (r *traceRun) startPods(names ...string) []*framework.Backend {
	r.t.Helper()
	return r.pods.StartBackends(names...)
}

// sleepUntil waits until at, or the end of the run's context.
func (r *traceRun) sleepUntil(at time.Time) error {
	select {
	case <-r.ctx.Done():
		return fmt.Errorf("trace: %w", r.ctx.Err())
	case <-time.After(time.Until(at)):
		return nil
	}
}

// runOutcome is one run's results with what the JSON does not hold.
type runOutcome struct {
	results.TraceRun
	stale      int64
	unobserved int
	opened     int // long-lived connections opened
	notes      []string
	settleErr  error
}

// runTrace runs spec in mode once: a fresh namespace and pod network, the trace's objects, haroute
// started on them, then under load (and one more long-lived connection every second) the changes,
// measured until they are all in effect.
func runTrace(t *testing.T, c *framework.Cluster, spec traceSpec, mode traceMode, repeat int, sizes traceSizes) runOutcome {
	ctx, cancel := context.WithTimeout(context.Background(), traceRunTimeout)
	t.Cleanup(cancel)
	ns := c.Namespace(t, "trace")
	api := newTraceAPI(c, ns)
	// Registered first, so it runs last: after haroute has stopped.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanTimeout)
		defer cancel()
		if err := api.deleteAll(ctx); err != nil {
			t.Errorf("%v", err)
		}
	})
	r := &traceRun{t: t, ctx: ctx, api: api, pods: framework.NewPodNetwork(t), load: newTraceLoad(),
		domain: ns + ".bench.test", sizes: sizes}
	llPod := r.pods.StartBackend("ll-pod")
	llHost := r.host("ll")
	if err := api.createService(ctx, "ll", []*framework.Backend{llPod}); err != nil {
		t.Fatal(err)
	}
	if err := api.createRoute(ctx, "ll", llHost, "ll", nil); err != nil {
		t.Fatal(err)
	}
	play, err := spec.setup(r)
	if err != nil {
		t.Fatalf("trace %s: setup: %v", spec.name, err)
	}

	router := c.StartRouterArgs(t, append(slices.Clone(mode.args), "--metrics-auth", "none"))
	pid := router.Proc.Cmd.Process.Pid
	r.load.setPorts(router.HTTPPort, router.HTTPSPort)
	router.WaitAnswer(llHost, "/", http.StatusOK, llPod.Name)
	if err := r.load.waitServed(traceServedTimeout); err != nil {
		t.Fatalf("trace %s: haroute does not serve the trace's Routes: %v", spec.name, err)
	}
	// Registered after the router, so they run before its stop: HAProxy's workers then have no
	// client connection left to wait for.
	t.Cleanup(r.load.Stop)
	r.load.Start()
	ll := startLongLived(router.HTTPPort, llHost, llPod.Name)
	t.Cleanup(ll.Close)
	if err := r.sleepUntil(time.Now().Add(sizes.leadIn)); err != nil {
		t.Fatal(err)
	}

	reloads0, ops0 := router.Reloads(), runtimeOps(t, router.StatsPort)
	cpu0 := cpuSeconds(t, pid)
	writes0 := api.writes.Load()
	s := startSampler(pid, router.Master, reloads0)
	if err := play(); err != nil {
		s.Stop()
		t.Fatalf("trace %s: %v", spec.name, err)
	}
	changes := api.writes.Load() - writes0
	settleErr := testkit.Eventually(settleTimeout, settlePoll, func() error { return settled(r.load, router) })
	time.Sleep(traceTail)
	s.Stop()
	ll.Stop()
	r.load.Stop()
	out := runOutcome{settleErr: settleErr}
	out.Trace, out.Mode, out.Repeat, out.Changes = spec.name, mode.name, repeat, int(changes)
	// haroute's CPU time first: the harness's own scrape of /metrics is not the trace's.
	out.HarouteCPU = cpuSeconds(t, pid) - cpu0
	out.Reloads = router.Reloads() - reloads0
	out.RuntimeOps = runtimeOps(t, router.StatsPort) - ops0
	var llFailed int
	var llErr error
	out.LongLived, out.opened, llFailed, llErr = ll.Open()
	if llFailed > 0 {
		t.Logf("long-lived connections: %d open of %d opened, %d could not be opened (last: %v)", out.LongLived, out.opened, llFailed, llErr)
	}
	ll.Close()
	lo := r.load.outcome()
	out.ChangeToTraffic, out.unobserved = lo.latencies, lo.unobserved
	out.Requests, out.Failed, out.Wrong, out.stale, out.notes = lo.requests, lo.failed, lo.wrong, lo.stale, lo.notes
	s.fill(&out.TraceRun)
	if settleErr != nil {
		t.Logf("trace %s in %s: not every change took effect: %v\nharoute log (tail):\n%s", spec.name, mode.name, settleErr,
			logTail(router.Proc.Out.String(), unsettledLogTail))
	}
	if len(out.notes) > 0 {
		t.Logf("trace %s in %s: first problems of the load:\n  %s", spec.name, mode.name, strings.Join(out.notes, "\n  "))
	}
	return out
}

// errNotSettled is wrapped by settled's answer while a trace's changes are not all in effect.
var errNotSettled = errors.New("changes not in effect")

// settled returns nil once traffic has seen every change and no pod removed during the trace is
// among the active servers of HAProxy's current worker.
func settled(load *traceLoad, router *framework.ClusterRouter) error {
	if u := load.unseen(); len(u) > 0 {
		return fmt.Errorf("%w: %d not seen by traffic, e.g. %s", errNotSettled, len(u), u[0])
	}
	removed := load.removedAddrs()
	if len(removed) == 0 {
		return nil
	}
	active, err := router.ActiveServers()
	if err != nil {
		return err
	}
	for _, a := range removed {
		if slices.Contains(active, a) {
			return fmt.Errorf("%w: removed pod %s still an active server", errNotSettled, a)
		}
	}
	return nil
}

// sampler takes a results.Sample every results.SampleInterval: HAProxy's processes (haroute's
// descendants: the master and every worker, old ones included), their total RSS, and the reloads
// since the trace started from the master's `show proc`; it also tracks haroute's largest RSS.
type sampler struct {
	pid      int
	master   *socket.Master
	reloads0 int
	start    time.Time

	mu              sync.Mutex
	samples         []results.Sample
	reloads         int
	procsMax        int
	rssMaxKB        int
	harouteRSSMaxKB int
	errs            int
	lastErr         error

	stop chan struct{}
	done chan struct{}
}

func startSampler(pid int, master *socket.Master, reloads0 int) *sampler {
	s := &sampler{pid: pid, master: master, reloads0: reloads0, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *sampler) run() {
	defer close(s.done)
	tick := time.NewTicker(results.SampleInterval)
	defer tick.Stop()
	for range sampleMax {
		s.take()
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

// take records one sample; a value it cannot read is left out (the reload count keeps its last value
// while the master socket is busy with a reload).
func (s *sampler) take() {
	at := time.Since(s.start).Seconds()
	pids, err := HAProxyDescendants(s.pid)
	var rss, own int
	if err == nil {
		rss, err = RSS(pids)
	}
	if err == nil {
		own, err = RSS([]int{s.pid})
	}
	ctx, cancel := context.WithTimeout(context.Background(), sampleSocketLimit)
	st, perr := s.master.ShowProc(ctx)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if perr == nil {
		s.reloads = st.Master.Reloads - s.reloads0
	}
	if err != nil {
		s.errs++
		s.lastErr = err
		return
	}
	s.samples = append(s.samples, results.Sample{T: at, Reloads: s.reloads, HAProxyProcs: len(pids), HAProxyRSSMB: float64(rss) / kB})
	s.procsMax = max(s.procsMax, len(pids))
	s.rssMaxKB = max(s.rssMaxKB, rss)
	s.harouteRSSMaxKB = max(s.harouteRSSMaxKB, own)
}

// Stop takes a last sample and stops (idempotent).
func (s *sampler) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.take()
}

// fill copies the samples and maxima into run.
func (s *sampler) fill(run *results.TraceRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run.Samples = append([]results.Sample(nil), s.samples...)
	run.HAProxyProcsMax = s.procsMax
	run.HAProxyRSSMaxMB = float64(s.rssMaxKB) / kB
	run.HarouteRSSMaxMB = float64(s.harouteRSSMaxKB) / kB
}

// cpuSeconds returns the user and system CPU time of process pid (utime + stime of /proc/PID/stat).
func cpuSeconds(t testing.TB, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatalf("haroute CPU time: %v", err)
	}
	s := string(b)
	// The fields after the parenthesised command name start with the third, state; utime and stime
	// are the 14th and 15th.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		t.Fatalf("haroute CPU time: unexpected /proc/%d/stat %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("haroute CPU time: /proc/%d/stat %q: %v %v", pid, s, err1, err2)
	}
	return float64(utime+stime) / clockTicks
}

// runtimeOps returns the sum of haroute_runtime_ops_total over all its series (every op and result)
// from haroute's /metrics.
func runtimeOps(t testing.TB, statsPort int) int {
	t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(statsPort) + "/metrics"
	resp, err := (&http.Client{Timeout: metricsTimeout}).Get(url)
	if err != nil {
		t.Fatalf("haroute metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("haroute metrics: GET %s: %s", url, resp.Status)
	}
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, runtimeOpsMetric+"{") && !strings.HasPrefix(line, runtimeOpsMetric+" ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("haroute metrics: %q: %v", line, err)
		}
		total += v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("haroute metrics: read %s: %v", url, err)
	}
	return int(total)
}

// logTail returns the last n bytes of s.
func logTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
