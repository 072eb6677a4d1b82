package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// group runs the router's long-lived parts and remembers the first real failure, which ends all of
// them (through the shared context's cancel).
type group struct {
	wg     sync.WaitGroup
	cancel context.CancelFunc
	mu     sync.Mutex
	errs   []error
}

func (g *group) start(ctx context.Context, name string, fn func(context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := fn(ctx)
		switch {
		case ctx.Err() != nil:
			// Stopping: only failures of the stop itself are worth reporting.
			if err != nil && !errors.Is(err, context.Canceled) {
				g.fail(fmt.Errorf("%s: %w", name, err))
			}
		case err == nil:
			// A part that stops on its own leaves the router incomplete.
			g.fail(fmt.Errorf("%s stopped", name))
		default:
			g.fail(fmt.Errorf("%s: %w", name, err))
		}
	}()
}

func (g *group) fail(err error) {
	g.mu.Lock()
	g.errs = append(g.errs, err)
	g.mu.Unlock()
	g.cancel()
}

func (g *group) wait() error {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return errors.Join(g.errs...)
}

// serveUntil serves srv on ln until ctx ends, then shuts it down (bounded).
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statsShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ctx.Err()
}

// waitUntil polls cond until it holds (true) or ctx ends (false).
func waitUntil(ctx context.Context, cond func() bool) bool {
	t := time.NewTicker(syncPollInterval)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
