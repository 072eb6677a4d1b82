package reload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// Defaults of a Reloader made by New.
const (
	// DefaultMinInterval is OpenShift's RELOAD_INTERVAL default.
	DefaultMinInterval = 5 * time.Second
	// DefaultWaitTimeout bounds the wait for a new worker.
	DefaultWaitTimeout = 30 * time.Second
	// outcomeGrace is how long a reload that may have been sent is followed after the caller's
	// context ended: long enough for a refused configuration to be reported (a failed start takes
	// HAProxy well under a second), short enough for a stop.
	outcomeGrace = 5 * time.Second
	// pollInterval is how often `show proc` is asked while a 2.6 reload is in flight.
	pollInterval = 20 * time.Millisecond
	// inProgressPause is the wait before sending `reload` again after a 3.1+ master refused it because
	// another reload's worker is still starting.
	inProgressPause = 50 * time.Millisecond
)

// Master is the part of the master CLI a Reloader uses; *socket.Master implements it.
type Master interface {
	ShowProc(ctx context.Context) (socket.ProcState, error)
	Reload(ctx context.Context) (socket.ReloadReply, error)
}

var _ Master = (*socket.Master)(nil)

// Reloader reloads one HAProxy (master-worker mode) whose files live in Dir. Its methods are safe for
// concurrent use; set the fields before the first call and do not change them afterwards.
//
// Runtime operations and reloads exclude each other: a reload discards every runtime change that is
// not in the files, and runtime commands sent while the master is re-executing reach an old worker or
// none. Callers that change HAProxy at runtime (runtime/apply, driven by the controller) therefore wrap
// each batch — writing the files through and applying the ops — in HoldOps:
//
//	release := r.HoldOps()
//	defer release()
//	// write the files of plan.Next, then apply the plan's ops
//
// HoldOps waits while a reload is in flight; a Reload waits until every holder has released, and
// once a Reload waits, new HoldOps calls wait behind it. Never call Reload while holding ops.
type Reloader struct {
	// Binary is the HAProxy executable used for `haproxy -c` before each reload. Empty: there is none
	// (a sidecar next to HAProxy's own container), and the master's reload is the check: a
	// configuration the new worker refuses fails the reload, and the last good files are put back.
	Binary string
	// Dir is the HAProxy directory (render.Options.Dir); the config is Dir/conf/haproxy.cfg.
	Dir string
	// Master is the master CLI of the running HAProxy.
	Master Master
	// MinInterval is the least time between two reload commands (RELOAD_INTERVAL); 0 means none.
	MinInterval time.Duration
	// WaitTimeout bounds the wait for the new worker after the reload command; 0 means
	// DefaultWaitTimeout.
	WaitTimeout time.Duration

	mu   sync.Mutex   // serialises Reload calls
	ops  sync.RWMutex // write-held during a reload, read-held by runtime ops (HoldOps)
	last atomic.Int64 // when the last reload command was sent (unix nanoseconds; 0: never)

	// outcomeGrace overrides outcomeGrace (tests); 0: the constant.
	outcomeGrace time.Duration

	acceptedMu sync.Mutex
	// accepted are the last files HAProxy took (a confirmed reload, or Accepted); nil until then,
	// when the files on disk stand for them.
	accepted []render.File
}

// Accepted records files as the last ones HAProxy took without a reload: written through, and every
// runtime op of the same change applied. A refused configuration or a failed reload later puts these
// back, never files written after them that HAProxy did not take. Callers must not modify files.
func (r *Reloader) Accepted(files []render.File) {
	r.acceptedMu.Lock()
	defer r.acceptedMu.Unlock()
	r.accepted = files
}

// lastGood returns what a failed reload puts back: the accepted files when known, else the files on
// disk that writing next would change.
func (r *Reloader) lastGood(next []render.File) (snapshot, error) {
	r.acceptedMu.Lock()
	accepted := r.accepted
	r.acceptedMu.Unlock()
	if accepted != nil {
		return snapshot{files: accepted}, nil
	}
	return takeSnapshot(r.Dir, next)
}

// ReadyAt returns when the next reload command may be sent: MinInterval after the last one, or the
// zero time when at once. A caller that can wait should plan and render the reload when that time
// comes, from the newest state it has then, rather than call Reload now and have it wait with files
// rendered before the wait.
func (r *Reloader) ReadyAt() time.Time {
	last := r.last.Load()
	if last == 0 || r.MinInterval <= 0 {
		return time.Time{}
	}
	return time.Unix(0, last).Add(r.MinInterval)
}

// New returns a Reloader with the default MinInterval and WaitTimeout.
func New(binary, dir string, master *socket.Master) *Reloader {
	return &Reloader{
		Binary:      binary,
		Dir:         dir,
		Master:      master,
		MinInterval: DefaultMinInterval,
		WaitTimeout: DefaultWaitTimeout,
	}
}

