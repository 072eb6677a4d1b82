// Package supervise runs HAProxy as a child of haroute (managed mode) and waits for an external one
// (sidecar mode).
//
// A Supervisor starts `<bin> -W -db -S <dir>/run/master.sock,mode,600 -f <dir>/conf/haproxy.cfg
// -f <dir>/conf/backends` (render.ConfigArgs) in its own process group, logs its output line by line, and reports a (re)start on Started once the master
// CLI answers `show proc` with this process as master and a current worker. When HAProxy exits on its
// own it is restarted with exponential backoff (cenkalti/backoff/v4: 200 ms growing 1.5x, jittered,
// up to 10 s, never giving up, reset after a minute of healthy running). When the context ends it is
// soft-stopped:
// SIGUSR1 (HAProxy's graceful stop: listeners close, connections finish), then SIGTERM, then SIGKILL
// of the process group, each stage bounded. Processes are only ever addressed by the PID this package
// started, never looked up by name.
//
// WaitForSockets is the sidecar-mode counterpart: it polls until an HAProxy started by someone else
// answers on its admin and master sockets.
package supervise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/haroute/haroute/mapping/layout"
)

// Defaults of the Supervisor's bounds.
const (
	DefaultStopTimeout  = 10 * time.Second
	DefaultStartTimeout = 60 * time.Second
)

// Internal bounds.
const (
	// termTimeout bounds the wait after SIGTERM, killTimeout the wait after SIGKILL.
	termTimeout = 5 * time.Second
	killTimeout = 5 * time.Second
	// probeTimeout bounds one CLI exchange of a readiness probe; pollInterval separates two probes.
	probeTimeout = 2 * time.Second
	pollInterval = 50 * time.Millisecond
	// maxSocketPath is sun_path on Linux without its terminating NUL.
	maxSocketPath = 107
	// initialBackoff and maxBackoff bound the wait between two starts; a process that ran healthyAfter
	// resets the backoff.
	initialBackoff = 200 * time.Millisecond
	maxBackoff     = 10 * time.Second
	healthyAfter   = 60 * time.Second
	// startupWindow is how long a started HAProxy must run for its start to count as good.
	startupWindow = 5 * time.Second
)

// Log messages other code (and the tests) may look for.
const (
	msgStartFailed  = "haproxy did not start"
	msgStillFailing = "haproxy still does not start"
	msgStarted      = "haproxy started"
	msgExited       = "haproxy exited unexpectedly"
	msgRestarting   = "restarting haproxy"
	msgStopped      = "haproxy stopped"
	msgOutput       = "haproxy output"
)

// Supervisor runs one HAProxy master-worker process and keeps it running. Set the exported fields
// before Run; zero values take the defaults.
type Supervisor struct {
	// StopTimeout bounds the graceful stop (SIGUSR1) before SIGTERM; default 10 s.
	StopTimeout time.Duration
	// StartTimeout bounds the wait for the master CLI after a start; a process that does not answer
	// in time is killed and counts as a failed start. Default 60 s (a large config loads slowly).
	StartTimeout time.Duration

	bin, dir string
	log      *slog.Logger
	started  chan struct{}
	// pid is the master's process id, 0 while no process runs (the tests read it).
	pid     atomic.Int64
	running atomic.Bool
	// termTimeout is the SIGTERM stage's bound (tests shorten it).
	termTimeout time.Duration

	// failMu guards the failure of the last starts: failure (nil once a start succeeds), how many
	// starts in a row failed for its cause, and the alerts of the last one.
	failMu     sync.Mutex
	failure    *Failure
	failStreak int
	failAlerts []string
}

// New returns a Supervisor of the HAProxy binary bin serving dir (config dir/conf/haproxy.cfg and
// the backend files of dir/conf/backends, master socket dir/run/master.sock). A nil log discards.
func New(bin, dir string, log *slog.Logger) *Supervisor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{
		bin:         bin,
		dir:         dir,
		log:         log,
		started:     make(chan struct{}, 1),
		termTimeout: termTimeout,
	}
}

// Started receives a value after every (re)start, once the master CLI answers (buffer 1: a start
// not yet received is not queued twice).
func (s *Supervisor) Started() <-chan struct{} { return s.started }

// ConfigPath returns dir/conf/haproxy.cfg.
func (s *Supervisor) ConfigPath() string { return layout.For(s.dir).Config() }

// MasterSocket returns dir/run/master.sock.
func (s *Supervisor) MasterSocket() string { return layout.For(s.dir).MasterSocket() }

