//go:build e2e

package live

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"sync"
	"time"

	"github.com/haroute/haroute/e2e/parity"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of a client's load.
const (
	// pace is the pause between two requests of a client.
	pace = 50 * time.Millisecond
	// maxRequests bounds a client's requests; a client that reaches it stops before the scenario ends
	// and misses a phase, which fails the test.
	maxRequests   = 5000
	clientTimeout = 5 * time.Second
	// keptErrors is how many failures a client describes (the rest are counted).
	keptErrors = 5
)

// fleetRoute is a Route of the fleet scenario: its URL, its pods (the endpoints the stock router's
// cookie values hash) and the stock router's cookie name for it.
type fleetRoute struct {
	name, url, cookie string
	pods              map[string]parity.Endpoint
}

// session is one client of the fleet: its own cookie jar, a Route, and what its requests brought.
type session struct {
	id    string
	route *fleetRoute
	jar   http.CookieJar
	// firstPhase is the phase the client started in.
	firstPhase int
	// offset shifts the client's turn over the rotation, so that the clients' first requests
	// spread over the replicas.
	offset int

	// pod answered the first request, through firstReplica (of firstKind), with cookie value.
	pod, firstReplica, firstKind, value string
	requests, failures, podChanges      int
	// reissued counts later answers that set the sticky cookie again: the router did not take the
	// client's cookie (the pod kept may then be chance).
	reissued int
	// badCookie counts first answers whose cookie is not the stock router's name and value.
	badCookie int
	// crossings counts requests that went to another kind of router than the client's previous one.
	crossings int
	perPhase  []int
	byReplica map[string]int
	errs      []string
	lastKind  string
}

func newSession(id string, route *fleetRoute, phases, firstPhase, offset int) *session {
	jar, _ := cookiejar.New(nil) // New with nil options never fails
	return &session{id: id, route: route, jar: jar, firstPhase: firstPhase, offset: offset,
		perPhase: make([]int, phases), byReplica: map[string]int{}}
}

// run sends requests until stop is closed, ctx ends or maxRequests are sent, each to the next replica
// of the rotation.
func (s *session) run(ctx context.Context, lb *balancer, stop <-chan struct{}) {
	for n := 0; n < maxRequests; {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		phase := int(lb.phase.Load())
		r := lb.pick(s.offset + n)
		if r == nil {
			time.Sleep(pace)
			continue
		}
		n++
		s.do(ctx, r, phase, lb.events.start)
		time.Sleep(pace)
	}
}

// do sends one request through r and counts its outcome.
func (s *session) do(ctx context.Context, r *replica, phase int, start time.Time) {
	s.requests++
	s.perPhase[phase]++
	s.byReplica[r.name]++
	if s.lastKind != "" && s.lastKind != r.kind {
		s.crossings++
	}
	s.lastKind = r.kind
	hc := &http.Client{Transport: r.transport, Jar: s.jar, Timeout: clientTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.route.url, nil)
	if err != nil {
		s.fail(r, start, err.Error())
		return
	}
	resp, err := hc.Do(req)
	if err != nil {
		s.fail(r, start, err.Error())
		return
	}
	_, err = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	pod := resp.Header.Get(testkit.HeaderBackend)
	switch {
	case err != nil:
		s.fail(r, start, "read body: "+err.Error())
		return
	case resp.StatusCode != http.StatusOK:
		s.fail(r, start, fmt.Sprintf("status %d from %q", resp.StatusCode, pod))
		return
	}
	if _, ok := s.route.pods[pod]; !ok {
		s.fail(r, start, fmt.Sprintf("answered by %q, no pod of the Route", pod))
		return
	}
	value, set := s.cookie(resp)
	if s.pod == "" {
		s.pod, s.firstReplica, s.firstKind, s.value = pod, r.name, r.kind, value
		if want := s.route.pods[pod].StockValue(); !set || value != want {
			s.badCookie++
			s.note(r, start, fmt.Sprintf("first answer's cookie %s=%q (set: %t), want the stock router's %q", s.route.cookie, value, set, want))
		}
		return
	}
	if set {
		s.reissued++
		s.note(r, start, fmt.Sprintf("cookie set again: %q (was %q)", value, s.value))
	}
	if pod != s.pod {
		s.podChanges++
		s.note(r, start, fmt.Sprintf("answered by %s, not %s", pod, s.pod))
	}
}

// cookie returns the value of the Route's sticky cookie the answer sets, if it sets one.
func (s *session) cookie(resp *http.Response) (string, bool) {
	for _, c := range resp.Cookies() {
		if c.Name == s.route.cookie {
			return c.Value, true
		}
	}
	return "", false
}

func (s *session) fail(r *replica, start time.Time, msg string) {
	s.failures++
	s.note(r, start, msg)
}

func (s *session) note(r *replica, start time.Time, msg string) {
	if len(s.errs) < keptErrors {
		s.errs = append(s.errs, fmt.Sprintf("%.1fs via %s: %s", time.Since(start).Seconds(), r.name, msg))
	}
}

// load is the clients of one wave, running until stopped.
type load struct {
	sessions []*session
	stop     chan struct{}
	wg       sync.WaitGroup
}

// startLoad starts one client per session.
func startLoad(ctx context.Context, lb *balancer, sessions []*session) *load {
	l := &load{sessions: sessions, stop: make(chan struct{})}
	for _, s := range sessions {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			s.run(ctx, lb, l.stop)
		}()
	}
	return l
}

// end stops the clients and waits until their last requests have ended.
func (l *load) end() {
	close(l.stop)
	l.wg.Wait()
}