// Result describes a confirmed reload.
type Result struct {
	// Duration runs from writing the files to the confirmed new worker (the MinInterval wait is not
	// included).
	Duration time.Duration
	// Sent is when the reload command was sent.
	Sent time.Time
	// Worker is the PID of the new current worker.
	Worker int
	// OldWorkers is how many workers of earlier generations are still running (serving long-lived
	// connections) once the reload is confirmed.
	OldWorkers int
	// Reloads is the master's reload counter after the reload.
	Reloads int
}

// HoldOps blocks while a reload is in flight, then keeps reloads from starting until release is
// called (see Reloader). release must be called exactly once.
func (r *Reloader) HoldOps() (release func()) {
	r.ops.RLock()
	var once sync.Once
	return func() { once.Do(r.ops.RUnlock) }
}

// Reload installs files (a complete render for Dir) and reloads HAProxy:
//  1. it waits until MinInterval has passed since the previous reload command. It does not coalesce:
//     the controller does, handing over only the latest files when it calls Reload;
//  2. it writes files (WriteFiles) and runs Check (when Binary is set); when HAProxy refuses them it
//     puts the last good files back, does not reload, and returns an error wrapping ErrInvalidConfig
//     with HAProxy's output. The last good files are the last ones HAProxy took (a confirmed reload,
//     or Accepted after runtime ops); before the first, the files on disk when Reload began;
//  3. it sends `reload` to the master. A 2.7+ reply decides by its Success; on 2.6 (no reply) it polls
//     `show proc` every 20 ms, up to WaitTimeout, until the master's reload counter rises, and then
//     requires a current worker with a new PID and no rise of the failed-reload counter. A failed
//     reload puts the last good files back and returns ErrReloadFailed (the old worker keeps
//     serving); no confirmation in time returns ErrReloadTimeout with the new files left on disk.
//
// Runtime ops (HoldOps) are held from step 2 until Reload returns.
func (r *Reloader) Reload(ctx context.Context, files []render.File) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Master == nil {
		return Result{}, errors.New("reload: no master CLI")
	}
	if err := r.waitInterval(ctx); err != nil {
		return Result{}, err
	}
	r.ops.Lock()
	defer r.ops.Unlock()

	start := time.Now()
	good, err := r.lastGood(files)
	if err != nil {
		return Result{}, fmt.Errorf("reload: keeping the last good files: %w", err)
	}
	if err := WriteFiles(r.Dir, files); err != nil {
		return Result{}, r.fail(fmt.Errorf("reload: %w", err), good)
	}
	if r.Binary != "" {
		if err := Check(ctx, r.Binary, r.Dir); err != nil {
			return Result{}, r.fail(fmt.Errorf("reload: %w", err), good)
		}
	}
	before, err := r.Master.ShowProc(ctx)
	if err != nil {
		return Result{}, r.fail(fmt.Errorf("reload: show proc before the reload: %w", err), good)
	}
	// From here the command may go out: its outcome is followed even when ctx ends meanwhile (haroute
	// stopping), so that a configuration HAProxy refuses is put back, not left on disk for the next
	// start of HAProxy.
	ctx, stopFollowing := outcomeContext(ctx, cmp.Or(r.outcomeGrace, outcomeGrace))
	defer stopFollowing()
	reply, sendErr := r.send(ctx)
	res := Result{Sent: time.Unix(0, r.last.Load())}
	var after socket.ProcState
	switch {
	case sendErr == nil && reply.InProgress:
		return Result{}, fmt.Errorf("reload: %w: HAProxy kept refusing it for %v: %s", ErrReloadTimeout, r.waitTimeout(), reply.Log)
	case sendErr == nil && reply.Sync && !reply.Success:
		return Result{}, r.fail(fmt.Errorf("reload: %w", r.failed(ctx, reply.Log)), good)
	case sendErr == nil && reply.Sync:
		after, err = r.poll(ctx, before, true)
	default:
		// 2.6 answers nothing; a dropped connection (the master re-executes itself) may also mean
		// that the command went through, which only show proc can tell.
		after, err = r.poll(ctx, before, false)
		if err != nil && sendErr != nil {
			err = fmt.Errorf("%w (reload command: %v)", err, sendErr)
		}
	}
	if errors.Is(err, ErrReloadFailed) {
		return Result{}, r.fail(fmt.Errorf("reload: %w", err), good)
	}
	if err != nil {
		return Result{}, fmt.Errorf("reload: %w", err)
	}
	r.Accepted(files)
	res.Duration = time.Since(start)
	res.Reloads = after.Master.Reloads
	if w, ok := after.Serving(); ok {
		res.Worker = w.PID
	}
	res.OldWorkers = len(after.Draining())
	return res, nil
}