// Run starts HAProxy and keeps it running until ctx ends, then stops it and returns once the process
// is gone. It returns ctx's cause (context.Canceled or DeadlineExceeded, possibly joined with a stop
// failure), or an error straight away when the directory cannot work (not absolute, socket path too
// long) or Run is already running. A start that fails (missing binary, bad config, no answer on the
// master socket) is logged and retried with backoff; so is a process that exits on its own.
func (s *Supervisor) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("supervise: Run is already running")
	}
	defer s.running.Store(false)
	if err := s.checkPaths(); err != nil {
		return err
	}
	eb := s.newBackOff()
	for attempt := 1; ; attempt++ {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		p, err := s.start(attempt)
		if err != nil {
			s.startFailed(nil, err, attempt)
		} else {
			ranFor, startErr, stopErr := s.watch(ctx, p)
			if ctx.Err() != nil {
				return errors.Join(context.Cause(ctx), stopErr)
			}
			if startErr != nil {
				s.startFailed(p, startErr, attempt)
			}
			if ranFor >= healthyAfter {
				eb.Reset()
			}
		}
		wait := nextWait(eb)
		level := slog.LevelInfo
		if s.repeating() {
			level = slog.LevelDebug
		}
		s.log.Log(ctx, level, msgRestarting, "in", wait.Round(time.Millisecond), "attempt", attempt+1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

// watch follows a started process: it waits for the master CLI (then signals Started), then until the
// process exits or ctx ends (then stops it). It returns how long the process ran after it was ready
// (0 when it never was), why it did not get ready, and, after ctx ended, the error of the stop.
func (s *Supervisor) watch(ctx context.Context, p *process) (ranFor time.Duration, startErr, stopErr error) {
	defer s.pid.Store(0)
	readyAt, err := s.waitReady(ctx, p)
	switch {
	case ctx.Err() != nil:
		return 0, nil, s.stop(p)
	case err != nil:
		if p.done() {
			p.killGroup() // workers it may have left
		} else if kerr := s.kill(p); kerr != nil {
			s.log.Error("haproxy could not be killed", "pid", p.pid, "err", kerr)
		}
		p.finish()
		return 0, err, nil
	}
	select {
	case s.started <- struct{}{}:
	default:
	}
	// From 3.0 the master answers before its first worker has bound the listeners: a worker that
	// cannot bind makes the master exit just after it answered. An exit with alerts within
	// startupWindow is a failed start, and the start counts as good only once the window has passed.
	window := time.NewTimer(startupWindow)
	defer window.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Since(readyAt), nil, s.stop(p)
		case <-window.C:
			s.startSucceeded()
			continue
		case <-p.exited:
		}
		break
	}
	ranFor = time.Since(readyAt)
	p.killGroup() // workers left without their master
	p.finish()
	if ranFor < startupWindow && len(p.alerts.all()) > 0 && !killedWorker(p.alerts.all()) {
		return ranFor, fmt.Errorf("exited %v after its master answered (%s)", ranFor.Round(time.Millisecond), p.status()), nil
	}
	s.log.Error(msgExited, "pid", p.pid, "status", p.status(), "ran", ranFor.Round(time.Millisecond))
	return ranFor, nil, nil
}

// stop soft-stops p: SIGUSR1, StopTimeout; SIGTERM, termTimeout; SIGKILL to the group, killTimeout.
// It returns an error when the process is still there after that.
func (s *Supervisor) stop(p *process) error {
	defer p.finish()
	if p.done() {
		s.log.Info(msgStopped, "pid", p.pid, "signal", "none", "status", p.status())
		return nil
	}
	stages := []struct {
		sig     os.Signal
		name    string
		timeout time.Duration
	}{
		{sigSoftStop, "SIGUSR1", s.stopTimeout()},
		{sigTerm, "SIGTERM", s.termTimeout},
	}
	for _, st := range stages {
		if err := p.signal(st.sig); err != nil {
			s.log.Warn("signalling haproxy", "pid", p.pid, "signal", st.name, "err", err)
		}
		if p.waitExit(st.timeout) {
			p.killGroup()
			s.log.Info(msgStopped, "pid", p.pid, "signal", st.name, "status", p.status())
			return nil
		}
		s.log.Warn("haproxy still running", "pid", p.pid, "signal", st.name, "after", st.timeout)
	}
	return s.kill(p)
}

// kill SIGKILLs p's process group and waits for the master to be reaped.
func (s *Supervisor) kill(p *process) error {
	p.killGroup()
	if !p.waitExit(killTimeout) {
		return fmt.Errorf("supervise: haproxy (pid %d) still running %v after SIGKILL", p.pid, killTimeout)
	}
	s.log.Info(msgStopped, "pid", p.pid, "signal", "SIGKILL", "status", p.status())
	return nil
}

// nextWait is the next restart wait, at most maxBackoff: the library's jitter spreads each interval
// over ±50%, so its MaxInterval alone would allow up to 1.5× the documented cap.
func nextWait(eb *backoff.ExponentialBackOff) time.Duration {
	wait := eb.NextBackOff()
	if wait == backoff.Stop || wait > maxBackoff { // Stop cannot come (MaxElapsedTime 0); stay bounded anyway
		wait = maxBackoff
	}
	return wait
}

// newBackOff returns the restart backoff: never gives up (MaxElapsedTime 0).
func (s *Supervisor) newBackOff() *backoff.ExponentialBackOff {
	eb := backoff.NewExponentialBackOff()
	eb.InitialInterval = initialBackoff
	eb.MaxInterval = maxBackoff
	eb.MaxElapsedTime = 0
	eb.Reset()
	return eb
}

// checkPaths refuses a directory HAProxy cannot work in whatever happens later.
func (s *Supervisor) checkPaths() error {
	if !filepath.IsAbs(s.dir) {
		return fmt.Errorf("supervise: haproxy directory %q is not absolute", s.dir)
	}
	if n := len(s.MasterSocket()); n > maxSocketPath {
		return fmt.Errorf("supervise: master socket path %q is %d bytes, over the %d-byte limit of unix sockets",
			s.MasterSocket(), n, maxSocketPath)
	}
	return nil
}

func (s *Supervisor) stopTimeout() time.Duration {
	return orDefault(s.StopTimeout, DefaultStopTimeout)
}

func (s *Supervisor) startTimeout() time.Duration {
	return orDefault(s.StartTimeout, DefaultStartTimeout)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
