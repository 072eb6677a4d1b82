package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	routeclientset "github.com/openshift/client-go/route/clientset/versioned"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
	"github.com/haroute/haroute/runtime/supervise"
	"github.com/haroute/haroute/sync/controller"
	"github.com/haroute/haroute/sync/source"
	"github.com/haroute/haroute/sync/status"
)

// Defaults of `haroute run`.
const (
	defaultHAProxyDir     = "/var/lib/haproxy"
	defaultHAProxyBinary  = "/usr/sbin/haproxy"
	defaultStatsPort      = 1936
	defaultDriftInterval  = 30 * time.Second
	modeRuntime           = "runtime"
	modeReload            = "reload"
	adminSocketFile       = "run/haproxy.sock"
	masterSocketFile      = "run/master.sock"
	syncPollInterval      = 20 * time.Millisecond
	syncWaitLogInterval   = 10 * time.Second
	statsShutdownTimeout  = 5 * time.Second
	statsReadHeaderTimout = 10 * time.Second
	// sidecarProbeTimeout bounds the probe that tells whether an external HAProxy already runs.
	sidecarProbeTimeout = time.Second
)

// Flag names of `haroute run` (besides the settings flags it shares with render).
const (
	flagKubeconfig     = "kubeconfig"
	flagManifests      = "manifests"
	flagHAProxyDir     = "haproxy-dir"
	flagAdminSocket    = "admin-socket"
	flagMasterSocket   = "master-socket"
	flagManaged        = "managed-haproxy"
	flagStatsPort      = "stats-port"
	flagReloadInterval = "reload-interval"
	flagMode           = "mode"
	flagUpdateStatus   = "update-status"
	flagOnce           = "once"
	flagDriftInterval  = "drift-interval"
)

// runFlags are the values of `haroute run`'s flags.
type runFlags struct {
	renderFlags
	kubeconfig     string
	adminSocket    string
	masterSocket   string
	managedHAProxy string
	statsPort      int
	reloadInterval time.Duration
	mode           string
	updateStatus   bool
	once           bool
	driftInterval  time.Duration
}

// runConfig is a resolved `haroute run`: what the router does, independent of where the values came
// from (flags and environment for run, fixed choices for demo).
type runConfig struct {
	settings renderSettings
	// manifests is the folder of the folder source; empty for the cluster source.
	manifests string
	// kubeconfig is the kubeconfig file of the cluster source; empty: in-cluster.
	kubeconfig string
	// dir is the absolute HAProxy directory.
	dir                       string
	adminSocket, masterSocket string
	// managed is the HAProxy binary run supervises; empty: sidecar (HAProxy is started by others).
	managed string
	// checkBinary runs `haproxy -c` before reloads.
	checkBinary string
	// statsPort serves /healthz, /healthz/ready and /metrics on statsAddress; 0 disables it.
	statsPort      int
	statsAddress   string
	reloadInterval time.Duration
	mode           string
	updateStatus   bool
	once           bool
	driftInterval  time.Duration
	// canonicalHostname goes into Route status (ROUTER_CANONICAL_HOSTNAME).
	canonicalHostname string
	// onReady, when set, is called once after the first sync was applied and HAProxy serves.
	onReady func()
}

func newRunCommand(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run (--manifests DIR | --kubeconfig FILE | in-cluster) [--managed-haproxy[=PATH]]",
		Short: "Keep HAProxy in step with a cluster or a folder of manifests",
		Long: "run reads Routes, Services and EndpointSlices from the Kubernetes API (--kubeconfig, or the\n" +
			"in-cluster configuration) or from a watched folder (--manifests), writes the first HAProxy\n" +
			"configuration and keeps HAProxy in step: runtime API updates where HAProxy can take them, a\n" +
			"validated reload where it cannot. With --managed-haproxy it starts and supervises HAProxy itself;\n" +
			"without it (sidecar) it waits for the master and admin sockets of an HAProxy started by others.\n" +
			"Settings come from OpenShift's environment variables; flags that are set override them.\n" +
			"SIGINT or SIGTERM stops everything (a managed HAProxy is stopped gracefully).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rc, err := a.runSettings(f, cmd.Flags().Changed)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.runRouter(ctx, rc)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, flagKubeconfig, "", "kubeconfig file of the cluster to watch [KUBECONFIG]; without it and --manifests: in-cluster")
	fl.StringVar(&f.manifests, flagManifests, "", "watch this folder of manifest files instead of a cluster")
	fl.StringVar(&f.haproxyDir, flagHAProxyDir, defaultHAProxyDir, "HAProxy directory (conf/, router/, run/)")
	fl.StringVar(&f.adminSocket, flagAdminSocket, "", "HAProxy admin socket (default <haproxy-dir>/"+adminSocketFile+")")
	fl.StringVar(&f.masterSocket, flagMasterSocket, "", "HAProxy master socket (default <haproxy-dir>/"+masterSocketFile+")")
	fl.StringVar(&f.managedHAProxy, flagManaged, "", "start and supervise HAProxy from this binary")
	fl.Lookup(flagManaged).NoOptDefVal = defaultHAProxyBinary
	fl.IntVar(&f.statsPort, flagStatsPort, defaultStatsPort, "port of /healthz, /healthz/ready and /metrics; 0 disables [STATS_PORT]")
	fl.DurationVar(&f.reloadInterval, flagReloadInterval, reload.DefaultMinInterval, "least time between two reloads [RELOAD_INTERVAL]")
	fl.StringVar(&f.mode, flagMode, modeRuntime, "runtime: runtime API updates, reload only when needed; reload: reload for every change (the stock router's way)")
	fl.BoolVar(&f.updateStatus, flagUpdateStatus, true, "write Route status.ingress (cluster only)")
	fl.BoolVar(&f.once, flagOnce, false, "write the first configuration and exit (an init step for sidecar mode)")
	fl.DurationVar(&f.driftInterval, flagDriftInterval, defaultDriftInterval, "how often the live HAProxy state is compared with the applied one")
	addSettingsFlags(fl, &f.renderFlags, "without it a self-signed one is kept in the HAProxy directory")
	return cmd
}

