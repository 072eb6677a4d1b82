package haproxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/observe"
	"github.com/haroute/haroute/runtime/socket"
)

// probeTimeout bounds each socket question of Repair's helpers and Processes.
const probeTimeout = 3 * time.Second

// pingTimeout bounds Ping, which answers the liveness and readiness probes: below the kubelet's
// default probe timeout (1 s), so that a probe gets haroute's reason rather than a timeout of its own.
const pingTimeout = 800 * time.Millisecond

// ErrNoState is returned by Repair when HAProxy's state is unknown (the next Update reloads anyway).
var ErrNoState = errors.New("the applied state is unknown")

// RepairOutcome is what one Repair did.
type RepairOutcome struct {
	// Drift lists what HAProxy serves differently from the applied state (empty: nothing).
	Drift []string
	// Held lists the servers ("<backend>/<server>: <state>") an operator put in maintenance or drain
	// (`disable server`, `set server ... state drain`) while the applied state has them ready. They are
	// not repaired: an operator's hold lasts until the server goes or the next reload.
	Held []string
	// Result is what the repair ops did.
	Result apply.Result
	// FailedOp names the op that failed (apply.OpName), when one did.
	FailedOp string
	// Resync is set when runtime ops cannot repair the drift (or failed, or the Instance reloads for
	// every change): the state is forgotten and the next Update reloads with reason Drift.
	Resync bool
	// Reason says why a resync is needed (Resync only).
	Reason plan.Reason
	// Duration is the wall time of Repair.
	Duration time.Duration
}

// Repair compares what HAProxy serves (observe) with the applied state and repairs the difference
// through runtime ops. Drift that ops cannot repair, or a repair op that fails, makes the Instance
// forget the applied state: the next Update reloads (Drift). A deletion HAProxy defers (connections
// still attached) leaves the server in maintenance; the next Repair finds and retries it. An error
// means the check itself failed (nothing was changed); ErrNoState when there is nothing to compare.
func (i *Instance) Repair(ctx context.Context) (RepairOutcome, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	start := time.Now()
	var out RepairOutcome
	defer func() { out.Duration = time.Since(start) }()
	applied := i.applied
	if applied == nil {
		return out, ErrNoState
	}
	paths, err := render.PathsFor(applied, i.cfg.Dir)
	if err != nil {
		return out, fmt.Errorf("drift check: runtime paths: %w", err)
	}
	obs, err := observe.Observe(ctx, i.admin, applied, paths)
	if errors.Is(err, observe.ErrStructuralDrift) {
		out.Drift = []string{err.Error()}
		i.resync(&out, "HAProxy lacks part of the applied state: "+err.Error())
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("drift check: %w", err)
	}
	drift := observe.Compare(applied, obs)
	drift, out.Held = operatorHolds(drift, obs)
	if len(drift) == 0 {
		return out, nil
	}
	for _, d := range drift {
		out.Drift = append(out.Drift, d.String())
	}
	if i.cfg.ReloadEveryChange {
		i.resync(&out, fmt.Sprintf("%d differences, repaired by a reload in reload mode", len(drift)))
		return out, nil
	}
	ops, err := observe.Repair(applied, obs)
	if err != nil {
		i.resync(&out, "no runtime repair: "+err.Error())
		return out, nil
	}
	release := i.reloader.HoldOps()
	out.Result, err = apply.Apply(ctx, i.admin, applied, paths, i.cfg.Dir, ops)
	release()
	if !plan.OnlyDormantChecks(ops) {
		i.touched = true
	}
	if err != nil {
		var opErr *apply.OpError
		if errors.As(err, &opErr) {
			out.FailedOp = apply.OpName(opErr.Op)
		}
		i.resync(&out, "repair failed: "+err.Error())
	}
	return out, nil
}

