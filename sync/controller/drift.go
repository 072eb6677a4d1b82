package controller

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/haroute/haroute/runtime/haproxy"
)

// maxDriftLogged bounds the drift items named in one log line.
const maxDriftLogged = 10

// periodic runs every DriftInterval: HAProxy's process list (worker gauge; restart detection in
// sidecar mode) and a drift check.
func (l *loop) periodic(ctx context.Context) {
	if restart := l.checkProcs(ctx); restart != "" {
		l.restarted(restart)
		return
	}
	if l.retrying || l.lastDesired == nil {
		return
	}
	l.checkDrift(ctx)
}

// checkProcs updates the worker gauge and returns why HAProxy seems restarted by someone else (""
// when it does not). A supervisor's Restarts channel, when set, is the only source of restarts.
func (l *loop) checkProcs(ctx context.Context) string {
	c := l.c
	ps, err := c.HAProxy.Processes(ctx)
	if err != nil {
		c.log().Warn("HAProxy's process list", "err", err)
		return ""
	}
	c.metrics().Workers.Set(float64(ps.Workers))
	if c.Restarts != nil {
		return ""
	}
	return ps.Restart
}

// checkDrift has HAProxy's live state compared with the applied state and repaired: through runtime
// ops, or, when ops cannot repair it, by a reload that the next sync makes (reason Drift).
func (l *loop) checkDrift(ctx context.Context) {
	c := l.c
	log := c.log()
	res, err := c.HAProxy.Repair(ctx)
	if errors.Is(err, haproxy.ErrNoState) {
		return
	}
	if err != nil {
		log.Warn("drift check failed", "err", err)
		return
	}
	c.state.repair(res, c.HAProxy.Applied())
	if held := strings.Join(res.Held, ", "); held != l.held {
		l.held = held
		if held != "" {
			log.Info("servers held by an operator are left as they are until they go or the next reload", "servers", res.Held)
		}
	}
	if len(res.Drift) == 0 {
		log.Debug("drift check: none")
		return
	}
	m := c.metrics()
	recordOps(m, res.Result.Counts, len(res.Result.Deferred), res.FailedOp)
	m.DriftRepairs.Inc()
	log.Warn("drift found", "count", len(res.Drift), "drift", res.Drift[:min(len(res.Drift), maxDriftLogged)])
	if res.Resync {
		log.Warn("drift: resyncing with a reload", "reason", res.Reason.String())
		l.soon(time.Now(), 0)
		return
	}
	log.Info("drift repaired", "ops", formatCounts(res.Result.Counts), "deferred", len(res.Result.Deferred),
		"duration", res.Duration.Round(time.Microsecond))
}
