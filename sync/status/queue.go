package status

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	routev1 "github.com/openshift/api/route/v1"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// Defaults of QueueOptions. At 50 writes a second the statuses of a thousand Routes take about 20 s,
// which is fine for a report, and the API server sees a known, modest load.
const (
	DefaultQPS   float32 = 50
	DefaultBurst int     = 100
)

// Retry timing of a failed write (cenkalti/backoff/v4): it never gives up.
const (
	queueRetryInitial = time.Second
	queueRetryMax     = 30 * time.Second
)

// QueueOptions pace the writes of a Queue.
type QueueOptions struct {
	// QPS is the sustained rate of UpdateStatus calls (default DefaultQPS); Burst is how many may go
	// at once after a quiet time (default DefaultBurst).
	QPS   float32
	Burst int
}

// Queue takes Route status off the caller's path. Apply only records a snapshot and returns; the
// goroutine running Run writes it through the Writer. Status reports what HAProxy serves, so it may
// lag behind; HAProxy, which the caller (the sync loop) keeps in step, must never wait for it: with
// status written inline, one Route at a time, a thousand Routes held every change back for minutes.
//
// Snapshots coalesce: the worker always writes the newest one, and one that was replaced before the
// worker took it is never written (it is outdated anyway). A failed write is retried with
// exponential backoff, forever, and a newer snapshot replaces the one being retried. The Writer's
// UpdateStatus calls are paced by a token bucket (QueueOptions), so that a burst of changes does not
// flood the API server.
type Queue struct {
	w   *Writer
	log *slog.Logger
	// wake tells the worker that a snapshot waits. Its one slot stands for any number of Apply
	// calls, so Apply never blocks.
	wake chan struct{}
	// retryInitial and retryMax bound the backoff between failed writes; tests shorten them.
	retryInitial, retryMax time.Duration

	mu sync.Mutex
	// next is the newest snapshot the worker has not taken yet.
	next *snapshot
	// busy: the worker holds a snapshot not yet written (being written, or waiting to be retried).
	// Only the tests read busy and lastErr.
	busy bool
	// lastErr is the error of the last write; nil after a successful one.
	lastErr error
}

// snapshot is the input of one Writer.Apply.
type snapshot struct {
	routes   []*routev1.Route
	cfg      *model.Config
	problems []mapping.Problem
}

// NewQueue returns a Queue that writes through w, paced by opts (zero fields take the defaults). The
// Queue takes w over: its worker becomes the Writer's one caller, and nothing else may use w.
func NewQueue(w *Writer, opts QueueOptions) *Queue {
	if opts.QPS <= 0 {
		opts.QPS = DefaultQPS
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	w.limiter = flowcontrol.NewTokenBucketRateLimiter(opts.QPS, opts.Burst)
	return &Queue{
		w:            w,
		log:          w.log,
		wake:         make(chan struct{}, 1),
		retryInitial: queueRetryInitial,
		retryMax:     queueRetryMax,
	}
}

// Apply records the input of a Writer.Apply to be written by Run, replacing one that is not written
// yet, and returns nil at once: it never waits for the API server, and ctx is not used (the worker
// writes under Run's context, since the caller's may end before the write happens). routes, cfg and
// problems are kept until written, so the caller must not modify them afterwards (the controller
// makes new ones for every sync). Apply may be called before Run, and from any goroutine.
func (q *Queue) Apply(_ context.Context, routes []*routev1.Route, cfg *model.Config, problems []mapping.Problem) error {
	q.mu.Lock()
	q.next = &snapshot{routes: routes, cfg: cfg, problems: problems}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default: // a wake-up is already pending; the worker will find this snapshot
	}
	return nil
}

// Run writes the snapshots recorded by Apply until ctx ends, ctx being the context of the API calls
// too. It is the Queue's worker: call it once, in its own goroutine.
func (q *Queue) Run(ctx context.Context) {
	retry := backoff.NewExponentialBackOff()
	retry.InitialInterval = q.retryInitial
	retry.MaxInterval = q.retryMax
	retry.MaxElapsedTime = 0
	retry.Reset()

	failures := 0
	var cur *snapshot
	for {
		if cur == nil {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
			}
			cur = q.take()
			continue
		}

		err := q.w.Apply(ctx, cur.routes, cur.cfg, cur.problems)
		if ctx.Err() != nil {
			return
		}
		q.finished(err)
		if err == nil {
			if failures > 0 {
				q.log.Info("route status written after failed attempts", "failures", failures)
			}
			failures = 0
			retry.Reset()
			cur = nil
			continue
		}

		failures++
		wait := retry.NextBackOff()
		q.log.Warn("route status not (fully) written; retrying", "error", err, "failures", failures, "retryIn", wait)
		var ok bool
		if cur, ok = q.retryAfter(ctx, cur, wait); !ok {
			return
		}
	}
}

// retryAfter waits until failed, the snapshot whose write failed, is due again (after wait), or a
// newer snapshot arrives; it returns the snapshot to write next, or false when ctx ended. A newer
// snapshot goes at once, without waiting: it is what the caller wants now, and it comes no faster
// than the caller syncs. The backoff is not reset by it, so that the retries of a lasting failure
// still spread out.
func (q *Queue) retryAfter(ctx context.Context, failed *snapshot, wait time.Duration) (*snapshot, bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false
		case <-q.wake:
			if next := q.take(); next != nil {
				return next, true
			}
			// The wake-up was for a snapshot taken already: keep waiting.
		case <-timer.C:
			if next := q.take(); next != nil {
				return next, true
			}
			return failed, true
		}
	}
}

// take hands the worker the newest snapshot, or nil when there is none.
func (q *Queue) take() *snapshot {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.next
	q.next = nil
	if s != nil {
		q.busy = true
	}
	return s
}

// finished records the outcome of a write; after a success the worker holds nothing to write.
func (q *Queue) finished(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lastErr = err
	if err == nil {
		q.busy = false
	}
}
