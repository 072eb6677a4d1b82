package run

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
)

// Bounds of the load.
const (
	loadWorkers     = 4
	loadMaxRequests = 2_000_000
	loadMaxDuration = 60 * time.Second
	maxLoggedErrors = 10
)

// load is a bounded loopback client that keeps sending GETs for one host while a test changes the
// manifests. Every answer must be a 200 from a backend allowed when the request was sent or when its
// answer arrived (the allowed set is a step's old and new endpoints: the current endpoints, plus the
// ones just removed); it records when each backend first answered.
type load struct {
	host    string
	client  *testbed.Client
	allowed atomic.Pointer[map[string]bool]

	stop chan struct{}
	wg   sync.WaitGroup

	requests, failed, wrong atomic.Int64
	mu                      sync.Mutex
	firstSeen               map[string]time.Time
	errs                    []string
}

// startLoad starts the client workers; the load stops on Stop, after loadMaxRequests or after
// loadMaxDuration, whichever comes first.
func startLoad(t *testing.T, r *router, host string, allowed []string) *load {
	l := &load{
		host:      host,
		client:    testbed.NewClient(t, r.httpPort, r.httpsPort, nil),
		stop:      make(chan struct{}),
		firstSeen: map[string]time.Time{},
	}
	l.allow(allowed...)
	deadline := time.Now().Add(loadMaxDuration)
	for range loadWorkers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for time.Now().Before(deadline) && l.requests.Add(1) <= loadMaxRequests {
				select {
				case <-l.stop:
					return
				default:
				}
				l.one()
			}
		}()
	}
	t.Cleanup(l.Stop)
	return l
}

// one sends one request and judges its answer.
func (l *load) one() {
	sent, allowedAtSend := time.Now(), *l.allowed.Load()
	resp, err := l.client.Do(http.MethodGet, "http://"+l.host+"/", nil)
	now := time.Now()
	switch {
	case err != nil:
		l.failed.Add(1)
		l.note(fmt.Sprintf("%s: %v", now.Format("15:04:05.000"), err))
	case resp.Status != http.StatusOK:
		l.failed.Add(1)
		l.note(fmt.Sprintf("%s: status %d from %q", now.Format("15:04:05.000"), resp.Status, resp.Backend))
	case !allowedAtSend[resp.Backend] && !(*l.allowed.Load())[resp.Backend]:
		l.wrong.Add(1)
		l.note(fmt.Sprintf("%s: answer from %q (sent %s), not a current or just-removed endpoint %v", now.Format("15:04:05.000"), resp.Backend, sent.Format("15:04:05.000"), slices.Sorted(maps.Keys(*l.allowed.Load()))))
	}
	if err == nil {
		l.mu.Lock()
		if _, ok := l.firstSeen[resp.Backend]; !ok {
			l.firstSeen[resp.Backend] = now
		}
		l.mu.Unlock()
	}
}

func (l *load) note(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < maxLoggedErrors {
		l.errs = append(l.errs, msg)
	}
}

// allow sets the backends an answer may come from.
func (l *load) allow(names ...string) {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	l.allowed.Store(&m)
}

// waitFirst waits until backend answered for the first time and returns when.
func (l *load) waitFirst(t *testing.T, backend string) time.Time {
	t.Helper()
	deadline := time.Now().Add(applyTimeout)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		at, ok := l.firstSeen[backend]
		l.mu.Unlock()
		if ok {
			return at
		}
		time.Sleep(pollEvery / 5)
	}
	t.Fatalf("backend %s did not answer within %v", backend, applyTimeout)
	return time.Time{}
}

// Stop ends the load and waits for the workers (idempotent).
func (l *load) Stop() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// check stops the load and fails the test on any failed or wrong answer, or too little traffic.
func (l *load) check(t *testing.T, minRequests int64) {
	t.Helper()
	l.Stop()
	n := min(l.requests.Load(), loadMaxRequests)
	t.Logf("load: %d requests, %d failed, %d from a wrong backend", n, l.failed.Load(), l.wrong.Load())
	if l.failed.Load() != 0 || l.wrong.Load() != 0 {
		t.Errorf("load: %d failed, %d wrong; first problems:\n%v", l.failed.Load(), l.wrong.Load(), l.errs)
	}
	if n < minRequests {
		t.Errorf("load: only %d requests, want at least %d", n, minRequests)
	}
}
