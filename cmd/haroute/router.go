package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/haroute/haroute/inspect/access"
	"github.com/haroute/haroute/inspect/dataplane"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
	"github.com/haroute/haroute/runtime/supervise"
	"github.com/haroute/haroute/sync/controller"
	"github.com/haroute/haroute/sync/source"
	"github.com/haroute/haroute/sync/status"
)

// runRouter is `haroute run` with resolved settings: it returns nil when ctx ends (after every part
// has stopped, a managed HAProxy included), or the failure that stopped the router.
func (a *app) runRouter(parent context.Context, rc runConfig) (err error) {
	src, statusQueue, kube, err := a.newSource(rc)
	if err != nil {
		return err
	}
	// The router's own TLS files are read before anything starts (a missing one is a start-up error)
	// and go with every snapshot: a rotation is a change like any other, applied at runtime.
	lw, err := a.listenerWatcher(parent, rc.settings, rc.dir)
	if err != nil {
		return err
	}
	var files model.ListenerFiles
	if lw != nil {
		src, files = source.WithListener(src, lw), lw.Files()
	}
	if rc.settings.opts.TLS.Curves, err = fitCurves(parent, a.log, rc.checkBinary, rc.settings.opts.TLS.Curves); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	rev := a.metricsReviewer(rc, kube)
	inst, err := a.newInstance(&rc, files)
	if err != nil {
		return err
	}
	metrics, err := a.routerMetrics(inst, rc)
	if err != nil {
		return err
	}
	// The stats port is taken first, so that a port in use fails before anything starts.
	statsLns, err := listenStats(rc)
	if err != nil {
		return err
	}
	defer closeAll(statsLns)

	ctx, cancel := context.WithCancel(parent)
	g := &group{cancel: cancel}
	defer func() {
		cancel()
		if werr := g.wait(); werr != nil {
			err = errors.Join(err, werr)
		}
	}()
	boot := a.serveStartup(ctx, g, statsLns, protectMetrics(rc, rev, promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{})), rc.draining)
	g.start(ctx, "source", src.Run)
	if !a.waitSynced(ctx, src) {
		return nil
	}
	if rc.managed == "" && !rc.once && inst.Adopt(ctx) {
		a.log.Info("HAProxy was running before this configuration was written: the first sync reloads it")
	}
	refused, err := a.writeFirstConfig(ctx, src, inst, rc)
	if err != nil || rc.once {
		return err
	}
	restarts, err := a.startHAProxy(ctx, g, rc, boot)
	if err != nil || ctx.Err() != nil {
		return err
	}
	ctl := &controller.Controller{
		Source:        src,
		Options:       rc.settings.opts,
		HAProxy:       inst,
		Refused:       refused,
		Restarts:      restarts,
		DriftInterval: rc.driftInterval,
		Metrics:       metrics,
		Log:           a.log,
		RunSettings:   rc.runSettings,
	}
	a.startParts(ctx, g, ctl, statusQueue, rc)
	boot.serve(a.statsHandler(ctl, rc, rev))
	<-ctx.Done()
	if parent.Err() != nil {
		a.log.Info("stopping")
	}
	return nil
}

// newInstance returns the owner of the HAProxy side for rc, after fitting the default maxconn to this
// process's file limit (in rc): a managed HAProxy runs under it, and the containers of one pod get the
// same limits from the container runtime.
func (a *app) newInstance(rc *runConfig, files model.ListenerFiles) (*haproxy.Instance, error) {
	rc.settings.opts.MaxConnections = fitMaxConn(a.log, rc.settings.opts.MaxConnections,
		strings.TrimSpace(a.getenv("ROUTER_MAX_CONNECTIONS")) == "", rc.managed == "")
	if rc.checkBinary == "" && !rc.once {
		a.log.Info("no HAProxy binary to run haproxy -c with: each reload is checked by HAProxy's master, and a configuration it refuses is rolled back to the last good files")
	}
	ro, err := a.renderOptions(rc.settings, rc.dir, files)
	if err != nil {
		return nil, err
	}
	return haproxy.New(haproxy.Config{
		Dir:            rc.dir,
		Render:         ro,
		Binary:         rc.checkBinary,
		AdminSocket:    rc.adminSocket,
		MasterSocket:   rc.masterSocket,
		ReloadInterval: rc.reloadInterval,
		// --mode reload: every change is a reload, the stock router's way.
		ReloadEveryChange: rc.mode == modeReload,
		// The spare pool grows with bursts of new Routes, and shrinks back at a reload after a quiet time.
		AdaptivePool: true,
		Log:          a.log,
	})
}

// serveStartup serves the stats listeners from now on, so that /healthz/ready says what the router
// waits for; the returned handler takes over once the router runs.
func (a *app) serveStartup(ctx context.Context, g *group, lns []net.Listener, metrics http.Handler, draining *atomic.Bool) *startup {
	boot := newStartup(metrics, draining)
	srv := &http.Server{Handler: boot, ReadHeaderTimeout: statsReadHeaderTimout}
	for _, ln := range lns {
		g.start(ctx, "stats listener", func(ctx context.Context) error { return serveUntil(ctx, srv, ln) })
		a.log.Info("serving /healthz, /healthz/ready and /metrics", "addr", ln.Addr().String())
	}
	return boot
}

