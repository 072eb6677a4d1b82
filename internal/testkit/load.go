package testkit

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Bounds of a Load.
const (
	loadWorkers     = 4
	loadMaxRequests = 2_000_000
	// LoadMaxDuration is the longest a Load runs; a test's changes must fit in it.
	LoadMaxDuration = 120 * time.Second
	maxLoggedErrors = 10
	loadPoll        = 10 * time.Millisecond
)

// Load is a bounded client that keeps sending GETs for one URL while a test changes the router. Every
// answer must be a 200 from a backend allowed when the request was sent or when its answer arrived (the
// allowed set is a step's old and new endpoints: the current ones plus the ones just removed); it
// records when each backend first answered.
type Load struct {
	url     string
	client  *Client
	allowed atomic.Pointer[map[string]bool]

	stop chan struct{}
	wg   sync.WaitGroup

	requests, failed, wrong atomic.Int64
	refused                 atomic.Int64 // failed requests that found no listener
	mu                      sync.Mutex
	firstSeen               map[string]time.Time
	errs                    []string
}

// StartLoad starts the workers sending GET url through client; the load stops on Stop (also at the
// test's cleanup), after loadMaxRequests or after LoadMaxDuration, whichever comes first.
func StartLoad(t testing.TB, client *Client, url string, allowed ...string) *Load {
	l := &Load{url: url, client: client, stop: make(chan struct{}), firstSeen: map[string]time.Time{}}
	l.Allow(allowed...)
	deadline := time.Now().Add(LoadMaxDuration)
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
func (l *Load) one() {
	sent, allowedAtSend := time.Now(), *l.allowed.Load()
	resp, err := l.client.Do(http.MethodGet, l.url, nil)
	now := time.Now()
	switch {
	case err != nil:
		l.failed.Add(1)
		if errors.Is(err, syscall.ECONNREFUSED) {
			l.refused.Add(1)
		}
		l.note(fmt.Sprintf("%s: %v", now.Format("15:04:05.000"), err))
	case resp.Status != http.StatusOK:
		l.failed.Add(1)
		l.note(fmt.Sprintf("%s: status %d from %q", now.Format("15:04:05.000"), resp.Status, resp.Backend))
	case !allowedAtSend[resp.Backend] && !(*l.allowed.Load())[resp.Backend]:
		l.wrong.Add(1)
		l.note(fmt.Sprintf("%s: answer from %q (sent %s), not a current or just-removed endpoint %v",
			now.Format("15:04:05.000"), resp.Backend, sent.Format("15:04:05.000"), slices.Sorted(maps.Keys(*l.allowed.Load()))))
	}
	if err == nil {
		l.mu.Lock()
		if _, ok := l.firstSeen[resp.Backend]; !ok {
			l.firstSeen[resp.Backend] = now
		}
		l.mu.Unlock()
	}
}

func (l *Load) note(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < maxLoggedErrors {
		l.errs = append(l.errs, msg)
	}
}

// Allow sets the backends an answer may come from.
func (l *Load) Allow(names ...string) {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	l.allowed.Store(&m)
}

// Counts stops the load and returns how many requests it sent, how many failed and how many a wrong
// backend answered, for a phase in which failures are expected (a restart) and only measured.
func (l *Load) Counts() (requests, failed, wrong int64) {
	l.Stop()
	return l.Requests(), l.failed.Load(), l.wrong.Load()
}

// Refused returns how many of the failed requests found no listener (connection refused): the
// router did not accept them, as while it restarts or after its listeners closed. The other failures
// were accepted, or timed out, and then lost.
func (l *Load) Refused() int64 { return l.refused.Load() }

// Requests returns the number of requests sent so far.
func (l *Load) Requests() int64 { return min(l.requests.Load(), loadMaxRequests) }

// WaitFirst waits (at most timeout) until backend answered for the first time and returns when.
func (l *Load) WaitFirst(t testing.TB, backend string, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		at, ok := l.firstSeen[backend]
		l.mu.Unlock()
		if ok {
			return at
		}
		time.Sleep(loadPoll)
	}
	t.Fatalf("backend %s did not answer %s within %v", backend, l.url, timeout)
	return time.Time{}
}

// Stop ends the load and waits for the workers (idempotent).
func (l *Load) Stop() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// Check stops the load and fails the test on any failed or wrong answer, or fewer than minRequests.
func (l *Load) Check(t testing.TB, minRequests int64) {
	t.Helper()
	l.Stop()
	n := l.Requests()
	t.Logf("load %s: %d requests, %d failed, %d from a wrong backend", l.url, n, l.failed.Load(), l.wrong.Load())
	if l.failed.Load() != 0 || l.wrong.Load() != 0 {
		t.Errorf("load %s: %d failed, %d wrong; first problems:\n%v", l.url, l.failed.Load(), l.wrong.Load(), l.errs)
	}
	if n < minRequests {
		t.Errorf("load %s: only %d requests, want at least %d", l.url, n, minRequests)
	}
}
