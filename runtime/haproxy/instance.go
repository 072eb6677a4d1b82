package haproxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
)

// Defaults of a Config.
const (
	// DefaultBinary is where Debian's package (and OpenShift's router image) install HAProxy.
	DefaultBinary = "/usr/sbin/haproxy"
	// DefaultReloadInterval is OpenShift's RELOAD_INTERVAL default: the least time between reloads.
	DefaultReloadInterval = reload.DefaultMinInterval
)

// Config says where an Instance's HAProxy lives and how to change it.
type Config struct {
	// Dir is the absolute HAProxy directory (conf/, router/, run/).
	Dir string
	// Render holds the template, the default certificate and env; its Dir is set by the Instance
	// (which renders through a render.Renderer, so that each update renders and writes only the
	// backends, maps and certificates that changed).
	Render render.Options
	// Binary checks every configuration before a reload (`haproxy -c`). Empty: no local binary (a
	// sidecar next to HAProxy's own container); the master's reload is then the check, and a refused
	// configuration is rolled back to the last good files (reload.Reloader).
	Binary string
	// AdminSocket and MasterSocket are the worker's runtime API and the master CLI; empty: under Dir
	// (layout.AdminSocket, layout.MasterSocket).
	AdminSocket, MasterSocket string
	// ReloadInterval is the least time between two reloads (RELOAD_INTERVAL); 0: none. A reload that
	// may not be sent yet is left for a later Update (Outcome.ReloadAt).
	ReloadInterval time.Duration
	// ReloadTimeout bounds the wait for a new worker after a reload; 0: reload.DefaultWaitTimeout.
	ReloadTimeout time.Duration
	// ReloadEveryChange makes every change a reload (ReloadMode): the stock router's way, for
	// comparison. Drift is then repaired by a reload too.
	ReloadEveryChange bool
	// AdaptivePool sizes the spare pool from the rate at which new Routes claim spares (plan.Demand
	// over pools of Settings.SparePoolSize) and reports pools that run low (Outcome.PoolLow); a burst
	// of new Routes is then served from spares with one refill reload rather than one per pool.
	// Without it every pool holds Settings.SparePoolSize.
	AdaptivePool bool
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Log receives what the Instance notices on its own (restarts, drift); nil discards.
	Log *slog.Logger
}

// Instance keeps one running HAProxy in step with desired states (see the package documentation).
// Its methods are safe for concurrent use and run one at a time.
type Instance struct {
	cfg      Config
	admin    *socket.Admin
	master   *socket.Master
	reloader *reload.Reloader
	// renderer renders every state (nil until the first render); writer writes runtime plans' files
	// through, and learns the files reloads and starts wrote.
	renderer *render.Renderer
	writer   *reload.Writer
	// demand is the spare pool's demand (AdaptivePool), made from the first desired state's settings.
	demand *plan.Demand

	mu sync.Mutex
	// applied is the state HAProxy runs (nil: unknown, the next Update reloads with reason unknown).
	applied *model.Config
	unknown plan.Reason
	// appliedMasks are the runtime masks (render.Renderer.Masks) of the configuration files written
	// for applied, by path (nil: unknown).
	appliedMasks map[string][]byte
	// lastReload is how long the last reload took (render to confirmed worker).
	lastReload time.Duration
	// touched: HAProxy was changed at runtime (ops, a reload, or a failure) since its last (re)start,
	// so a restart loses state.
	touched bool
	// adopted: Adopt found an HAProxy running before WriteInitial, which then records nothing.
	adopted bool
	// procs is the process set last seen, for restart detection (Processes).
	procs *procSnapshot
	// base is what the next plan may start from (plan.ComputeDelta).
	base planBase
	// caps are the capabilities of the HAProxy that runs (nil until read from its socket; cleared
	// when its state is forgotten or it reloads, which a new binary needs).
	caps *socket.Capabilities
	// spares are the free spares of a state, per pool (freeSpares).
	spares struct {
		of   *model.Config
		free map[plan.PoolKey]int
	}
}

