package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// shutdownContext returns a context that ends on SIGINT at once, and on SIGTERM after delay
// (ROUTER_GRACEFUL_SHUTDOWN_DELAY): meanwhile draining is set, so that /healthz/ready answers 503 and
// load balancers take the router out, while it keeps serving and following the cluster, as
// OpenShift's router does. A second signal ends it at once.
func shutdownContext(parent context.Context, delay time.Duration, draining *atomic.Bool, log *slog.Logger) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer signal.Stop(sigs)
		select {
		case <-ctx.Done():
			return
		case sig := <-sigs:
			if sig != syscall.SIGTERM || delay <= 0 {
				cancel()
				return
			}
		}
		draining.Store(true)
		log.Info("shutdown requested: serving on, reported not ready, for ROUTER_GRACEFUL_SHUTDOWN_DELAY", "delay", delay)
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-sigs:
			log.Info("second signal: stopping now")
		}
		cancel()
	}()
	return ctx, cancel
}
