package controller

import (
	"cmp"
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// loop is the state of one Run; only Run's goroutine touches it.
type loop struct {
	c *Controller

	// due is when the next sync runs (zero: none scheduled); window is when the current holdoff
	// window opened (zero: none open).
	due, window time.Time
	// retrying is true while a failed sync waits for its backoff; failedAt is when it failed. A
	// change signal then brings the retry forward (it may be the fix), at most to retryOnChange
	// after the failure.
	retrying bool
	failedAt time.Time
	retry    *backoff.ExponentialBackOff

	// lastDesired is the last desired state Update accepted (nil before the first success), and
	// appliedRoutes the Routes it was made of, by "namespace/name".
	lastDesired   *model.Config
	appliedRoutes map[string]*routev1.Route
	// deferredPending: the last Update left deferred server deletions to retry.
	deferredPending bool
	// statusPending: the last status write failed; statusRetry paces the follow-up syncs.
	statusPending bool
	statusRetry   *backoff.ExponentialBackOff
	// driftAfterSync asks for a drift check right after the next successful sync (after a restart).
	driftAfterSync bool
	// reloadAt is when a reload the last sync needed may be sent (zero: none waits). The sync then
	// runs again from a fresh snapshot, so that the reload carries every change made meanwhile.
	reloadAt time.Time
	// refill: a spare pool runs low for the rate of new Routes; the next sync refills it.
	refill bool
	// held is the last list of servers an operator holds (RepairOutcome.Held), to log its changes.
	held string
	// problems are the Routes' Problems at the last sync, to log what changes.
	problems problemLog
	// waitingLogged: the "waiting for the source" line was written.
	waitingLogged bool
	// refused are the Routes HAProxy refused, by "namespace/name", left out of the next syncs.
	refused map[string]refusal
	// translator translates and validates every sync's snapshot, at the cost of what changed since
	// the last one (the sources keep unchanged objects' pointers); a search for refused Routes
	// translates its subsets apart, with mapping.Translate.
	translator incremental
}

func newBackoff(initial, maxInterval time.Duration) *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = initial
	b.MaxInterval = maxInterval
	b.MaxElapsedTime = 0
	b.Reset()
	return b
}

func newLoop(c *Controller) *loop {
	l := &loop{
		c:           c,
		retry:       newBackoff(cmp.Or(c.retryStart, retryInitial), retryMax),
		refused:     map[string]refusal{},
		statusRetry: newBackoff(statusRetryInitial, statusRetryMax),
		problems:    problemLog{},
		translator:  incremental{tr: mapping.NewTranslator(c.Options)},
	}
	for _, r := range c.Refused {
		l.refused[routeKey(r.Route)] = refusal{route: r.Route.DeepCopy(), message: r.Message, at: r.At}
	}
	return l
}

func (l *loop) run(ctx context.Context) error {
	c := l.c
	c.beat()
	log := c.log()
	log.Info("sync loop started", "holdoff", c.holdoff(), "maxHoldoff", c.maxHoldoff(),
		"driftInterval", c.driftInterval())
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	drift := time.NewTicker(c.driftInterval())
	defer drift.Stop()

	// The worker gauge from the first second, not the first periodic check.
	if restart := l.checkProcs(ctx); restart != "" {
		l.restarted(restart)
	}
	// A first sync as soon as the source has synced, even without a change signal.
	l.due = time.Now()
	for {
		if l.due.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(max(time.Until(l.due), 0))
		}
		select {
		case <-ctx.Done():
			log.Info("sync loop stopped")
			return nil
		case <-c.Source.Changes():
			c.beat()
			l.signal(time.Now())
		case <-c.Restarts:
			c.beat()
			l.restarted("HAProxy (re)started by the supervisor")
		case <-timer.C:
			c.beat()
			l.fire(ctx)
		case <-drift.C:
			c.beat()
			l.periodic(ctx)
		}
		c.beat()
	}
}

// signal folds one change signal into the holdoff window: a sync runs Holdoff after the last
// signal, but no later than MaxHoldoff after the first one. During a backoff the change may be the
// fix of what failed: the retry comes forward to Holdoff from now, but not before retryOnChange after
// the failure (so that a busy cluster's changes do not turn a lasting failure into a retry loop);
// the backoff itself keeps growing until a sync succeeds.
func (l *loop) signal(now time.Time) {
	if l.retrying {
		at := now.Add(l.c.holdoff())
		if earliest := l.failedAt.Add(retryOnChange); at.Before(earliest) {
			at = earliest
		}
		if at.Before(l.due) {
			l.due = at
		}
		return
	}
	hold, capAt := l.c.holdoff(), l.c.maxHoldoff()
	if l.window.IsZero() {
		l.window = now
		l.due = now.Add(hold)
		return
	}
	l.due = now.Add(hold)
	if limit := l.window.Add(capAt); l.due.After(limit) {
		l.due = limit
	}
}

// soon schedules a sync at once (or after d), unless one is due earlier or a retry is pending.
func (l *loop) soon(now time.Time, d time.Duration) {
	if l.retrying {
		return
	}
	at := now.Add(d)
	if l.due.IsZero() || at.Before(l.due) {
		l.due = at
	}
	if l.window.IsZero() {
		l.window = now
	}
}

// fire runs the scheduled sync, or keeps polling until the source has synced.
func (l *loop) fire(ctx context.Context) {
	c := l.c
	now := time.Now()
	if !c.Source.HasSynced() {
		if !l.waitingLogged {
			c.log().Info("waiting for the source's first complete snapshot")
			l.waitingLogged = true
		}
		l.due = now.Add(c.holdoff())
		return
	}
	l.window, l.due = time.Time{}, time.Time{}
	err := l.sync(ctx)
	if ctx.Err() != nil {
		return
	}
	now = time.Now()
	if err != nil {
		wait := min(l.retry.NextBackOff(), retryMax) // the jitter would allow 1.5x the cap
		l.retrying, l.failedAt = true, now
		c.syncFailed(now, err)
		l.due = now.Add(wait)
		c.log().Warn("sync failed; retrying", "in", wait.Round(time.Millisecond), "err", err)
		return
	}
	l.retrying = false
	l.retry.Reset()
	c.syncSucceeded()
	switch {
	case !l.reloadAt.IsZero():
		l.soon(now, l.reloadAt.Sub(now))
	case l.refill:
		l.soon(now, 0)
	case l.deferredPending:
		l.soon(now, deferredRetry)
	case l.statusPending:
		l.soon(now, l.statusRetry.NextBackOff())
	}
	if !l.statusPending {
		l.statusRetry.Reset()
	}
}

// restarted handles an HAProxy (re)start the controller did not cause: when HAProxy had been changed
// at runtime since its last start, the HAProxy side forgets its state and the next sync reloads
// (Restart); otherwise HAProxy runs the files on disk, which hold the applied state, and the first
// start of a supervised HAProxy costs no reload. A sync and a drift check follow either way.
func (l *loop) restarted(why string) {
	c := l.c
	l.driftAfterSync = true
	if c.HAProxy.Restarted(why) {
		c.log().Warn("HAProxy restart detected: resyncing with a reload", "reason", why)
	} else {
		c.log().Info("HAProxy started", "reason", why)
	}
	l.soon(time.Now(), 0)
}