// operatorHolds takes out of drift the servers an operator holds: ready in the applied state, in
// maintenance or drain on HAProxy. It sets them to their applied state in observed, so that the repair
// leaves them alone, and returns them, formatted for RepairOutcome.Held.
func operatorHolds(drift []observe.Drift, observed *model.Config) ([]observe.Drift, []string) {
	var kept []observe.Drift
	var held []string
	for _, d := range drift {
		if d.Kind != observe.ServerState || d.Want != string(model.StateReady) ||
			(d.Got != string(model.StateMaint) && d.Got != string(model.StateDrain)) {
			kept = append(kept, d)
			continue
		}
		held = append(held, d.Subject+": "+d.Got)
		backend, server, _ := strings.Cut(d.Subject, "/")
		if b := observed.Backend(backend); b != nil {
			for k := range b.Servers {
				if b.Servers[k].Name == server {
					b.Servers[k].State = model.StateReady
				}
			}
		}
	}
	return kept, held
}

// resync forgets the applied state for drift: the next Update reloads with reason Drift.
func (i *Instance) resync(out *RepairOutcome, detail string) {
	out.Resync = true
	out.Reason = plan.Reason{Kind: plan.Drift, Detail: detail}
	i.forget(out.Reason)
}

// Restarted declares that HAProxy (re)started without the Instance (a supervisor's restart, or one
// Processes reported). When HAProxy was changed at runtime since its last start, those changes are
// gone: the Instance forgets the applied state, the next Update reloads (Restart), and Restarted
// returns true. Otherwise HAProxy runs the files on disk, which hold the applied state (written by
// WriteInitial or through by an Update), and nothing is forgotten: a first start costs no reload;
// the checks HAProxy started are stopped again by the next Update (plan.AsStarted).
func (i *Instance) Restarted(why string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.touched {
		i.applied = plan.AsStarted(i.applied)
		return false
	}
	i.touched = false
	i.forget(plan.Reason{Kind: plan.Restart, Detail: why})
	return true
}

// Processes is HAProxy's process set as the master lists it.
type Processes struct {
	// Workers is the number of worker processes (current and old).
	Workers int
	// Restart says why HAProxy seems restarted by someone else since the last call ("" when it does
	// not): another master, or a new serving worker without a reload of the Instance's.
	Restart string
}

// Processes asks the master for its processes (`show proc`) and compares the serving worker with the
// one seen last (after the Instance's own reloads), to find restarts and reloads made by others.
func (i *Instance) Processes(ctx context.Context) (Processes, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	ps, err := i.master.ShowProc(ctx)
	if err != nil {
		return Processes{}, fmt.Errorf("show proc: %w", err)
	}
	out := Processes{Workers: len(ps.Workers)}
	i.mu.Lock()
	defer i.mu.Unlock()
	now := snapshotOf(ps)
	if i.procs == nil {
		i.procs = now
		return out, nil
	}
	why := now.changedFrom(i.procs)
	if why != "" && !i.serving(ctx, now) {
		// A reload in flight: a 3.1+ master lists the new worker under "# workers" while it starts,
		// and drops it again when it fails. Look again at the next call.
		return out, nil
	}
	i.procs = now
	out.Restart = why
	return out, nil
}

// Ping checks that the worker's admin socket answers (`show version`) within pingTimeout.
func (i *Instance) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	reply, err := i.admin.Command(ctx, "show version")
	if err != nil {
		return fmt.Errorf("haproxy admin socket: %w", err)
	}
	if reply == "" {
		return errors.New("haproxy admin socket: empty answer to show version")
	}
	return nil
}

// procSnapshot is the process set of HAProxy as the Instance last knew it.
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

// serving reports whether the serving worker of snap is the one that answers on the admin socket
// (`show info`), i.e. the worker show proc names has taken over. Without a serving worker it cannot
// tell and says yes.
func (i *Instance) serving(ctx context.Context, snap *procSnapshot) bool {
	if len(snap.workers) == 0 {
		return true
	}
	info, err := socket.ShowInfo(ctx, i.admin)
	if err != nil {
		return false
	}
	return info["Pid"] == strconv.Itoa(snap.workers[0])
}

// refreshProcs records the process set after a reload of the Instance's own.
func (i *Instance) refreshProcs(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	ps, err := i.master.ShowProc(ctx)
	if err != nil {
		i.cfg.Log.Warn("show proc after a reload failed", "err", err)
		i.procs = nil
		return
	}
	i.procs = snapshotOf(ps)
}