// planBase is the desired state whose plan HAProxy runs: applied is that plan's Next (the very
// pointer; any other applied state voids the base), except for the backends in dirty.
type planBase struct {
	desired, applied *model.Config
	dirty            map[string]bool
}

// New returns an Instance for the HAProxy whose files live in c.Dir. Nothing is read or written.
func New(c Config) (*Instance, error) {
	if !filepath.IsAbs(c.Dir) {
		return nil, fmt.Errorf("haproxy: directory %q: want an absolute path", c.Dir)
	}
	c.Dir = filepath.Clean(c.Dir)
	if c.AdminSocket == "" {
		c.AdminSocket = layout.For(c.Dir).AdminSocket()
	}
	if c.MasterSocket == "" {
		c.MasterSocket = layout.For(c.Dir).MasterSocket()
	}
	c.Render.Dir = c.Dir
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	i := &Instance{
		cfg:     c,
		admin:   socket.NewAdmin(c.AdminSocket, socket.Options{}),
		master:  socket.NewMaster(c.MasterSocket, socket.Options{}),
		writer:  reload.NewWriter(c.Dir),
		unknown: plan.Reason{Kind: plan.Initial},
	}
	i.reloader = reload.New(c.Binary, c.Dir, i.master)
	i.reloader.MinInterval = c.ReloadInterval
	if c.ReloadTimeout > 0 {
		i.reloader.WaitTimeout = c.ReloadTimeout
	}
	i.cfg.Render = c.Render
	return i, nil
}

// Dir returns the HAProxy directory.
func (i *Instance) Dir() string { return i.cfg.Dir }

// Outcome is what one Update did.
type Outcome struct {
	Plan plan.Plan
	// Delta is true when the plan came from plan.ComputeDelta: only the backends that changed since
	// the last desired state were planned.
	Delta bool
	// Reason is the one reason of a reload made or deferred (ReloadAt): the plan's first structural
	// reason, or RuntimeFallback. Zero when no reload was needed.
	Reason plan.Reason
	// Reloaded is true when HAProxy was reloaded: a structural plan, or a fallback.
	Reloaded bool
	// Fallback is the runtime-path error that made the Instance reload instead (nil otherwise), and
	// FailedOp the name of the op that failed (apply.OpName; "" when none did).
	Fallback error
	FailedOp string
	// Refused are the Routes HAProxy named when it refused the update (its configuration check or
	// reload, or the runtime op that failed before the fallback): serving the others means leaving
	// them out.
	Refused []Refused
	// Result is what the runtime ops did (empty for a structural plan).
	Result apply.Result
	// ReloadAt is set when the plan needs a reload that may not be sent before then
	// (ReloadInterval). Nothing was rendered or changed: call Update again at ReloadAt with the
	// newest desired state, so that the reload carries every change made meanwhile.
	ReloadAt time.Time
	// PoolLow lists the spare pools that, at the rate new Routes claim them (Demand), run out before
	// a refill could land: call Refill soon.
	PoolLow []plan.PoolKey
}

// Applied returns the state HAProxy runs, as the Instance knows it (nil when unknown: the next
// Update reloads). Callers must not modify it.
func (i *Instance) Applied() *model.Config {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.applied
}

// Update brings HAProxy to desired (a Translate result). On an error the returned Outcome says how
// far it got; when HAProxy's state may be anything, Applied is nil and the next Update reloads. A
// reload that may not be sent yet is not made (Outcome.ReloadAt).
func (i *Instance) Update(ctx context.Context, desired *model.Config) (Outcome, error) {
	return i.update(ctx, desired, false)
}

// Refill is Update that also refills the spare pool ahead of demand: a reload (plan.PoolRefill) when
// a pool holds fewer free spares than Demand sizes it to. Call it after an Outcome with PoolLow.
func (i *Instance) Refill(ctx context.Context, desired *model.Config) (Outcome, error) {
	return i.update(ctx, desired, true)
}

