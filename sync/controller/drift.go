package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/observe"
	"github.com/haroute/haroute/runtime/socket"
)

// maxDriftLogged bounds the drift items named in one log line.
const maxDriftLogged = 10

// procSnapshot is the process set of HAProxy as the controller last knew it.
type procSnapshot struct {
	master  int
	workers []int // the serving worker's PID (socket.ProcState.Serving), or none
	reloads int
}

// snapshotOf records the serving worker rather than the "# workers" list: after a failed reload a
// 3.1+ master lists the worker that keeps serving under "# old workers", which is no restart.
func snapshotOf(ps socket.ProcState) *procSnapshot {
	s := &procSnapshot{master: ps.Master.PID, reloads: ps.Master.Reloads}
	if w, ok := ps.Serving(); ok {
		s.workers = []int{w.PID}
	}
	return s
}

// changedFrom names how s differs from the known snapshot ("" when it does not).
func (s *procSnapshot) changedFrom(known *procSnapshot) string {
	switch {
	case s.master != known.master:
		return fmt.Sprintf("master PID changed from %d to %d", known.master, s.master)
	case slices.Equal(s.workers, known.workers):
		return ""
	case s.reloads != known.reloads:
		return fmt.Sprintf("workers %v replaced by %v; the master's reload counter went from %d to %d without a reload of ours",
			known.workers, s.workers, known.reloads, s.reloads)
	default:
		return fmt.Sprintf("workers %v replaced by %v", known.workers, s.workers)
	}
}

// periodic runs every DriftInterval: `show proc` (worker gauge, restart detection in sidecar mode)
// and a drift check.
func (l *loop) periodic(ctx context.Context) {
	if l.c.Master != nil {
		if restart := l.checkProcs(ctx); restart != "" {
			l.restarted(restart)
			return
		}
	}
	if l.retrying || l.lastDesired == nil {
		return
	}
	l.checkDrift(ctx)
}

// showProc asks the master for its processes and updates the worker gauge.
func (l *loop) showProc(ctx context.Context) (socket.ProcState, error) {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	ps, err := l.c.Master.ShowProc(ctx)
	if err != nil {
		return ps, err
	}
	l.c.metrics().Workers.Set(float64(len(ps.Workers)))
	return ps, nil
}

// checkProcs returns why HAProxy seems restarted by someone else ("" when it does not). Only in
// sidecar mode (no Restarts channel); in managed mode it just updates the worker gauge.
func (l *loop) checkProcs(ctx context.Context) string {
	ps, err := l.showProc(ctx)
	if err != nil {
		l.c.log().Warn("show proc failed", "err", err)
		return ""
	}
	if l.c.Restarts != nil {
		return ""
	}
	now := snapshotOf(ps)
	if l.procs == nil {
		l.procs = now
		return ""
	}
	why := now.changedFrom(l.procs)
	if why != "" && !l.serving(ctx, now) {
		// A reload in flight: a 3.1+ master lists the new worker under "# workers" while it starts,
		// and drops it again when it fails. Look again at the next check.
		return ""
	}
	l.procs = now
	return why
}

// serving reports whether the serving worker of snap is the one that answers on the admin socket
// (`show info`), i.e. the worker show proc names has taken over. Without an admin socket, or without
// a serving worker, it cannot tell and says yes.
func (l *loop) serving(ctx context.Context, snap *procSnapshot) bool {
	if l.c.Admin == nil || len(snap.workers) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	info, err := socket.ShowInfo(ctx, l.c.Admin)
	if err != nil {
		return false
	}
	return info["Pid"] == strconv.Itoa(snap.workers[0])
}

// refreshProcs records the process set after a reload of ours.
func (l *loop) refreshProcs(ctx context.Context) {
	if l.c.Master == nil {
		return
	}
	ps, err := l.showProc(ctx)
	if err != nil {
		l.c.log().Warn("show proc after a reload failed", "err", err)
		l.procs = nil
		return
	}
	l.procs = snapshotOf(ps)
}

// checkDrift compares what HAProxy serves with the applied state and repairs the difference through
// runtime ops (in reload mode, or when ops cannot repair it, through a resync with a reload). The
// loop is the Updater's only caller, so no reload runs while the repair ops are sent.
func (l *loop) checkDrift(ctx context.Context) {
	c := l.c
	applied := c.Updater.Applied()
	if c.Admin == nil || applied == nil {
		return
	}
	log := c.log()
	paths, err := render.PathsFor(applied, c.Dir)
	if err != nil {
		log.Warn("drift check: runtime paths", "err", err)
		return
	}
	obs, err := observe.Observe(ctx, c.Admin, applied, paths)
	if errors.Is(err, observe.ErrStructuralDrift) {
		log.Warn("drift: HAProxy lacks part of the applied state; resyncing with a reload", "err", err)
		l.repairByReload()
		return
	}
	if err != nil {
		log.Warn("drift check failed", "err", err)
		return
	}
	drift := observe.Compare(applied, obs)
	if len(drift) == 0 {
		log.Debug("drift check: none")
		return
	}
	names := make([]string, 0, min(len(drift), maxDriftLogged))
	for _, d := range drift[:min(len(drift), maxDriftLogged)] {
		names = append(names, d.String())
	}
	log.Warn("drift found", "count", len(drift), "drift", names)
	if c.reloadMode() {
		l.repairByReload()
		return
	}
	ops, err := observe.Repair(applied, obs)
	if err != nil {
		log.Warn("drift repair: no runtime repair; resyncing with a reload", "err", err)
		l.repairByReload()
		return
	}
	start := time.Now()
	res, err := apply.Apply(ctx, c.Admin, applied, paths, c.Dir, ops)
	l.touched = true
	m := c.metrics()
	recordOps(m, res)
	if err != nil {
		var opErr *apply.OpError
		if errors.As(err, &opErr) {
			m.RuntimeOps.WithLabelValues(apply.OpName(opErr.Op), "error").Inc()
		}
		log.Warn("drift repair failed; resyncing with a reload", "err", err)
		l.repairByReload()
		return
	}
	m.DriftRepairs.Inc()
	log.Info("drift repaired", "ops", formatCounts(res.Counts), "deferred", len(res.Deferred),
		"duration", time.Since(start).Round(time.Microsecond))
}

// repairByReload makes the Updater forget its state so that the next sync reloads from a full render.
func (l *loop) repairByReload() {
	l.c.metrics().DriftRepairs.Inc()
	l.forget("Drift")
	l.soon(time.Now(), 0)
}
