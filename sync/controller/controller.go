// Package controller keeps one HAProxy in step with a Source (a watched manifest folder or the
// Kubernetes API). One loop owns everything that changes HAProxy: it coalesces change signals into
// one work key (a short holdoff, extended by new signals up to a cap), takes a snapshot, translates
// it, skips the update when the desired state is unchanged, and hands it to the HAProxy side
// (runtime/haproxy: plan, write-through, runtime ops or a validated reload, each reload with one
// typed reason). Failures are retried with exponential backoff and never give up; the desired state
// is never dropped, since every retry starts from a fresh snapshot. The loop also asks for drift
// repair, notices HAProxy restarts it did not cause (from a supervisor or from HAProxy's process
// list), hands Route status to its writer, and feeds the metrics and health endpoints served by
// Handler.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/sync/source"
)

// Defaults of the timing fields.
const (
	DefaultHoldoff       = 50 * time.Millisecond
	DefaultMaxHoldoff    = 500 * time.Millisecond
	DefaultDriftInterval = 30 * time.Second
)

// Retry timing (cenkalti/backoff/v4): failed syncs are retried forever.
const (
	retryInitial = 100 * time.Millisecond
	retryMax     = 30 * time.Second
	// retryOnChange is the least time between a failed sync and a retry that a change brings forward.
	retryOnChange = time.Second
	// deferredRetry is the wait before retrying server deletions HAProxy deferred (connections still
	// attached).
	deferredRetry = 2 * time.Second
	// statusRetryInitial and statusRetryMax bound the follow-up syncs after a failed status write.
	statusRetryInitial = time.Second
	statusRetryMax     = 30 * time.Second
	// healthSlack is added to twice the drift interval for the liveness check.
	healthSlack = 10 * time.Second
)

// HAProxy is the HAProxy side as the controller sees it; *haproxy.Instance implements it.
type HAProxy interface {
	// Update plans against the applied state and applies (ops or reload); a reload it may not send
	// yet is left undone (Outcome.ReloadAt).
	Update(ctx context.Context, desired *model.Config) (haproxy.Outcome, error)
	// Refill is Update that also refills the spare pool (after an Outcome with PoolLow).
	Refill(ctx context.Context, desired *model.Config) (haproxy.Outcome, error)
	// Repair compares what HAProxy serves with the applied state and repairs the difference, or
	// leaves a reload to the next Update (RepairOutcome.Resync).
	Repair(ctx context.Context) (haproxy.RepairOutcome, error)
	// Restarted declares an HAProxy (re)start the controller did not cause; true when the runtime
	// changes are lost and the next Update reloads.
	Restarted(why string) bool
	// Processes lists HAProxy's workers and reports restarts made by others.
	Processes(ctx context.Context) (haproxy.Processes, error)
	// Ping checks that HAProxy's admin socket answers.
	Ping(ctx context.Context) error
	// Applied is the state HAProxy runs as far as the Instance knows (nil: unknown).
	Applied() *model.Config
}

var _ HAProxy = (*haproxy.Instance)(nil)

// StatusWriter writes Route status; *status.Queue implements it (off the sync path: Apply only records
// what to write), and so does *status.Writer (inline).
type StatusWriter interface {
	Apply(ctx context.Context, routes []*routev1.Route, cfg *model.Config, problems []mapping.Problem) error
}

