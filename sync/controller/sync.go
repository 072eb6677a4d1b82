package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/haproxy"
)

// syncReport is what one sync did, for its log line and metrics.
type syncReport struct {
	changed  bool
	updated  bool
	delta    delta
	outcome  haproxy.Outcome
	problems int
	fileErrs int
	status   error
	// reloadReason labels a reload (haroute_reloads_total's reason).
	reloadReason string
	duration     time.Duration
}

// sync takes a snapshot, translates it and, when the desired state changed (or HAProxy's state is
// unknown, or deferred deletions wait), updates HAProxy; then it writes Route status.
func (l *loop) sync(ctx context.Context) error {
	c := l.c
	start := time.Now()
	var rep syncReport
	err := l.syncOnce(ctx, &rep)
	rep.duration = time.Since(start)
	m := c.metrics()
	m.SyncDuration.Observe(rep.duration.Seconds())
	if ctx.Err() != nil {
		return err
	}
	l.logSync(rep, err)
	if err != nil {
		return err
	}
	c.ready.Store(true)
	if l.driftAfterSync {
		l.driftAfterSync = false
		l.checkDrift(ctx)
	}
	return nil
}

func (l *loop) syncOnce(ctx context.Context, rep *syncReport) error {
	c := l.c
	in, fileErrs := c.Source.Snapshot()
	rep.fileErrs = len(fileErrs)
	desired, problems := mapping.Translate(in, c.Options)
	for _, p := range problems {
		if !p.Warning {
			rep.problems++
		}
	}
	if err := desired.Validate(); err != nil {
		return fmt.Errorf("translate gave an invalid config: %w", err)
	}
	rep.changed = l.lastDesired == nil || !reflect.DeepEqual(desired, l.lastDesired)
	rep.delta = diff(l.lastDesired, desired)
	if rep.changed || l.deferredPending || l.refill || c.Updater.Applied() == nil {
		if err := l.update(ctx, desired, rep); err != nil {
			return err
		}
	}
	if c.Status != nil {
		if err := c.Status.Apply(ctx, in.Routes, desired, problems); err != nil {
			rep.status = err
			l.statusPending = true
		} else {
			l.statusPending = false
		}
	}
	return nil
}

// update hands desired to the Updater and records what it did.
func (l *loop) update(ctx context.Context, desired *model.Config, rep *syncReport) error {
	c := l.c
	if c.reloadMode() && rep.changed {
		// Every change is a full validated reload: no runtime ops in this mode.
		applied := c.Updater.Applied()
		if applied == nil {
			l.forget(ModeReload)
		} else if p := plan.Compute(applied, desired); p.NeedsReload() || len(p.Ops) > 0 {
			l.forget(ModeReload)
		}
	}
	rep.updated = true
	start := time.Now()
	update := c.Updater.Update
	if l.refill {
		update = c.Updater.Refill
	}
	out, err := update(ctx, desired)
	took := time.Since(start)
	rep.outcome = out
	l.reloadAt = out.ReloadAt
	if !out.ReloadAt.IsZero() {
		// Nothing changed: plan again from a fresh snapshot when the reload may be sent.
		return nil
	}
	if out.Reloaded {
		rep.reloadReason = l.reloadReason(out)
	}
	l.recordOutcome(out, err, took)
	if err != nil || out.Reloaded || out.Result.Applied > 0 || len(out.Result.Deferred) > 0 {
		l.touched = true
	}
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	l.lastDesired = desired
	l.deferredPending = len(out.Result.Deferred) > 0
	l.refill = len(out.PoolLow) > 0
	if out.Reloaded {
		l.forgetReason = ""
		l.refreshProcs(ctx)
	}
	return nil
}

// recordOutcome feeds the metrics from one Update.
func (l *loop) recordOutcome(out haproxy.Outcome, err error, took time.Duration) {
	m := l.c.metrics()
	recordOps(m, out.Result)
	var opErr *apply.OpError
	if errors.As(out.Fallback, &opErr) {
		m.RuntimeOps.WithLabelValues(apply.OpName(opErr.Op), "error").Inc()
	}
	switch {
	case out.Reloaded:
		m.Reloads.WithLabelValues(l.reloadReason(out)).Inc()
		m.ReloadSeconds.Observe(took.Seconds())
	case err == nil && !out.ReloadAt.IsZero():
		// Planned only: the reload waits for the reload interval.
	case err == nil:
		// Plan, render and write-through: the Update's time without its runtime ops.
		m.WriteConfigSeconds.Observe(max(took-out.Result.Duration, 0).Seconds())
	}
}

// reloadReason labels a reload: why the controller forced it, the fallback, or the plan's first
// structural reason.
func (l *loop) reloadReason(out haproxy.Outcome) string {
	switch {
	case l.forgetReason != "":
		return l.forgetReason
	case out.Fallback != nil:
		return "RuntimeFallback"
	case len(out.Plan.Structural) > 0:
		return string(out.Plan.Structural[0].Kind)
	}
	return "Unknown"
}