// writeFirstConfig translates the first snapshot and writes its initial files, from which HAProxy
// starts (or which --once leaves for it), leaving out the Routes `haproxy -c` refuses (when there is a
// binary to check with); it returns those for the controller to keep out.
func (a *app) writeFirstConfig(ctx context.Context, src source.Source, inst *haproxy.Instance, rc runConfig) ([]controller.Refusal, error) {
	first, err := controller.WriteFirst(ctx, src, rc.settings.opts, inst, a.log)
	if err != nil {
		return nil, err
	}
	d := first.Desired
	for _, fe := range d.FileErrors {
		a.log.Warn("manifest file not (fully) used", "file", fe.Path, "error", fe.Err)
	}
	a.log.Info("wrote the first configuration", "config", layout.For(rc.dir).Config(),
		"routes", len(first.Initial.State.Routes), "rejected", d.Rejected(), "refusedByHAProxy", len(first.Refused),
		"backends", len(first.Initial.State.Backends), "mode", rc.mode)
	if rc.once {
		a.reportProblems(d.Problems)
	}
	return first.Refused, nil
}

// startHAProxy starts a managed HAProxy under a supervisor and returns its restart signals, or, in
// sidecar mode, waits for the sockets of the HAProxy others start (nil signals: the controller finds
// restarts in HAProxy's process list). It returns nil, nil when ctx ends first.
func (a *app) startHAProxy(ctx context.Context, g *group, rc runConfig, boot *startup) (<-chan struct{}, error) {
	if rc.managed == "" {
		boot.setPhase("waiting for the sockets of the HAProxy started beside haroute: " + rc.adminSocket + ", " + rc.masterSocket)
		a.log.Info("waiting for HAProxy's sockets", "admin", rc.adminSocket, "master", rc.masterSocket)
		if err := supervise.WaitForSockets(ctx, rc.adminSocket, rc.masterSocket); err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("waiting for HAProxy: %w", err)
		}
		return nil, nil
	}
	sup := supervise.New(rc.managed, rc.dir, a.log)
	boot.setPhase("starting HAProxy")
	boot.sup.Store(sup)
	g.start(ctx, "haproxy supervisor", sup.Run)
	a.log.Info("starting HAProxy", "binary", rc.managed, "config", sup.ConfigPath())
	select {
	case <-sup.Started():
	case <-ctx.Done():
	}
	return sup.Started(), nil
}

// startParts starts the controller and what serves beside it: the status writer, the state socket
// and the onReady hook.
func (a *app) startParts(ctx context.Context, g *group, ctl *controller.Controller, statusQueue *status.Queue, rc runConfig) {
	if statusQueue != nil {
		// Status is written by its own worker, so that the sync loop never waits for the API server.
		g.start(ctx, "route status", func(ctx context.Context) error {
			statusQueue.Run(ctx)
			return nil
		})
		ctl.Status = statusQueue
	}
	if err := a.serveState(ctx, g, ctl, rc); err != nil {
		// The inspection commands degrade without it; the router serves regardless.
		a.log.Warn("no state socket for the inspection commands", "err", err)
	}
	g.start(ctx, "controller", ctl.Run)
	if rc.onReady != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			if waitUntil(ctx, ctl.Ready) {
				rc.onReady()
			}
		}()
	}
}

// serveState serves the controller's state (controller.StateHandler) for the inspection commands on
// the unix socket layout.StateSocket of the HAProxy directory (mode 0600: it
// describes every Route). A stale socket left by an earlier run is replaced; any other file there is
// an error.
func (a *app) serveState(ctx context.Context, g *group, ctl *controller.Controller, rc runConfig) error {
	path := layout.For(rc.dir).StateSocket()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("state socket: %w", err)
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode().Type() != os.ModeSocket {
			return fmt.Errorf("state socket: %s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("state socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("state socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return fmt.Errorf("state socket: %w", err)
	}
	srv := &http.Server{Handler: controller.StateHandler(ctl), ReadHeaderTimeout: statsReadHeaderTimout}
	g.start(ctx, "state socket", func(ctx context.Context) error { return serveUntil(ctx, srv, ln) })
	a.log.Info("serving the state of the inspection commands", "socket", path)
	return nil
}

// statsHandler is what the stats port serves: the controller's /healthz, /healthz/ready and /metrics,
// and, when STATS_USERNAME and STATS_PASSWORD are set, behind basic authentication, HAProxy's stats
// page on / (as OpenShift serves it) and the read-only Data Plane API view of the live HAProxy under
// /v3/ (both show every backend's servers).
func (a *app) statsHandler(ctl *controller.Controller, rc runConfig, rev *access.Reviewer) http.Handler {
	ctlHandler := controller.Handler(ctl)
	mux := http.NewServeMux()
	mux.Handle("/metrics", protectMetrics(rc, rev, ctlHandler))
	if rc.statsUser == "" {
		a.log.Info("the stats page and the Data Plane API view are not served on the stats port: set STATS_USERNAME and STATS_PASSWORD to serve them")
		mux.Handle("/", ctlHandler)
		return mux
	}
	paths, err := render.PathsFor(&model.Config{}, rc.dir)
	if err != nil {
		a.log.Warn("the stats page and the Data Plane API view are not served", "err", err)
		mux.Handle("/", ctlHandler)
		return mux
	}
	page := basicAuth(rc.statsUser, rc.statsPassword, statsPage(paths.StatsSocket))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStatsPage(r) {
			page.ServeHTTP(w, r)
			return
		}
		ctlHandler.ServeHTTP(w, r)
	}))
	admin := socket.NewAdmin(rc.adminSocket, socket.Options{})
	mux.Handle("/v3/", basicAuth(rc.statsUser, rc.statsPassword, dataplane.Handler(admin, paths, nil)))
	return mux
}
