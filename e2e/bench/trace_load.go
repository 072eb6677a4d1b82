//go:build e2e

package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds and paces of a traceLoad.
const (
	traceLoadWorkers    = 4
	traceLoadMaxReqs    = 5_000_000
	traceLoadMaxTime    = 10 * time.Minute
	traceRequestTimeout = 5 * time.Second
	traceMaxBody        = 64 << 10
	traceMaxNotes       = 10
	servedProbePause    = 50 * time.Millisecond
	// balanceRun is how many answers in a row from one pod show that a Route balances by source
	// (every request comes from 127.0.0.1): under the default random balance over balancePods pods
	// such a run has a probability of about 4^-39.
	balanceRun = 40
	// loadURLHost is the URL host of every plain-HTTP request; the Route's host goes into the Host
	// header, so that all Routes share the client's kept-alive connections, as many users' browsers
	// behind one proxy would.
	loadURLHost = "trace.invalid"
)

// obsKind is what a change does that traffic can see.
type obsKind int

const (
	obsPodAdded     obsKind = iota // a new pod answers the Route
	obsPodRemoved                  // a removed pod no longer answers (see observation.latency)
	obsRouteAdded                  // a new Route answers 200 from its pods
	obsRouteDeleted                // a deleted Route answers 503 from HAProxy
	obsCert                        // the Route's new certificate is served
	obsBalance                     // the Route balances by source: balanceRun answers in a row from one pod
)

// observation is one change whose effect the load watches for.
type observation struct {
	kind   obsKind
	at     time.Time // the start of the API call that made the change
	pod    string    // obsPodAdded, obsPodRemoved
	serial string    // obsCert
	// seen is when the first answer that showed the change arrived (every kind but obsPodRemoved).
	seen time.Time
	// lastStale is when the removed pod last answered a request sent after the change, firstAfter
	// when the first answer to such a request arrived (obsPodRemoved).
	lastStale, firstAfter time.Time
	// runPod, runStart and runLen are the current run of answers from one pod (obsBalance).
	runPod   string
	runStart time.Time
	runLen   int
	// superseded is set when the Route was deleted, or the pod removed, before any answer showed the
	// change (a preview or a pod that came and went between two reloads): it no longer can, and has
	// no latency.
	superseded bool
}

// positive reports whether the observation ends with an answer that shows the change (a removal
// shows as an absence; the trace checks HAProxy's servers for it instead).
func (o *observation) positive() bool { return o.kind != obsPodRemoved }

// latency returns the time from the change to the first answer that saw it, false when no answer
// did. For a removed pod that is the last answer it gave to a request sent after the change (the
// first request after it saw the pod gone), or, when it gave none, the first answer from another pod.
func (o *observation) latency() (time.Duration, bool) {
	at := o.seen
	if o.kind == obsPodRemoved {
		at = o.lastStale
		if at.IsZero() {
			at = o.firstAfter
		}
	}
	if at.IsZero() || o.superseded {
		return 0, false
	}
	return max(0, at.Sub(o.at)), true
}

// member is a pod's time among a Route's endpoints.
type member struct {
	addr           string
	added, removed time.Time // zero added: from the start; zero removed: still there
}

// target is a Route the load requests, with what it may answer.
type target struct {
	host string
	tls  bool
	// members are every pod the Route has had as an endpoint during the trace.
	members map[string]*member
	// created is the start of the Route's create call (zero: it existed before the trace); served
	// is when its first 200 arrived. deleted is the start of its delete call.
	created, deleted, served time.Time
	// serials are the certificate serials the Route has had (TLS).
	serials map[string]bool
	obs     []*observation
	// open counts the positive observations not seen yet.
	open int
}

// answer is what one request got.
type answer struct {
	sent, arrived time.Time
	status        int
	backend       string
	serial        string // the leaf certificate's serial over TLS
	err           error
}

// traceLoad is the bounded load of a trace: traceLoadWorkers goroutines request the active Routes
// in turn, every second request going to a Route with a change not yet seen. Each answer is judged
// against what the Route may answer at that moment:
//   - failed: a transport error or a status other than 200, except the 503 HAProxy gives a Route
//     after its delete call, or after its create call to a request sent before its first 200 arrived;
//   - wrong: a 200 from a pod that was never the Route's endpoint (up to the answer), or over TLS
//     with a certificate the Route never had;
//   - stale (logged only; results.TraceRun has no field for it): a 200 from a pod removed, or for a
//     Route deleted, before the request was sent. How long that lasts is the removal's or
//     deletion's change → traffic time.
type traceLoad struct {
	httpClient, tlsClient *http.Client
	// httpPort and httpsPort are HAProxy's public ports on 127.0.0.1, set by setPorts before the
	// first request.
	httpPort, httpsPort int

	mu      sync.Mutex
	targets map[string]*target
	active  []*target
	all     []*observation
	next    int
	nextHot int
	notes   []string

	requests, failed, wrong, stale atomic.Int64
	stop                           chan struct{}
	stopOnce                       sync.Once
	wg                             sync.WaitGroup
}

