package supervise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/haroute/haroute/runtime/socket"
)

// probeOptions are the socket options of one readiness probe: bounded, no retries of its own (the
// callers poll).
func probeOptions() socket.Options { return socket.Options{Timeout: probeTimeout, RetryFor: -1} }

// waitReady polls the master CLI until it answers `show proc` with p as master and at least one
// current worker. It gives up when p exits, ctx ends or StartTimeout has passed, and returns when
// the process became ready.
func (s *Supervisor) waitReady(ctx context.Context, p *process) (time.Time, error) {
	start := time.Now()
	master := socket.NewMaster(s.MasterSocket(), probeOptions())
	timeout := time.NewTimer(s.startTimeout())
	defer timeout.Stop()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		last = probeMaster(pctx, master, p.pid)
		cancel()
		if last == nil {
			now := time.Now()
			s.log.Info(msgStarted, "pid", p.pid, "took", now.Sub(start).Round(time.Millisecond))
			return now, nil
		}
		poll := time.NewTimer(pollInterval)
		select {
		case <-ctx.Done():
			poll.Stop()
			return time.Time{}, context.Cause(ctx)
		case <-p.exited:
			poll.Stop()
			return time.Time{}, fmt.Errorf("exited before the master socket answered (%s): %w", p.status(), last)
		case <-timeout.C:
			poll.Stop()
			return time.Time{}, fmt.Errorf("master socket not answering after %v: %w", s.startTimeout(), last)
		case <-poll.C:
		}
	}
}

// probeMaster asks the master CLI for `show proc` and checks that the master is pid (any when pid is
// 0) and has a worker serving (socket.ProcState.Serving: on 3.1+ a sidecar may meet a master whose
// last reload failed, which lists its serving worker as old).
func probeMaster(ctx context.Context, master *socket.Master, pid int) error {
	ps, err := master.ShowProc(ctx)
	if err != nil {
		return err
	}
	if pid != 0 && ps.Master.PID != pid {
		return fmt.Errorf("master socket %s is served by pid %d, not %d", master.Path(), ps.Master.PID, pid)
	}
	if _, ok := ps.Serving(); ok {
		return nil
	}
	return fmt.Errorf("master socket %s: no serving worker yet", master.Path())
}

// probeAdmin asks the admin socket for `show version` and checks that the answer is a version.
func probeAdmin(ctx context.Context, admin *socket.Admin) error {
	reply, err := admin.Command(ctx, "show version")
	if err != nil {
		return err
	}
	v := strings.TrimSpace(reply)
	if v == "" || v[0] < '0' || v[0] > '9' || strings.Contains(v, "\n") {
		return &socket.CommandError{Command: "show version", Reply: reply, Err: socket.ErrUnexpectedReply}
	}
	return nil
}

// WaitForSockets polls until an HAProxy run by someone else (sidecar mode) answers on both sockets:
// `show version` on the worker's admin socket at adminPath and `show proc` (with a current worker) on
// the master CLI at masterPath. It is bounded by ctx only: on ctx's end it returns an error wrapping
// ctx's cause and the last probe error.
func WaitForSockets(ctx context.Context, adminPath, masterPath string) error {
	admin := socket.NewAdmin(adminPath, probeOptions())
	master := socket.NewMaster(masterPath, probeOptions())
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*probeTimeout)
		err := errors.Join(probeAdmin(pctx, admin), probeMaster(pctx, master, 0))
		cancel()
		if err == nil {
			return nil
		}
		poll := time.NewTimer(pollInterval)
		select {
		case <-ctx.Done():
			poll.Stop()
			return fmt.Errorf("waiting for haproxy on %s and %s: %w; last: %w", adminPath, masterPath, context.Cause(ctx), err)
		case <-poll.C:
		}
	}
}