// runSettings resolves run's flags and environment into a runConfig.
func (a *app) runSettings(f runFlags, changed func(string) bool) (runConfig, error) {
	s, err := a.settings(f.renderFlags, changed)
	if err != nil {
		return runConfig{}, err
	}
	rc := runConfig{
		settings:          s,
		manifests:         f.manifests,
		kubeconfig:        f.kubeconfig,
		managed:           f.managedHAProxy,
		mode:              f.mode,
		updateStatus:      f.updateStatus,
		once:              f.once,
		driftInterval:     f.driftInterval,
		statsPort:         f.statsPort,
		reloadInterval:    f.reloadInterval,
		statsAddress:      s.opts.BindAddress,
		canonicalHostname: strings.TrimSpace(a.getenv("ROUTER_CANONICAL_HOSTNAME")),
	}
	var errs []error
	if !changed(flagKubeconfig) {
		rc.kubeconfig = strings.TrimSpace(a.getenv("KUBECONFIG"))
	}
	switch {
	case f.manifests != "" && changed(flagKubeconfig):
		errs = append(errs, errors.New("--manifests and --kubeconfig exclude each other"))
	case f.manifests != "":
		rc.kubeconfig = ""
	case s.opts.AllowLoopbackEndpoints:
		errs = append(errs, errors.New("--allow-loopback-endpoints is for folder mode (--manifests) only: in a cluster a hand-made EndpointSlice could publish the router's own sockets"))
	}
	if !changed(flagStatsPort) {
		if v := strings.TrimSpace(a.getenv("STATS_PORT")); v != "" {
			if rc.statsPort, err = strconv.Atoi(v); err != nil {
				errs = append(errs, fmt.Errorf("STATS_PORT=%q: want a port number", v))
			}
		}
	}
	if rc.statsPort < 0 || rc.statsPort > 65535 {
		errs = append(errs, fmt.Errorf("stats port %d: want 0 (off) or a port in 1-65535", rc.statsPort))
	}
	if !changed(flagReloadInterval) {
		if v := strings.TrimSpace(a.getenv("RELOAD_INTERVAL")); v != "" {
			if rc.reloadInterval, err = parseInterval(v); err != nil {
				errs = append(errs, fmt.Errorf("RELOAD_INTERVAL=%q: %w", v, err))
			}
		}
	}
	if rc.reloadInterval < 0 {
		errs = append(errs, fmt.Errorf("--%s=%v: want 0 or more", flagReloadInterval, rc.reloadInterval))
	}
	if rc.mode != modeRuntime && rc.mode != modeReload {
		errs = append(errs, fmt.Errorf("--%s=%q: want %s or %s", flagMode, rc.mode, modeRuntime, modeReload))
	}
	if rc.driftInterval <= 0 {
		errs = append(errs, fmt.Errorf("--%s=%v: want more than 0", flagDriftInterval, rc.driftInterval))
	}
	if rc.once && rc.managed != "" {
		errs = append(errs, fmt.Errorf("--%s and --%s exclude each other: --once only writes the first configuration", flagOnce, flagManaged))
	}
	if rc.dir, err = filepath.Abs(f.haproxyDir); err != nil {
		errs = append(errs, fmt.Errorf("haproxy directory %q: %w", f.haproxyDir, err))
	}
	rc.adminSocket = cmpOr(f.adminSocket, filepath.Join(rc.dir, filepath.FromSlash(adminSocketFile)))
	rc.masterSocket = cmpOr(f.masterSocket, filepath.Join(rc.dir, filepath.FromSlash(masterSocketFile)))
	if want := filepath.Join(rc.dir, filepath.FromSlash(masterSocketFile)); rc.managed != "" && filepath.Clean(rc.masterSocket) != want {
		errs = append(errs, fmt.Errorf("--%s: a managed HAProxy's master socket is %s", flagMasterSocket, want))
	}
	rc.checkBinary = cmpOr(rc.managed, defaultHAProxyBinary)
	if err := errors.Join(errs...); err != nil {
		return runConfig{}, fmt.Errorf("settings: %w", err)
	}
	return rc, nil
}