// newTraceLoad returns a load without ports: the Routes are registered before haroute starts;
// setPorts names HAProxy's, then waitServed and Start may run.
func newTraceLoad() *traceLoad {
	l := &traceLoad{targets: map[string]*target{}, stop: make(chan struct{})}
	dialer := &net.Dialer{Timeout: traceRequestTimeout}
	plain := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(l.httpPort)))
		},
		MaxIdleConnsPerHost: 2 * traceLoadWorkers,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	// A new connection per request: each handshake shows the certificate HAProxy serves now.
	secure := &http.Transport{
		DialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, fmt.Errorf("TLS dial %s: %w", addr, err)
			}
			raw, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(l.httpsPort)))
			if err != nil {
				return nil, fmt.Errorf("TLS dial for %s: %w", host, err)
			}
			conn := tls.Client(raw, &tls.Config{ServerName: host, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12,
				NextProtos: []string{"http/1.1"}})
			if err := conn.HandshakeContext(ctx); err != nil {
				_ = raw.Close()
				return nil, fmt.Errorf("TLS handshake with SNI %s: %w", host, err)
			}
			return conn, nil
		},
		DisableKeepAlives:  true,
		DisableCompression: true,
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	l.httpClient = &http.Client{Transport: plain, Timeout: traceRequestTimeout, CheckRedirect: noRedirect}
	l.tlsClient = &http.Client{Transport: secure, Timeout: traceRequestTimeout, CheckRedirect: noRedirect}
	return l
}

// setPorts names HAProxy's public ports; call it before waitServed and Start.
func (l *traceLoad) setPorts(httpPort, httpsPort int) { l.httpPort, l.httpsPort = httpPort, httpsPort }

// addRoute registers a Route that exists before the trace, served by pods (and, over TLS, with a
// certificate of serial).
func (l *traceLoad) addRoute(host string, secure bool, serial string, pods ...*framework.Backend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addTarget(host, secure, serial, time.Time{}, pods)
}

func (l *traceLoad) addTarget(host string, secure bool, serial string, at time.Time, pods []*framework.Backend) *target {
	tg := &target{host: host, tls: secure, created: at, members: map[string]*member{}, serials: map[string]bool{}}
	for _, p := range pods {
		tg.members[p.Name] = &member{addr: p.Addr(), added: at}
	}
	if serial != "" {
		tg.serials[serial] = true
	}
	l.targets[host] = tg
	l.active = append(l.active, tg)
	return tg
}

// observe adds a change to watch for on tg (l.mu held).
func (l *traceLoad) observe(tg *target, o *observation) {
	tg.obs = append(tg.obs, o)
	l.all = append(l.all, o)
	if o.positive() {
		tg.open++
	}
}

// routeCreated is called just before the create call of a Route for host, served by pods.
func (l *traceLoad) routeCreated(at time.Time, host string, secure bool, serial string, pods ...*framework.Backend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observe(l.addTarget(host, secure, serial, at, pods), &observation{kind: obsRouteAdded, at: at})
}

// routeDeleted is called just before the delete call of the Route for host.
func (l *traceLoad) routeDeleted(at time.Time, host string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	tg := l.targets[host]
	if tg == nil {
		return fmt.Errorf("load: no Route %s", host)
	}
	tg.deleted = at
	for _, o := range tg.obs {
		if o.positive() && o.seen.IsZero() && !o.superseded {
			o.superseded = true
			tg.open--
		}
	}
	l.observe(tg, &observation{kind: obsRouteDeleted, at: at})
	return nil
}

// podsChanged is called just before the endpoints of the Route for host gain added and lose removed.
func (l *traceLoad) podsChanged(at time.Time, host string, added, removed []*framework.Backend) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	tg := l.targets[host]
	if tg == nil {
		return fmt.Errorf("load: no Route %s", host)
	}
	for _, p := range added {
		if tg.members[p.Name] != nil {
			return fmt.Errorf("load: pod %s was an endpoint of %s already", p.Name, host)
		}
		tg.members[p.Name] = &member{addr: p.Addr(), added: at}
		l.observe(tg, &observation{kind: obsPodAdded, at: at, pod: p.Name})
	}
	for _, p := range removed {
		m := tg.members[p.Name]
		if m == nil || !m.removed.IsZero() {
			return fmt.Errorf("load: pod %s is no endpoint of %s", p.Name, host)
		}
		m.removed = at
		// A pod removed before it ever answered (added and removed between two reloads): neither
		// its addition nor its removal can show in traffic any more.
		never := false
		for _, o := range tg.obs {
			if o.kind == obsPodAdded && o.pod == p.Name && o.seen.IsZero() && !o.superseded {
				o.superseded, never = true, true
				tg.open--
			}
		}
		l.observe(tg, &observation{kind: obsPodRemoved, at: at, pod: p.Name, superseded: never})
	}
	return nil
}

