// Package controller keeps one HAProxy in step with a Source (a watched manifest folder or the
// Kubernetes API). One loop owns everything that changes HAProxy: it coalesces change signals into
// one work key (a short holdoff, extended by new signals up to a cap), takes a snapshot, translates
// it, skips the update when the desired state is unchanged, and hands it to the Updater (plan →
// write-through → runtime ops, or a validated reload). Failures are retried with exponential backoff
// and never give up; the desired state is never dropped, since every retry starts from a fresh
// snapshot. The loop also repairs drift (observe, compare, repair through runtime ops), notices
// HAProxy restarts it did not cause, writes Route status, and feeds the metrics and health endpoints
// served by Handler.
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

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
	"github.com/haroute/haroute/sync/source"
)

// Modes of a Controller.
const (
	// ModeRuntime applies changes through runtime ops when the plan allows it (the default).
	ModeRuntime = "runtime"
	// ModeReload makes every change a full validated reload (the stock-router baseline).
	ModeReload = "reload"
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
	// deferredRetry is the wait before retrying server deletions HAProxy deferred (connections still
	// attached).
	deferredRetry = 2 * time.Second
	// statusRetryInitial and statusRetryMax bound the follow-up syncs after a failed status write.
	statusRetryInitial = time.Second
	statusRetryMax     = 30 * time.Second
	// healthSlack is added to twice the drift interval for the liveness check.
	healthSlack = 10 * time.Second
	// healthTimeout bounds the admin socket check of Healthy.
	healthTimeout = 3 * time.Second
)

// Updater brings HAProxy to a desired state; *haproxy.Instance implements it.
type Updater interface {
	// Update plans against the applied state and applies (ops or reload); a reload it may not send
	// yet is left undone (Outcome.ReloadAt).
	Update(ctx context.Context, desired *model.Config) (haproxy.Outcome, error)
	// Refill is Update that also refills the spare pool (after an Outcome with PoolLow).
	Refill(ctx context.Context, desired *model.Config) (haproxy.Outcome, error)
	// Applied is the state HAProxy runs as far as the Updater knows (nil: unknown).
	Applied() *model.Config
	// Forget declares the running state unknown: the next Update reloads from a full render.
	Forget()
}

var _ Updater = (*haproxy.Instance)(nil)

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
	// Updater applies desired states to HAProxy.
	Updater Updater
	// Status writes Route status after every sync; nil writes none.
	Status StatusWriter
	// Admin is the worker's admin socket: health checks and drift repair (nil: neither).
	Admin *socket.Admin
	// Master is the master CLI: worker count and, without Restarts, restart detection (nil: neither).
	Master *socket.Master
	// Restarts receives a value after every (re)start of a supervised HAProxy (managed mode). Nil in
	// sidecar mode: the controller then detects restarts itself through `show proc`.
	Restarts <-chan struct{}
	// Mode is ModeRuntime (default when empty) or ModeReload.
	Mode string
	// Holdoff is the coalescing delay after a change signal (default 50 ms), extended by new signals
	// up to MaxHoldoff after the first one (default 500 ms).
	Holdoff, MaxHoldoff time.Duration
	// DriftInterval is the period of drift checks and `show proc` (default 30 s).
	DriftInterval time.Duration
	// Dir is the absolute HAProxy directory (the Updater's Dir): runtime paths for drift repair.
	Dir string
	// Metrics receives the loop's metrics; nil: a private set.
	Metrics *Metrics
	// Log receives one line per sync; nil discards.
	Log *slog.Logger

	running    atomic.Bool
	lastLoop   atomic.Int64 // unix nanoseconds of the loop's last activity; 0 before Run
	ready      atomic.Bool  // a sync succeeded
	metricsMu  sync.Mutex
	metricsDef *Metrics
}

// Ready reports whether a sync has succeeded (the first desired state is applied).
func (c *Controller) Ready() bool { return c.ready.Load() }

// Healthy returns nil when the loop ran within 2×DriftInterval+10s and the admin socket answers
// `show version`; otherwise an error naming the reason.
func (c *Controller) Healthy(ctx context.Context) error {
	last := c.lastLoop.Load()
	if last == 0 {
		return errors.New("sync loop not running")
	}
	limit := 2*c.driftInterval() + healthSlack
	if age := time.Since(time.Unix(0, last)); age > limit {
		return fmt.Errorf("sync loop stalled: last ran %s ago (limit %s)", age.Round(time.Millisecond), limit)
	}
	if c.Admin == nil {
		return errors.New("no HAProxy admin socket configured")
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	reply, err := c.Admin.Command(ctx, "show version")
	if err != nil {
		return fmt.Errorf("haproxy admin socket: %w", err)
	}
	if reply == "" {
		return errors.New("haproxy admin socket: empty answer to show version")
	}
	return nil
}

// Run runs the loop until ctx ends (nil) or the configuration is unusable (an error). It may be
// called once.
func (c *Controller) Run(ctx context.Context) error {
	if c.Source == nil || c.Updater == nil {
		return errors.New("controller: Source and Updater are required")
	}
	switch c.Mode {
	case "", ModeRuntime, ModeReload:
	default:
		return fmt.Errorf("controller: unknown mode %q (want %s or %s)", c.Mode, ModeRuntime, ModeReload)
	}
	if err := c.Options.Validate(); err != nil {
		return fmt.Errorf("controller: options: %w", err)
	}
	if c.Admin != nil && c.Dir == "" {
		return errors.New("controller: Dir (the HAProxy directory) is required with an admin socket")
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

func (c *Controller) reloadMode() bool { return c.Mode == ModeReload }

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