// send sends `reload` to the master. A 3.1+ master refuses it while the worker of an earlier reload
// is still starting (someone else's reload: ours wait for their worker); the command is then sent
// again every inProgressPause, within WaitTimeout, and the last refusal is returned when it never
// goes through. r.last is when the command that went through was sent.
func (r *Reloader) send(ctx context.Context) (socket.ReloadReply, error) {
	ctx, cancel := context.WithTimeout(ctx, r.waitTimeout())
	defer cancel()
	for {
		r.last.Store(time.Now().UnixNano())
		reply, err := r.Master.Reload(ctx)
		if err != nil || !reply.InProgress {
			return reply, err
		}
		select {
		case <-ctx.Done():
			return reply, nil
		case <-time.After(inProgressPause):
		}
	}
}

// failed describes a reload HAProxy refused (2.7+ "Success=0"): HAProxy's own alerts from the
// start-up log it sent (the whole log when it has none), and the worker that keeps serving. The
// result wraps ErrReloadFailed.
func (r *Reloader) failed(ctx context.Context, log string) error {
	var alerts []string
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, "[ALERT]") {
			alerts = append(alerts, strings.TrimSpace(l))
		}
	}
	msg := strings.Join(alerts, "; ")
	if msg == "" {
		msg = strings.TrimSpace(log)
	}
	if msg == "" {
		msg = "HAProxy gave no reason"
	}
	serving := "the previous worker"
	if ps, err := r.Master.ShowProc(ctx); err == nil {
		if w, ok := ps.Serving(); ok {
			serving = fmt.Sprintf("worker %d", w.PID)
		}
	}
	return fmt.Errorf("%w (%s still serving the previous configuration): %s", ErrReloadFailed, serving, msg)
}

func (r *Reloader) waitTimeout() time.Duration {
	if r.WaitTimeout > 0 {
		return r.WaitTimeout
	}
	return DefaultWaitTimeout
}

// waitInterval sleeps until MinInterval has passed since the last reload command, or ctx ends.
func (r *Reloader) waitInterval(ctx context.Context) error {
	at := r.ReadyAt()
	if at.IsZero() {
		return nil
	}
	wait := time.Until(at)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("reload: waiting for the reload interval: %w", ctx.Err())
	}
}

// poll asks `show proc` until the reload is decided. With confirmed (a 2.7+ Success=1) only the new
// worker is awaited. It returns an error wrapping ErrReloadFailed when the failed-reload counter rose,
// ErrReloadTimeout when nothing was decided within WaitTimeout.
func (r *Reloader) poll(parent context.Context, before socket.ProcState, confirmed bool) (socket.ProcState, error) {
	timeout := r.waitTimeout()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	prev, hadWorker := before.Serving()
	// From 3.1 the failed-reload counter stops at 1, so a failure after an earlier one shows only as
	// the reload counter rising with "# workers" empty and the same worker serving.
	keepsOldList := socket.CapabilitiesOf(before.Version).FailedReloadKeepsOldList
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	var seen socket.ProcState
	for {
		st, err := r.Master.ShowProc(ctx)
		switch {
		case err != nil:
			last = err
		case !confirmed && (st.Failed > before.Failed || keepsOldList && failedKeepingOld(st, before, prev)):
			// The master's reply (2.7+) carries the reason; 2.6 says nothing more over the master CLI.
			return st, fmt.Errorf("%w (worker %d still serving the previous configuration): HAProxy %s reports %d failed reloads since the last good one and gives the reason only in its log",
				ErrReloadFailed, prev.PID, st.Version, st.Failed)
		case confirmed || st.Master.Reloads > before.Master.Reloads:
			seen = st
			if w, ok := st.Serving(); ok && (!hadWorker || w.PID != prev.PID) {
				return st, nil
			}
			last = fmt.Errorf("reload counter at %d but no new worker yet", st.Master.Reloads)
		default:
			last = fmt.Errorf("reload counter still at %d", st.Master.Reloads)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if err := context.Cause(parent); err != nil {
				return seen, fmt.Errorf("%w: waiting for the new worker: %w (%v)", ErrReloadTimeout, err, last)
			}
			return seen, fmt.Errorf("%w after %v: %v", ErrReloadTimeout, timeout, last)
		}
	}
}

// failedKeepingOld reports a failed reload the way a 3.1+ master shows it: the reload counter rose,
// "# workers" is empty, and the worker that served before serves still.
func failedKeepingOld(st, before socket.ProcState, prev socket.Proc) bool {
	_, current := st.Current()
	w, serving := st.Serving()
	return st.Master.Reloads > before.Master.Reloads && !current && serving && w.PID == prev.PID
}

// fail puts the last good files back and returns err, joined with a restore error if any.
func (r *Reloader) fail(err error, good snapshot) error {
	if rerr := good.restore(r.Dir); rerr != nil {
		return errors.Join(err, fmt.Errorf("reload: restoring the last good files: %w", rerr))
	}
	return err
}

// outcomeContext returns a context that ends grace after ctx does, with ctx's error as its cause (or
// when the returned function is called), and keeps ctx's values: the wait for a reload's outcome
// outlives a cancellation briefly.
func outcomeContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	octx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(grace, func() { cancel(ctx.Err()) })
	})
	return octx, func() {
		stop()
		cancel(nil)
	}
}