// Controller is the sync loop of `haroute run`. Set the fields, then call Run once; Ready, Healthy
// and Handler may be used concurrently with Run. The caller runs the Source (Source.Run) itself.
type Controller struct {
	// Source provides snapshots and change signals.
	Source source.Source
	// Options are the translation options (ROUTER_* settings).
	Options mapping.Options
	// HAProxy applies desired states to HAProxy and repairs drift.
	HAProxy HAProxy
	// Refused are Routes HAProxy refused before Run (WriteFirst): the syncs leave them out until they
	// change, as they leave out the Routes they find refused.
	Refused []Refusal
	// Status writes Route status after every sync; nil writes none.
	Status StatusWriter
	// Restarts receives a value after every (re)start of a supervised HAProxy (managed mode). Nil in
	// sidecar mode: the controller then learns of restarts from HAProxy.Processes.
	Restarts <-chan struct{}
	// Holdoff is the coalescing delay after a change signal (default 50 ms), extended by new signals
	// up to MaxHoldoff after the first one (default 500 ms).
	Holdoff, MaxHoldoff time.Duration
	// DriftInterval is the period of drift checks and process checks (default 30 s).
	DriftInterval time.Duration
	// Metrics receives the loop's metrics; nil: a private set.
	Metrics *Metrics
	// Log receives one line per sync; nil discards.
	Log *slog.Logger
	// RunSettings, when set, are served on the state socket (stateapi.State.RunSettings).
	RunSettings *stateapi.RunSettings

	running  atomic.Bool
	lastLoop atomic.Int64 // unix nanoseconds of the loop's last activity; 0 before Run
	ready    atomic.Bool  // a sync succeeded
	failing  atomic.Pointer[Failing]
	// retryStart overrides retryInitial (tests that need a long backoff); 0: retryInitial.
	retryStart time.Duration
	metricsMu  sync.Mutex
	metricsDef *Metrics
	state      stateRecorder
}

// Ready reports whether a sync has succeeded (the first desired state is applied).
func (c *Controller) Ready() bool { return c.ready.Load() }

// Failing describes syncs that keep failing: how many in a row, since when, and the last error.
// HAProxy keeps serving the last state it took meanwhile.
type Failing struct {
	Since time.Time
	Count int
	Err   string
}

// Failing returns the current run of failed syncs, nil when the last sync succeeded.
func (c *Controller) Failing() *Failing { return c.failing.Load() }

// syncFailed records a failed sync; syncSucceeded ends the run.
func (c *Controller) syncFailed(now time.Time, err error) {
	f := &Failing{Since: now, Count: 1, Err: err.Error()}
	if prev := c.failing.Load(); prev != nil {
		f.Since, f.Count = prev.Since, prev.Count+1
	}
	c.failing.Store(f)
}

func (c *Controller) syncSucceeded() { c.failing.Store(nil) }

// Healthy returns nil when the loop ran within 2×DriftInterval+10s and HAProxy answers (Ping);
// otherwise an error naming the reason.
func (c *Controller) Healthy(ctx context.Context) error {
	last := c.lastLoop.Load()
	if last == 0 {
		return errors.New("sync loop not running")
	}
	limit := 2*c.driftInterval() + healthSlack
	if age := time.Since(time.Unix(0, last)); age > limit {
		return fmt.Errorf("sync loop stalled: last ran %s ago (limit %s)", age.Round(time.Millisecond), limit)
	}
	return c.HAProxy.Ping(ctx)
}

// Run runs the loop until ctx ends (nil) or the configuration is unusable (an error). It may be
// called once.
func (c *Controller) Run(ctx context.Context) error {
	if c.Source == nil || c.HAProxy == nil {
		return errors.New("controller: Source and HAProxy are required")
	}
	if err := c.Options.Validate(); err != nil {
		return fmt.Errorf("controller: options: %w", err)
	}
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("controller: Run called twice")
	}
	l := newLoop(c)
	return l.run(ctx)
}

func (c *Controller) holdoff() time.Duration {
	if c.Holdoff > 0 {
		return c.Holdoff
	}
	return DefaultHoldoff
}

func (c *Controller) maxHoldoff() time.Duration {
	m := c.MaxHoldoff
	if m <= 0 {
		m = DefaultMaxHoldoff
	}
	return max(m, c.holdoff())
}

func (c *Controller) driftInterval() time.Duration {
	if c.DriftInterval > 0 {
		return c.DriftInterval
	}
	return DefaultDriftInterval
}

func (c *Controller) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

// metrics returns c.Metrics, or a private set made on first use.
func (c *Controller) metrics() *Metrics {
	if c.Metrics != nil {
		return c.Metrics
	}
	c.metricsMu.Lock()
	defer c.metricsMu.Unlock()
	if c.metricsDef == nil {
		c.metricsDef = NewMetrics()
	}
	return c.metricsDef
}

func (c *Controller) beat() { c.lastLoop.Store(time.Now().UnixNano()) }