// certRotated is called just before the Route for host gets a certificate with serial.
func (l *traceLoad) certRotated(at time.Time, host, serial string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	tg := l.targets[host]
	if tg == nil {
		return fmt.Errorf("load: no Route %s", host)
	}
	tg.serials[serial] = true
	l.observe(tg, &observation{kind: obsCert, at: at, serial: serial})
	return nil
}

// balanceChanged is called just before the Route for host is set to balance by source.
func (l *traceLoad) balanceChanged(at time.Time, host string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	tg := l.targets[host]
	if tg == nil {
		return fmt.Errorf("load: no Route %s", host)
	}
	l.observe(tg, &observation{kind: obsBalance, at: at})
	return nil
}

// waitServed probes every registered Route (its requests are not counted) until each has answered
// 200 from one of its pods, with one of its certificates, bounded by timeout.
func (l *traceLoad) waitServed(timeout time.Duration) error {
	l.mu.Lock()
	pending := append([]*target(nil), l.active...)
	l.mu.Unlock()
	return testkit.Eventually(timeout, servedProbePause, func() error {
		var rest []*target
		var last error
		for _, tg := range pending {
			a := l.do(tg)
			l.mu.Lock()
			m := tg.members[a.backend]
			ok := a.err == nil && a.status == http.StatusOK && m != nil && (!tg.tls || tg.serials[a.serial])
			l.mu.Unlock()
			if !ok {
				rest = append(rest, tg)
				last = fmt.Errorf("%s: answer %d from %q (serial %q): %w", tg.host, a.status, a.backend, a.serial, a.err)
			}
		}
		pending = rest
		if len(pending) > 0 {
			return fmt.Errorf("%d Routes not served yet; %w", len(pending), last)
		}
		return nil
	})
}

// Start starts the workers; Stop (idempotent) ends them. They also end after traceLoadMaxReqs
// requests or traceLoadMaxTime.
func (l *traceLoad) Start() {
	deadline := time.Now().Add(traceLoadMaxTime)
	for w := range traceLoadWorkers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; time.Now().Before(deadline) && l.requests.Load() < traceLoadMaxReqs; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				tg := l.pick(i%2 == 0)
				if tg == nil {
					time.Sleep(servedProbePause)
					continue
				}
				l.judge(tg, l.do(tg))
			}
		}()
	}
}

// Stop ends the load and waits for its workers.
func (l *traceLoad) Stop() {
	l.stopOnce.Do(func() { close(l.stop) })
	l.wg.Wait()
	l.httpClient.CloseIdleConnections()
}

// pick returns the next active Route; with hot, the next one with a change not seen yet if any.
func (l *traceLoad) pick(hot bool) *target {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.active)
	if n == 0 {
		return nil
	}
	if hot {
		for range n {
			tg := l.active[l.nextHot%n]
			l.nextHot++
			if tg.open > 0 {
				return tg
			}
		}
	}
	tg := l.active[l.next%n]
	l.next++
	return tg
}

// do sends one GET to tg's host.
func (l *traceLoad) do(tg *target) answer {
	client, url := l.httpClient, "http://"+loadURLHost+"/"
	if tg.tls {
		client, url = l.tlsClient, "https://"+tg.host+"/"
	}
	a := answer{sent: time.Now()}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		a.err = fmt.Errorf("request for %s: %w", tg.host, err)
		a.arrived = time.Now()
		return a
	}
	req.Host = tg.host
	resp, err := client.Do(req)
	if err != nil {
		a.err = err
		a.arrived = time.Now()
		return a
	}
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, traceMaxBody))
	_ = resp.Body.Close()
	a.arrived = time.Now()
	if err != nil {
		a.err = fmt.Errorf("read body from %s: %w", tg.host, err)
	}
	a.status, a.backend = resp.StatusCode, resp.Header.Get(testkit.HeaderBackend)
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		a.serial = resp.TLS.PeerCertificates[0].SerialNumber.String()
	}
	return a
}