func recordOps(m *Metrics, res apply.Result) {
	for op, n := range res.Counts {
		m.RuntimeOps.WithLabelValues(op, "ok").Add(float64(n))
	}
	for range res.Deferred {
		m.RuntimeOps.WithLabelValues("del_server", "deferred").Inc()
	}
}

// logSync writes the one line of a sync.
func (l *loop) logSync(rep syncReport, err error) {
	log := l.c.log()
	attrs := []any{
		"changed", rep.changed,
		"routes", rep.delta.routes, "backends", rep.delta.backends, "servers", rep.delta.servers,
		"routesChanged", rep.delta.routesChanged, "backendsChanged", rep.delta.backendsChanged,
		"serversChanged", rep.delta.serversChanged,
		"ops", formatCounts(rep.outcome.Result.Counts),
		"deferred", len(rep.outcome.Result.Deferred),
		"reloaded", rep.outcome.Reloaded,
	}
	if rep.reloadReason != "" {
		attrs = append(attrs, "reloadReason", rep.reloadReason)
	}
	if at := rep.outcome.ReloadAt; !at.IsZero() {
		attrs = append(attrs, "reloadIn", time.Until(at).Round(time.Millisecond))
	}
	if len(rep.outcome.PoolLow) > 0 {
		attrs = append(attrs, "sparePoolLow", fmt.Sprint(rep.outcome.PoolLow))
	}
	if rep.outcome.Fallback != nil {
		attrs = append(attrs, "fallback", rep.outcome.Fallback.Error())
	}
	if reasons := reasonStrings(rep.outcome.Plan.Structural); len(reasons) > 0 {
		attrs = append(attrs, "reasons", strings.Join(reasons, "; "))
	}
	if rep.problems > 0 {
		attrs = append(attrs, "rejectedRoutes", rep.problems)
	}
	if rep.fileErrs > 0 {
		attrs = append(attrs, "fileErrors", rep.fileErrs)
	}
	if rep.status != nil {
		attrs = append(attrs, "statusErr", rep.status.Error())
	}
	attrs = append(attrs, "duration", rep.duration.Round(time.Microsecond))
	switch {
	case err != nil:
		log.Warn("sync", append(attrs, "err", err.Error())...)
	case rep.updated || rep.status != nil:
		log.Info("sync", attrs...)
	default:
		log.Debug("sync", attrs...)
	}
}

// formatCounts renders op counts as "add_server=2 set_map_entry=1" (sorted).
func formatCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + strconv.Itoa(counts[k]))
	}
	return b.String()
}

func reasonStrings(rs []plan.Reason) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.String())
	}
	return out
}

// delta summarises a desired state and how it differs from the previous one.
type delta struct {
	routes, backends, servers                      int
	routesChanged, backendsChanged, serversChanged int
}

// diff counts the Routes, backends and servers of next, and those added, removed or changed since
// prev (nil: everything is new).
func diff(prev, next *model.Config) delta {
	var d delta
	if next == nil {
		return d
	}
	if prev == nil {
		prev = &model.Config{}
	}
	d.routes = len(next.Routes)
	d.backends = len(next.Backends)
	oldRoutes := map[string]model.RouteInfo{}
	for _, r := range prev.Routes {
		oldRoutes[r.Namespace+"/"+r.Name] = r
	}
	for _, r := range next.Routes {
		k := r.Namespace + "/" + r.Name
		if o, ok := oldRoutes[k]; !ok || o != r {
			d.routesChanged++
		}
		delete(oldRoutes, k)
	}
	d.routesChanged += len(oldRoutes)

	oldBackends := map[string]*model.Backend{}
	for i := range prev.Backends {
		oldBackends[prev.Backends[i].Name] = &prev.Backends[i]
	}
	for i := range next.Backends {
		b := &next.Backends[i]
		d.servers += len(b.Servers)
		o := oldBackends[b.Name]
		delete(oldBackends, b.Name)
		if o == nil {
			d.backendsChanged++
			d.serversChanged += len(b.Servers)
			continue
		}
		if !reflect.DeepEqual(o, b) {
			d.backendsChanged++
		}
		d.serversChanged += serverDelta(o.Servers, b.Servers)
	}
	for _, o := range oldBackends {
		d.backendsChanged++
		d.serversChanged += len(o.Servers)
	}
	return d
}

// serverDelta counts servers added, removed or changed between two lists.
func serverDelta(prev, next []model.Server) int {
	old := make(map[string]model.Server, len(prev))
	for _, s := range prev {
		old[s.Name] = s
	}
	n := 0
	for _, s := range next {
		if o, ok := old[s.Name]; !ok || o != s {
			n++
		}
		delete(old, s.Name)
	}
	return n + len(old)
}
