// Package haproxy owns the HAProxy side of haroute: it keeps one running HAProxy in step with the
// desired state (plan, render, write-through, runtime ops or a validated reload).
package haproxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
)

// Instance keeps one running HAProxy in step with a sequence of desired states: it plans against what
// HAProxy runs, renders the plan's Next and writes the files first (write-through, so a reload or a
// restart reproduces the state), then applies the runtime ops — or reloads, when the plan is
// structural or when any runtime op fails (the files already hold the target). Deletions HAProxy
// defers (connections attached) stay in the applied state as maint servers, so the next plan retries
// them, and a server that desired brings back is re-enabled rather than re-added.
//
// A structural plan that the Reloader may not send yet (RELOAD_INTERVAL) is left for the caller to
// plan again when it may (Outcome.ReloadAt), so that the reload carries the newest state rather than
// files rendered before the wait. With a Demand, the spare pool grows with the rate of new Routes and
// the Instance says when a pool should be refilled ahead of demand (Outcome.PoolLow, then Refill).
//
// An Instance is not safe for concurrent use; the controller calls Update from one loop.
type Instance struct {
	// Dir is the absolute HAProxy directory the files are written to.
	Dir string
	// Render holds the template, default certificate and env; its Dir is set from Dir. Without a
	// Cache, the Instance keeps its own, so each update renders only the backends that changed.
	Render   render.Options
	Admin    *socket.Admin
	Reloader *reload.Reloader
	// Demand, when set, sizes the spare pool from the rate at which new Routes claim spares (see
	// plan.Demand): the Instance records its claims and reports pools that run low (Outcome.PoolLow).
	// Nil keeps every pool at Settings.SparePoolSize.
	Demand *plan.Demand
	// Now is the clock; nil: time.Now.
	Now func() time.Time

	applied *model.Config
	cache   *render.BlockCache
	// lastReload is how long the last reload took (render to confirmed worker).
	lastReload time.Duration
}

// Outcome is what one Update did.
type Outcome struct {
	Plan plan.Plan
	// Reloaded is true when HAProxy was reloaded: a structural plan, or a fallback.
	Reloaded bool
	// Fallback is the runtime-path error that made the Instance reload instead (nil otherwise).
	Fallback error
	// Result is what the runtime ops did (empty for a structural plan).
	Result apply.Result
	// ReloadAt is set when the plan needs a reload that may not be sent before then (the Reloader's
	// MinInterval, RELOAD_INTERVAL). Nothing was rendered or changed: call Update again at ReloadAt
	// with the newest desired state, so that the reload carries every change made meanwhile.
	ReloadAt time.Time
	// PoolLow lists the spare pools that, at the rate new Routes claim them (Demand), run out before
	// a refill could land: call Refill soon.
	PoolLow []plan.PoolKey
}

// Applied returns the state HAProxy runs, as the Instance knows it (nil when unknown). Callers must
// not modify it.
func (i *Instance) Applied() *model.Config { return i.applied }

// SetApplied declares what HAProxy runs, e.g. after the caller started it from files rendered from
// state (which must be a plan's Next).
func (i *Instance) SetApplied(state *model.Config) { i.applied = state }

// Forget declares the running state unknown (HAProxy restarted, drift found that ops cannot fix):
// the next Update reloads from a full render.
func (i *Instance) Forget() { i.applied = nil }

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
	if i.Now != nil {
		return i.Now()
	}
	return time.Now()
}

