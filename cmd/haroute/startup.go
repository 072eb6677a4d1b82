package main

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/haroute/haroute/runtime/supervise"
)

// startup serves the stats port from the moment it is taken, before the controller exists: the
// readiness endpoint then says what the router waits for (the source's first snapshot, HAProxy's
// start and, when it fails, why), liveness answers, and /metrics serves the registry. Once the
// controller runs, its handler takes over.
type startup struct {
	// phase says what the router is doing; handler is the full handler once set.
	phase   atomic.Pointer[string]
	handler atomic.Pointer[http.Handler]
	// sup is the supervisor of a managed HAProxy (nil in sidecar mode).
	sup     atomic.Pointer[supervise.Supervisor]
	metrics http.Handler
	// draining is set while a graceful shutdown delay runs (nil: never).
	draining *atomic.Bool
}

func newStartup(metrics http.Handler, draining *atomic.Bool) *startup {
	s := &startup{metrics: metrics, draining: draining}
	s.setPhase("waiting for the first complete snapshot of the source")
	return s
}

func (s *startup) setPhase(p string) { s.phase.Store(&p) }

// serve hands every request to h from now on.
func (s *startup) serve(h http.Handler) { s.handler.Store(&h) }

// notReady says why the router is not ready yet.
func (s *startup) notReady() string {
	if sup := s.sup.Load(); sup != nil {
		if f, failing := sup.Failure(); failing {
			msg := "HAProxy does not start: " + f.Cause + "; fix: " + f.Fix
			if f.Alert != "" {
				msg += "; HAProxy said: " + f.Alert
			}
			return msg
		}
	}
	return *s.phase.Load()
}

func (s *startup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz/ready" && s.draining != nil && s.draining.Load() {
		http.Error(w, "not ready: shutting down (ROUTER_GRACEFUL_SHUTDOWN_DELAY)", http.StatusServiceUnavailable)
		return
	}
	if h := s.handler.Load(); h != nil {
		if sup := s.sup.Load(); r.URL.Path == "/healthz/ready" && sup != nil {
			if _, failing := sup.Failure(); failing { // HAProxy failed to restart
				http.Error(w, "not ready: "+s.notReady(), http.StatusServiceUnavailable)
				return
			}
		}
		(*h).ServeHTTP(w, r)
		return
	}
	switch r.URL.Path {
	case "/healthz":
		fmt.Fprintln(w, "ok: starting")
	case "/healthz/ready":
		http.Error(w, "not ready: "+s.notReady(), http.StatusServiceUnavailable)
	case "/metrics":
		s.metrics.ServeHTTP(w, r)
	default:
		http.Error(w, "not ready: "+s.notReady(), http.StatusServiceUnavailable)
	}
}