// refillMargin is the least time a refill reload is expected to take, for PoolLow.
const refillMargin = time.Second

func (i *Instance) now() time.Time {
	if i.cfg.Now != nil {
		return i.cfg.Now()
	}
	return time.Now()
}

// planOptions are the plan options of an update towards desired at now.
func (i *Instance) planOptions(desired *model.Config, now time.Time, refill bool) plan.Options {
	o := plan.Options{Unknown: i.unknown, ReloadEveryChange: i.cfg.ReloadEveryChange}
	if i.cfg.AdaptivePool && i.demand == nil {
		i.demand = plan.NewDemand(desired.Settings.SparePoolSize)
	}
	if i.demand != nil {
		o.PoolSizes = i.demand.Sizes(now)
		o.Refill = refill
	}
	return o
}

func (i *Instance) update(ctx context.Context, desired *model.Config, refill bool) (Outcome, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	now := i.now()
	opts := i.planOptions(desired, now, refill)
	opts.DynamicBackends = i.dynamicBackends(ctx)
	var out Outcome
	out.Plan, out.Delta = i.plan(desired, opts)
	if r, ok := i.crlNeedsReload(ctx, out.Plan); ok {
		out.Plan = plan.Reload(desired, opts, r)
	}
	var files []render.File
	var masks map[string][]byte
	if !out.Plan.NeedsReload() {
		var err error
		if files, masks, err = i.render(out.Plan.Next); err != nil {
			return out, err
		}
		if r, changed := templateChanged(i.appliedMasks, masks); changed {
			out.Plan = plan.Reload(desired, opts, r)
		}
	}
	if out.Plan.NeedsReload() {
		out.Reason = out.Plan.Reason()
		if at := i.reloader.ReadyAt(); at.After(now) {
			out.ReloadAt = at
			return out, nil
		}
		var err error
		if files, masks, err = i.render(out.Plan.Next); err != nil {
			return out, err
		}
		err = i.reload(ctx, files, masks, out.Plan.Next, &out)
		i.rebase(desired, out, err)
		return out, err
	}
	err := i.runtime(ctx, files, masks, now, &out)
	i.rebase(desired, out, err)
	return out, err
}

// capsProbeTimeout bounds the `show info` that reads the capabilities of the HAProxy that runs.
const capsProbeTimeout = time.Second

// dynamicBackends reports whether the HAProxy that runs adds and deletes backends at runtime
// (socket.Capabilities.DynamicBackends, 3.4+) safely (SafeBackendDeletion, 3.4.4+), reading its
// version once per process set. An HAProxy
// that does not answer, or does not say its version, is planned for as one that cannot: the spare
// pool serves new Routes there.
func (i *Instance) dynamicBackends(ctx context.Context) bool {
	if i.caps == nil {
		// One attempt, bounded: an HAProxy that does not answer now (restarting) is planned for
		// without runtime backends rather than holding the update up.
		probe := socket.NewAdmin(i.admin.Path(), socket.Options{RetryFor: -1, Timeout: capsProbeTimeout})
		caps, err := socket.DetectCapabilities(ctx, probe)
		if err != nil {
			return false
		}
		i.caps = &caps
	}
	return i.caps.DynamicBackends && i.caps.SafeBackendDeletion
}

// crlNeedsReload reports the reason to reload instead of running p, when p changes the client CRLs
// at runtime on an HAProxy that would lose its runtime certificate updates after that
// (socket.Capabilities.RuntimeCRLFile). An HAProxy that does not say its version is left to the
// runtime path (and its fallback).
func (i *Instance) crlNeedsReload(ctx context.Context, p plan.Plan) (plan.Reason, bool) {
	if p.NeedsReload() || !slices.ContainsFunc(p.Ops, func(op plan.Op) bool {
		o, ok := op.(plan.SetListenerFile)
		return ok && o.File == plan.ClientCRLFile
	}) {
		return plan.Reason{}, false
	}
	caps, err := socket.DetectCapabilities(ctx, i.admin)
	if err != nil || caps.RuntimeCRLFile {
		return plan.Reason{}, false
	}
	return plan.Reason{Kind: plan.ListenerChanged, Subject: string(plan.ClientCRLFile),
		Detail: "HAProxy " + caps.Version.String() + " keeps serving old certificates after a runtime CRL update (3.2 does not)"}, true
}