// parseInterval reads RELOAD_INTERVAL: a Go duration ("5s", "500ms") or a number of seconds ("5").
func parseInterval(v string) (time.Duration, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("want a duration such as 5s or 500ms")
	}
	return d, nil
}

// cmpOr returns v, or def when v is empty.
func cmpOr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

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

// runRouter is `haroute run` with resolved settings: it returns nil when ctx ends (after every part
// has stopped, a managed HAProxy included), or the failure that stopped the router.
func (a *app) runRouter(parent context.Context, rc runConfig) (err error) {
	opts := rc.settings.opts
	src, statusQueue, err := a.newSource(rc)
	if err != nil {
		return err
	}
	ro, err := a.renderOptions(rc.settings, rc.dir)
	if err != nil {
		return err
	}
	warnFDLimit(a.log, opts.MaxConnections)

	// The stats port is taken first, so that a port in use fails before anything starts.
	var statsLn net.Listener
	if rc.statsPort > 0 && !rc.once {
		addr := net.JoinHostPort(rc.statsAddress, strconv.Itoa(rc.statsPort))
		if statsLn, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("stats listener: %w", err)
		}
		defer statsLn.Close()
	}

	ctx, cancel := context.WithCancel(parent)
	g := &group{cancel: cancel}
	defer func() {
		cancel()
		if werr := g.wait(); werr != nil {
			err = errors.Join(err, werr)
		}
	}()
	g.start(ctx, "source", src.Run)
	if !a.waitSynced(ctx, src) {
		return nil
	}

	master := socket.NewMaster(rc.masterSocket, socket.Options{})
	admin := socket.NewAdmin(rc.adminSocket, socket.Options{})
	// In sidecar mode an HAProxy that already runs was started from older files: the first sync
	// must reload it rather than trust that it runs what is written now.
	preexisting := false
	if rc.managed == "" && !rc.once {
		pctx, pcancel := context.WithTimeout(ctx, sidecarProbeTimeout)
		_, perr := socket.NewMaster(rc.masterSocket, socket.Options{RetryFor: -1, Timeout: sidecarProbeTimeout}).ShowProc(pctx)
		pcancel()
		preexisting = perr == nil
	}

	first, err := a.writeFirstConfig(src, opts, ro, rc)
	if err != nil {
		return err
	}
	if rc.once {
		return nil
	}

	var restarts <-chan struct{}
	if rc.managed != "" {
		sup := supervise.New(rc.managed, rc.dir, a.log)
		g.start(ctx, "haproxy supervisor", sup.Run)
		a.log.Info("starting HAProxy", "binary", rc.managed, "config", filepath.Join(rc.dir, "conf", "haproxy.cfg"))
		select {
		case <-sup.Started():
		case <-ctx.Done():
			return nil
		}
		restarts = sup.Started()
	} else {
		a.log.Info("waiting for HAProxy's sockets", "admin", rc.adminSocket, "master", rc.masterSocket)
		if err := supervise.WaitForSockets(ctx, rc.adminSocket, rc.masterSocket); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("waiting for HAProxy: %w", err)
		}
	}

	rl := reload.New(rc.checkBinary, rc.dir, master)
	rl.MinInterval = rc.reloadInterval
	// The spare pool grows with bursts of new Routes (and shrinks back at a reload after a quiet
	// time), so that a burst is served from spares with one refill reload rather than one per pool.
	upd := &haproxy.Instance{Dir: rc.dir, Render: ro, Admin: admin, Reloader: rl, Demand: plan.NewDemand(opts.SparePoolSize)}
	if preexisting {
		a.log.Info("HAProxy was running before this configuration was written: the first sync reloads it")
	} else {
		upd.SetApplied(first)
	}
	ctl := &controller.Controller{
		Source:        src,
		Options:       opts,
		Updater:       upd,
		Admin:         admin,
		Master:        master,
		Restarts:      restarts,
		Mode:          rc.mode,
		DriftInterval: rc.driftInterval,
		Dir:           rc.dir,
		Metrics:       controller.NewMetrics(),
		Log:           a.log,
	}
	if statusQueue != nil {
		// Status is written by its own worker, so that the sync loop never waits for the API server.
		g.start(ctx, "route status", func(ctx context.Context) error {
			statusQueue.Run(ctx)
			return nil
		})
		ctl.Status = statusQueue
	}
	if statsLn != nil {
		srv := &http.Server{Handler: controller.Handler(ctl), ReadHeaderTimeout: statsReadHeaderTimout}
		g.start(ctx, "stats listener", func(ctx context.Context) error { return serveUntil(ctx, srv, statsLn) })
		a.log.Info("serving /healthz, /healthz/ready and /metrics", "addr", statsLn.Addr().String())
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
	<-ctx.Done()
	if parent.Err() != nil {
		a.log.Info("stopping")
	}
	return nil
}

