package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/sync/source"
)

// syncReport is what one sync did, for its log line and metrics.
type syncReport struct {
	changed  bool
	updated  bool
	delta    delta
	outcome  haproxy.Outcome
	desired  Desired
	problems int
	fileErrs int
	status   error
	duration time.Duration
	// input is the snapshot translated, with kept as its Routes (the ones not left out as refused).
	input mapping.Input
	kept  []*routev1.Route
}

// sync takes a snapshot, translates it and, when the desired state changed (or HAProxy's state is
// unknown, or deferred deletions wait), updates HAProxy; then it writes Route status.
func (l *loop) sync(ctx context.Context) error {
	c := l.c
	start := time.Now()
	var rep syncReport
	err := l.syncOnce(ctx, &rep)
	for round := 1; errors.Is(err, errRefusedRoutes) && round < maxRefusalRounds && ctx.Err() == nil; round++ {
		// Again at once, without the Routes HAProxy named: the others are served.
		rep = syncReport{}
		err = l.syncOnce(ctx, &rep)
	}
	rep.duration = time.Since(start)
	if ctx.Err() == nil {
		c.state.sync(rep.desired, c.HAProxy.Applied(), rep.outcome, err, rep.duration, rep.updated)
	}
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

// Desired is a snapshot of a Source, translated.
type Desired struct {
	// Config is the state to serve (a Translate result, validated).
	Config *model.Config
	// Problems are the Routes rejected or warned about.
	Problems []mapping.Problem
	// Routes are the snapshot's Routes (for their status).
	Routes []*routev1.Route
	// FileErrors are the manifest files not (fully) read (folder source).
	FileErrors []source.FileError
}

// Rejected counts the Routes rejected (problems that are not warnings).
func (d Desired) Rejected() int {
	ids := map[string]bool{}
	for _, p := range d.Problems {
		if !p.Warning {
			ids[p.Namespace+"/"+p.Name] = true
		}
	}
	return len(ids)
}

// Translate takes a snapshot of src and translates it with opts: the first step of every sync, and
// of the first configuration `haroute run` writes. An error means translation gave an invalid
// config (a bug, never bad input: bad input is a Problem).
func Translate(src source.Source, opts mapping.Options) (Desired, error) {
	in, fileErrs := src.Snapshot()
	return translateInput(in, fileErrs, in.Routes, nil, translateWith(opts))
}

// translator is a translation and the validation of its result: mapping.Translate with fixed options,
// or a mapping.Translator's, whose results share what did not change with the last valid one
// (model.Config.ValidateAfter).
type translator func(mapping.Input) (*model.Config, []mapping.Problem, error)

// translateWith is mapping.Translate with opts.
func translateWith(opts mapping.Options) translator {
	return func(in mapping.Input) (*model.Config, []mapping.Problem, error) {
		cfg, problems := mapping.Translate(in, opts)
		return cfg, problems, cfg.Validate()
	}
}

// incremental translates with tr and validates what changed since the last valid result.
type incremental struct {
	tr    *mapping.Translator
	valid *model.Config
}

func (x *incremental) translate(in mapping.Input) (*model.Config, []mapping.Problem, error) {
	cfg, problems := x.tr.Translate(in)
	err := cfg.ValidateAfter(x.valid)
	if err == nil {
		x.valid = cfg
	}
	return cfg, problems, err
}

// translateInput translates in (whose Routes may leave some of all out) and adds extra problems; Desired
// keeps all the Routes, for their status.
func translateInput(in mapping.Input, fileErrs []source.FileError, all []*routev1.Route, extra []mapping.Problem, translate translator) (Desired, error) {
	cfg, problems, err := translate(in)
	d := Desired{Config: cfg, Problems: append(problems, extra...), Routes: all, FileErrors: fileErrs}
	if err != nil {
		return d, fmt.Errorf("translate gave an invalid config: %w", err)
	}
	return d, nil
}

func (l *loop) syncOnce(ctx context.Context, rep *syncReport) error {
	c := l.c
	in, fileErrs := c.Source.Snapshot()
	all := in.Routes
	var refused []mapping.Problem
	in.Routes, refused = l.leaveOutRefused(in.Routes, time.Now())
	rep.input, rep.kept = in, in.Routes
	d, err := translateInput(in, fileErrs, all, refused, l.translator.translate)
	rep.desired = d
	rep.fileErrs = len(d.FileErrors)
	if err != nil {
		return err
	}
	desired := d.Config
	l.problems.update(c.log(), d.Problems)
	for _, p := range d.Problems {
		if !p.Warning {
			rep.problems++
		}
	}
	rep.changed = l.lastDesired == nil || !sameConfig(desired, l.lastDesired)
	rep.delta = diff(l.lastDesired, desired)
	if rep.changed || l.deferredPending || l.refill || c.HAProxy.Applied() == nil {
		if err := l.update(ctx, desired, rep); err != nil {
			return err
		}
	}
	if c.Status != nil {
		if err := c.Status.Apply(ctx, d.Routes, desired, d.Problems); err != nil {
			rep.status = err
			l.statusPending = true
		} else {
			l.statusPending = false
		}
	}
	return nil
}

// update hands desired to the HAProxy side and records what it did.
func (l *loop) update(ctx context.Context, desired *model.Config, rep *syncReport) error {
	c := l.c
	rep.updated = true
	start := time.Now()
	update := c.HAProxy.Update
	if l.refill {
		update = c.HAProxy.Refill
	}
	out, err := update(ctx, desired)
	took := time.Since(start)
	rep.outcome = out
	l.reloadAt = out.ReloadAt
	if !out.ReloadAt.IsZero() {
		// Nothing changed: plan again from a fresh snapshot when the reload may be sent.
		return nil
	}
	l.recordOutcome(out, err, took)
	if err != nil {
		if l.recordRefused(out, rep.desired.Routes, time.Now()) || l.searchRefused(ctx, rep, err) {
			return fmt.Errorf("update: %w: %w", errRefusedRoutes, err)
		}
		return fmt.Errorf("update: %w", err)
	}
	l.lastDesired = desired
	l.appliedRoutes = keyed(rep.kept)
	if out.Reloaded {
		// A reload changes the worker set: keep the gauge current.
		if restart := l.checkProcs(ctx); restart != "" {
			l.restarted(restart)
		}
	}
	// Servers of backends that lost their Route wait for the next plan (plan.Draining), as do the
	// deletions HAProxy deferred.
	l.deferredPending = len(out.Result.Deferred) > 0 || len(plan.Draining(c.HAProxy.Applied())) > 0
	l.refill = len(out.PoolLow) > 0
	return nil
}

// recordOutcome feeds the metrics from one Update.
func (l *loop) recordOutcome(out haproxy.Outcome, err error, took time.Duration) {
	m := l.c.metrics()
	recordOps(m, out.Result.Counts, len(out.Result.Deferred), out.FailedOp)
	if err != nil {
		reason := string(out.Reason.Kind)
		if reason == "" {
			reason = "runtime"
		}
		m.UpdateFailures.WithLabelValues(reason).Inc()
	}
	switch {
	case out.Reloaded:
		m.Reloads.WithLabelValues(string(out.Reason.Kind)).Inc()
		m.ReloadSeconds.Observe(took.Seconds())
	case err == nil && !out.ReloadAt.IsZero():
		// Planned only: the reload waits for the reload interval.
	case err == nil:
		// Plan, render and write-through: the Update's time without its runtime ops.
		m.WriteConfigSeconds.Observe(max(took-out.Result.Duration, 0).Seconds())
	}
}

// recordOps counts runtime ops by name and result: counts carried out, deferred deletions, and the
// op that failed (when failed is not empty).
func recordOps(m *Metrics, counts map[string]int, deferred int, failed string) {
	for op, n := range counts {
		m.RuntimeOps.WithLabelValues(op, "ok").Add(float64(n))
	}
	if deferred > 0 {
		m.RuntimeOps.WithLabelValues("del_server", "deferred").Add(float64(deferred))
	}
	if failed != "" {
		m.RuntimeOps.WithLabelValues(failed, "error").Inc()
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
	if k := rep.outcome.Reason.Kind; k != "" {
		attrs = append(attrs, "reloadReason", string(k))
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