// plan plans the way from the applied state to desired: plan.ComputeDelta when HAProxy runs the
// plan of an earlier desired state (the base), which costs what changed; else plan.ComputeWith.
func (i *Instance) plan(desired *model.Config, opts plan.Options) (plan.Plan, bool) {
	if b := i.base; b.desired != nil && i.applied != nil && b.applied == i.applied {
		if p, ok := plan.ComputeDelta(i.applied, b.desired, desired, b.dirty, opts); ok {
			return p, true
		}
	}
	return plan.ComputeWith(i.applied, desired, opts), false
}

// rebase records desired as the base of the next plan once HAProxy runs its plan: after a reload
// that installed the plan's Next as it is, or after runtime ops (backends with deferred deletions
// differ from the plan, and those that lost their Route still have servers: they are dirty). Anything else voids the base.
func (i *Instance) rebase(desired *model.Config, out Outcome, err error) {
	i.base = planBase{}
	switch {
	case err != nil || i.applied == nil:
	case out.Reloaded:
		if i.applied == out.Plan.Next {
			i.base = planBase{desired: desired, applied: i.applied}
		}
	default:
		var dirty map[string]bool
		mark := func(name string) {
			if dirty == nil {
				dirty = map[string]bool{}
			}
			dirty[name] = true
		}
		for _, d := range out.Result.Deferred {
			mark(d.Backend)
		}
		for _, b := range out.Result.DeferredBackends {
			mark(b)
		}
		// Backends that lost their Route keep their servers until the next plan removes them.
		for _, name := range plan.Draining(i.applied) {
			mark(name)
		}
		i.base = planBase{desired: desired, applied: i.applied, dirty: dirty}
	}
}

// runtime writes the files of a runtime plan through and applies its ops; a failed op falls back
// to a reload of those files.
func (i *Instance) runtime(ctx context.Context, files []render.File, masks map[string][]byte, now time.Time, out *Outcome) error {
	next := out.Plan.Next
	paths, err := render.PathsFor(next, i.cfg.Dir)
	if err != nil {
		return fmt.Errorf("runtime paths: %w", err)
	}
	release := i.reloader.HoldOps()
	if err := i.writer.Write(files); err != nil {
		release()
		// Some files may be new already: a later reload must rewrite them all.
		i.forget(plan.Reason{Kind: plan.Initial, Detail: "the files could not be written: " + err.Error()})
		return fmt.Errorf("write-through: %w", err)
	}
	res, err := i.apply(ctx, next, paths, out.Plan.Ops)
	release()
	out.Result = res
	// Stopping the checks HAProxy started is part of any start from these files: it does not
	// make HAProxy differ from them.
	if (res.Applied > 0 || len(res.Deferred) > 0 || err != nil) && !plan.OnlyDormantChecks(out.Plan.Ops) {
		i.touched = true
	}
	if err != nil {
		out.Fallback = err
		var opErr *apply.OpError
		if errors.As(err, &opErr) {
			out.FailedOp = apply.OpName(opErr.Op)
		}
		out.Reason = plan.Reason{Kind: plan.RuntimeFallback, Detail: err.Error()}
		return i.reload(ctx, files, masks, next, out)
	}
	// HAProxy took every op of these files: a failed reload later puts them back, not newer ones.
	i.reloader.Accepted(files)
	if d := i.demand; d != nil && (i.caps == nil || !i.caps.DynamicBackends) {
		for k, n := range claims(i.applied, next) {
			d.Record(k, n, now)
		}
		out.PoolLow = i.lowPools(next, now)
	}
	i.applied = withDeferred(next, i.applied, res.Deferred, res.DeferredBackends)
	i.appliedMasks = masks
	return nil
}