// newSource returns the folder or cluster source of rc, and the queue that writes Route status (nil
// when status is not written: folder mode, or --update-status=false); the caller runs both.
func (a *app) newSource(rc runConfig) (source.Source, *status.Queue, error) {
	if rc.manifests != "" {
		return source.NewFolder(rc.manifests, a.log), nil, nil
	}
	var cfg *rest.Config
	var err error
	if rc.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", rc.kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cluster configuration (use --kubeconfig, or --manifests for a folder): %w", err)
	}
	cfg.UserAgent = "haroute/" + version
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	routes, err := routeclientset.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("route client: %w", err)
	}
	// client-go logs through klog; send it to the same logger.
	klog.SetSlogLogger(a.log)
	opts := rc.settings.opts
	src := source.NewCluster(kube, routes, source.ClusterOptions{
		RouteLabels:     opts.RouteLabels,
		NamespaceLabels: opts.NamespaceLabels,
		Log:             a.log,
	})
	if !rc.updateStatus {
		return src, nil, nil
	}
	// Status writes get a client of their own: the informers' keeps client-go's default limit (5 QPS),
	// which held a thousand status writes back for minutes. The queue paces the writes; its client
	// allows twice that rate, so that client-go's limiter is never what holds status back and the
	// re-reads after conflicts fit too.
	pace := status.QueueOptions{QPS: status.DefaultQPS, Burst: status.DefaultBurst}
	statusCfg := rest.CopyConfig(cfg)
	statusCfg.QPS = 2 * pace.QPS
	statusCfg.Burst = 2 * pace.Burst
	statusRoutes, err := routeclientset.NewForConfig(statusCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("route status client: %w", err)
	}
	w := status.NewWriter(statusRoutes, opts.RouterName, rc.canonicalHostname, a.log)
	return src, status.NewQueue(w, pace), nil
}

// waitSynced waits until src has its first complete snapshot (true), or ctx ends (false).
func (a *app) waitSynced(ctx context.Context, src source.Source) bool {
	t := time.NewTicker(syncPollInterval)
	defer t.Stop()
	logAt := time.Now().Add(syncWaitLogInterval)
	for !src.HasSynced() {
		select {
		case <-ctx.Done():
			return false
		case now := <-t.C:
			if now.After(logAt) {
				a.log.Info("waiting for the first complete snapshot of the source")
				logAt = now.Add(syncWaitLogInterval)
			}
		}
	}
	return true
}

// writeFirstConfig translates the first snapshot and writes the files of its initial plan, from
// which HAProxy starts (or which --once leaves for it). It returns the written state.
func (a *app) writeFirstConfig(src source.Source, opts mapping.Options, ro render.Options, rc runConfig) (*model.Config, error) {
	in, fileErrs := src.Snapshot()
	for _, fe := range fileErrs {
		a.log.Warn("manifest file not (fully) used", "file", fe.Path, "error", fe.Err)
	}
	desired, problems := mapping.Translate(in, opts)
	next := plan.Compute(nil, desired).Next
	files, err := render.Render(next, ro)
	if err != nil {
		return nil, fmt.Errorf("render the first configuration: %w", err)
	}
	if err := reload.WriteFiles(rc.dir, files); err != nil {
		return nil, fmt.Errorf("write the first configuration: %w", err)
	}
	rejected := map[string]bool{}
	for _, p := range problems {
		if !p.Warning {
			rejected[p.Namespace+"/"+p.Name] = true
		}
	}
	a.log.Info("wrote the first configuration", "config", filepath.Join(rc.dir, "conf", "haproxy.cfg"),
		"routes", len(next.Routes), "rejected", len(rejected), "backends", len(next.Backends))
	if rc.once {
		a.reportProblems(problems)
	}
	return next, nil
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