func (i *Instance) update(ctx context.Context, desired *model.Config, refill bool) (Outcome, error) {
	now := i.now()
	opts := plan.Options{Refill: refill && i.Demand != nil}
	if i.Demand != nil {
		opts.PoolSizes = i.Demand.Sizes(now)
	}
	out := Outcome{Plan: plan.ComputeWith(i.applied, desired, opts)}
	next := out.Plan.Next
	if out.Plan.NeedsReload() {
		if at := i.Reloader.ReadyAt(); at.After(now) {
			out.ReloadAt = at
			return out, nil
		}
	}
	ro := i.Render
	ro.Dir = i.Dir
	if ro.Cache == nil {
		if i.cache == nil {
			i.cache = render.NewBlockCache()
		}
		ro.Cache = i.cache
	}
	files, err := render.Render(next, ro)
	if err != nil {
		return out, fmt.Errorf("render: %w", err)
	}
	if out.Plan.NeedsReload() {
		return out, i.reload(ctx, files, next, &out)
	}
	paths, err := render.PathsFor(next, i.Dir)
	if err != nil {
		return out, fmt.Errorf("runtime paths: %w", err)
	}

	release := i.Reloader.HoldOps()
	if err := reload.WriteFiles(i.Dir, files); err != nil {
		release()
		// Some files may be new already: a later reload must rewrite them all.
		i.applied = nil
		return out, fmt.Errorf("write-through: %w", err)
	}
	res, err := apply.Apply(ctx, i.Admin, next, paths, i.Dir, out.Plan.Ops)
	release()
	out.Result = res
	if err != nil {
		out.Fallback = err
		return out, i.reload(ctx, files, next, &out)
	}
	if i.Demand != nil {
		for k, n := range claims(i.applied, next) {
			i.Demand.Record(k, n, now)
		}
		out.PoolLow = i.lowPools(next, now)
	}
	i.applied = withDeferred(next, i.applied, res.Deferred)
	return out, nil
}

// claims counts, per pool, the spares that next claims and applied had free.
func claims(applied, next *model.Config) map[plan.PoolKey]int {
	out := map[plan.PoolKey]int{}
	for i := range next.Backends {
		b := &next.Backends[i]
		if !b.Spare || b.Route == "" {
			continue
		}
		if a := applied.Backend(b.Name); a != nil && a.Route == "" {
			out[plan.PoolKey{Kind: b.Kind, Balance: b.Balance}]++
		}
	}
	return out
}

// lowPools returns the pools of next that Demand finds low, given how long a refill would take: the
// wait until a reload may be sent, plus twice the last reload (at least refillMargin).
func (i *Instance) lowPools(next *model.Config, now time.Time) []plan.PoolKey {
	lead := max(refillMargin, 2*i.lastReload)
	if at := i.Reloader.ReadyAt(); at.After(now) {
		lead += at.Sub(now)
	}
	free := plan.FreeSpares(next)
	var out []plan.PoolKey
	for _, k := range plan.Pools(&next.Settings) {
		if i.Demand.Low(k, free[k], now, lead) {
			out = append(out, k)
		}
	}
	return out
}

// reload installs files with a validated reload. On success HAProxy runs next exactly (a reload drops
// runtime leftovers such as deferred servers). A refused config or a failed reload leaves the old
// worker serving the last good files; after a fallback, or when the outcome is unknown, the applied
// state is unknown.
func (i *Instance) reload(ctx context.Context, files []render.File, next *model.Config, out *Outcome) error {
	res, err := i.Reloader.Reload(ctx, files)
	if err == nil {
		i.applied, out.Reloaded, i.lastReload = next, true, res.Duration
		return nil
	}
	if out.Fallback != nil || errors.Is(err, reload.ErrReloadTimeout) || !errors.Is(err, reload.ErrInvalidConfig) && !errors.Is(err, reload.ErrReloadFailed) {
		i.applied = nil
	}
	if out.Fallback != nil {
		return fmt.Errorf("runtime update failed (%w) and the fallback reload failed too: %w", out.Fallback, err)
	}
	return fmt.Errorf("reload: %w", err)
}

// withDeferred returns next with the servers whose deletion HAProxy deferred put back, in maint, as
// they were in prev. next is not modified (it shares slices with the desired state).
func withDeferred(next, prev *model.Config, deferred []plan.DelServer) *model.Config {
	if len(deferred) == 0 || prev == nil {
		return next
	}
	out := *next
	out.Backends = slices.Clone(next.Backends)
	for _, d := range deferred {
		old := prev.Backend(d.Backend)
		b := out.Backend(d.Backend)
		if old == nil || b == nil {
			continue
		}
		var srv *model.Server
		for j := range old.Servers {
			if old.Servers[j].Name == d.Server {
				srv = &old.Servers[j]
			}
		}
		k := sort.Search(len(b.Servers), func(k int) bool { return b.Servers[k].Name >= d.Server })
		if srv == nil || (k < len(b.Servers) && b.Servers[k].Name == d.Server) {
			continue
		}
		kept := *srv
		kept.State = model.StateMaint
		b.Servers = slices.Insert(slices.Clone(b.Servers), k, kept)
	}
	return &out
}