// judge counts one answer of the load and feeds it to tg's observations.
func (l *traceLoad) judge(tg *target, a answer) {
	l.requests.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	deletedBefore := func(t time.Time) bool { return !tg.deleted.IsZero() && tg.deleted.Before(t) }
	switch {
	case a.err != nil:
		l.failed.Add(1)
		l.note(a, tg, a.err.Error())
	case a.status == http.StatusServiceUnavailable && a.backend == "":
		servedBefore := tg.created.IsZero() || (!tg.served.IsZero() && tg.served.Before(a.sent))
		if servedBefore && !deletedBefore(a.arrived) {
			l.failed.Add(1)
			l.note(a, tg, "503 from HAProxy")
		}
	case a.status != http.StatusOK:
		l.failed.Add(1)
		l.note(a, tg, fmt.Sprintf("status %d from %q", a.status, a.backend))
	default:
		m := tg.members[a.backend]
		switch {
		case m == nil || m.added.After(a.arrived):
			l.wrong.Add(1)
			l.note(a, tg, fmt.Sprintf("answer from %q, never an endpoint of the Route", a.backend))
		case tg.tls && !tg.serials[a.serial]:
			l.wrong.Add(1)
			l.note(a, tg, fmt.Sprintf("certificate serial %s, not one of the Route's", a.serial))
		default:
			if (!m.removed.IsZero() && m.removed.Before(a.sent)) || deletedBefore(a.sent) {
				l.stale.Add(1)
			}
			if tg.served.IsZero() {
				tg.served = a.arrived
			}
		}
	}
	l.see(tg, a)
}

// see feeds an answer to tg's observations (l.mu held); a deleted Route seen gone is no longer
// requested.
func (l *traceLoad) see(tg *target, a answer) {
	ok := a.err == nil && a.status == http.StatusOK
	gone := a.err == nil && a.status == http.StatusServiceUnavailable && a.backend == ""
	for _, o := range tg.obs {
		if o.positive() && (!o.seen.IsZero() || o.superseded) {
			continue
		}
		switch o.kind {
		case obsPodAdded:
			if ok && a.backend == o.pod {
				o.seen = a.arrived
			}
		case obsRouteAdded:
			if ok && tg.members[a.backend] != nil {
				o.seen = a.arrived
			}
		case obsRouteDeleted:
			if gone && a.arrived.After(o.at) {
				o.seen = a.arrived
				l.retire(tg)
			}
		case obsCert:
			if ok && a.serial == o.serial {
				o.seen = a.arrived
			}
		case obsPodRemoved:
			switch {
			case !ok || !a.sent.After(o.at):
			case a.backend == o.pod:
				o.lastStale = a.arrived
			case o.firstAfter.IsZero():
				o.firstAfter = a.arrived
			}
		case obsBalance:
			if !ok || !a.sent.After(o.at) {
				continue
			}
			if a.backend != o.runPod {
				o.runPod, o.runStart, o.runLen = a.backend, a.arrived, 0
			}
			if o.runLen++; o.runLen >= balanceRun {
				o.seen = o.runStart
			}
		}
		if o.positive() && !o.seen.IsZero() {
			tg.open--
		}
	}
}

// retire stops requesting tg (l.mu held).
func (l *traceLoad) retire(tg *target) {
	for i, t := range l.active {
		if t == tg {
			l.active = append(l.active[:i], l.active[i+1:]...)
			return
		}
	}
}

// note keeps the first traceMaxNotes problems for the log (l.mu held).
func (l *traceLoad) note(a answer, tg *target, msg string) {
	if len(l.notes) < traceMaxNotes {
		l.notes = append(l.notes, fmt.Sprintf("%s %s (sent %s): %s",
			a.arrived.Format("15:04:05.000"), tg.host, a.sent.Format("15:04:05.000"), msg))
	}
}

// unseen describes the positive observations no answer has shown yet.
func (l *traceLoad) unseen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, tg := range l.targets {
		for _, o := range tg.obs {
			if o.positive() && o.seen.IsZero() && !o.superseded {
				out = append(out, fmt.Sprintf("%s: change %d (pod %q, serial %q) at %s", tg.host, o.kind, o.pod, o.serial, o.at.Format("15:04:05.000")))
			}
		}
	}
	return out
}

// removedAddrs returns "ip:port" of every pod removed from a Route's endpoints during the trace.
func (l *traceLoad) removedAddrs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, tg := range l.targets {
		for _, m := range tg.members {
			if !m.removed.IsZero() {
				out = append(out, m.addr)
			}
		}
	}
	return out
}

// loadOutcome is what the load measured.
type loadOutcome struct {
	requests, failed, wrong, stale int64
	// latencies are the change → traffic times, in the order the changes were made; unobserved
	// counts the changes no answer showed (superseded ones included).
	latencies  []float64
	unobserved int
	notes      []string
}

// outcome returns the counts and latencies (call after Stop).
func (l *traceLoad) outcome() loadOutcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := loadOutcome{requests: l.requests.Load(), failed: l.failed.Load(), wrong: l.wrong.Load(), stale: l.stale.Load(),
		latencies: []float64{}, notes: append([]string(nil), l.notes...)}
	for _, o := range l.all {
		if d, ok := o.latency(); ok {
			out.latencies = append(out.latencies, d.Seconds())
		} else {
			out.unobserved++
		}
	}
	return out
}