// apply carries out ops; while they delete backends (HAProxy 3.4+) it holds the deletion lock
// (socket.LockDeletions), so that no dump of backends or servers, of this process or `haroute
// state`, runs meanwhile.
func (i *Instance) apply(ctx context.Context, next *model.Config, paths render.RuntimePaths, ops []plan.Op) (apply.Result, error) {
	if slices.ContainsFunc(ops, func(op plan.Op) bool {
		switch op.(type) {
		case plan.UnpublishBackend, plan.DelBackend:
			return true
		}
		return false
	}) {
		unlock, err := socket.LockDeletions(ctx, i.admin.Path())
		if err != nil {
			return apply.Result{}, fmt.Errorf("backend deletions: %w", err)
		}
		defer unlock()
	}
	return apply.Apply(ctx, i.admin, next, paths, i.cfg.Dir, ops)
}

// render renders next through the Instance's Renderer and returns its files and their runtime masks.
func (i *Instance) render(next *model.Config) ([]render.File, map[string][]byte, error) {
	if i.renderer == nil {
		r, err := render.NewRenderer(i.cfg.Render)
		if err != nil {
			return nil, nil, err
		}
		i.renderer = r
	}
	files, err := i.renderer.Render(next)
	if err != nil {
		return nil, nil, err
	}
	masks, err := i.renderer.Masks()
	if err != nil {
		return nil, nil, fmt.Errorf("render: %w", err)
	}
	return files, masks, nil
}

// reload installs files with a validated reload. On success HAProxy runs next exactly (a reload drops
// runtime leftovers such as deferred servers). A refused config or a failed reload leaves the old
// worker serving the last good files; after a fallback, or when the outcome is unknown, the applied
// state is unknown.
func (i *Instance) reload(ctx context.Context, files []render.File, masks map[string][]byte, next *model.Config, out *Outcome) error {
	i.touched = true
	res, err := i.reloader.Reload(ctx, files)
	if err == nil {
		i.writer.Known(files)
	} else {
		i.writer.Forget() // the last good files may be back, or anything in between
	}
	if err == nil {
		i.applied, i.appliedMasks, i.unknown = plan.AsStarted(next), masks, plan.Reason{Kind: plan.Initial}
		out.Reloaded, i.lastReload, i.caps = true, res.Duration, nil
		i.refreshProcs(ctx)
		// The new worker runs every configured check; stop the ones next has off now. If that
		// fails, the applied state says so and the next Update stops them.
		if err := StopDormantChecks(ctx, i.admin, next, i.cfg.Dir); err != nil {
			i.cfg.Log.Warn("the health checks of single-endpoint backends still run after the reload; the next sync stops them", "error", err)
		} else {
			i.applied = next
		}
		return nil
	}
	if errors.Is(err, reload.ErrInvalidConfig) || errors.Is(err, reload.ErrReloadFailed) {
		text := err.Error()
		if out.Fallback != nil {
			text = out.Fallback.Error() + "\n" + text
		}
		out.Refused = blame(text, files, next)
	}
	if out.Fallback != nil || errors.Is(err, reload.ErrReloadTimeout) || !errors.Is(err, reload.ErrInvalidConfig) && !errors.Is(err, reload.ErrReloadFailed) {
		i.forget(plan.Reason{Kind: plan.Initial, Detail: "HAProxy's state is unknown after: " + err.Error()})
	}
	if out.Fallback != nil {
		return fmt.Errorf("runtime update failed (%w) and the fallback reload failed too: %w", out.Fallback, err)
	}
	return fmt.Errorf("reload: %w", err)
}

// forget declares HAProxy's state unknown for reason r: the next Update reloads, labelled r.
func (i *Instance) forget(r plan.Reason) {
	i.applied, i.appliedMasks, i.unknown, i.caps = nil, nil, r, nil
}
