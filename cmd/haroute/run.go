package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/runtime/haproxy"
)

// Defaults of `haroute run`.
const (
	defaultHAProxyDir     = "/var/lib/haproxy"
	defaultHAProxyBinary  = haproxy.DefaultBinary
	defaultStatsPort      = 1936
	defaultDriftInterval  = 30 * time.Second
	modeRuntime           = "runtime"
	modeReload            = "reload"
	syncPollInterval      = 20 * time.Millisecond
	syncWaitLogInterval   = 10 * time.Second
	statsShutdownTimeout  = 5 * time.Second
	statsReadHeaderTimout = 10 * time.Second
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
	flagMetricsAuth    = "metrics-auth"
	flagOnce           = "once"
	flagDriftInterval  = "drift-interval"
	flagCheckBinary    = "check-binary"
)

// checkNone is the --check-binary value that turns `haproxy -c` off: the master's reload validates.
const checkNone = "none"

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
	checkBinary    string
	metricsAuth    string
}

// runConfig is a resolved `haroute run`: what the router does, independent of where the values came
// from (flags and environment for run, fixed choices for demo).
type runConfig struct {
	settings renderSettings
	// runSettings are what settings come from, served on the state socket.
	runSettings *stateapi.RunSettings
	// manifests is the folder of the folder source; empty for the cluster source.
	manifests string
	// kubeconfig is the kubeconfig file of the cluster source; empty: in-cluster.
	kubeconfig string
	// dir is the absolute HAProxy directory.
	dir                       string
	adminSocket, masterSocket string
	// managed is the HAProxy binary run supervises; empty: sidecar (HAProxy is started by others).
	managed string
	// checkBinary runs `haproxy -c` before reloads; empty: none here, the master's reload validates
	// (and a refused configuration is rolled back).
	checkBinary string
	// statsPort serves /healthz, /healthz/ready and /metrics on statsAddress; 0 disables it.
	statsPort    int
	statsAddress string
	// metricsAuth is who may read /metrics without the stats credentials (metricsAuthKube or
	// metricsAuthNone).
	metricsAuth string
	// podIPs are the pod's own addresses (HAROUTE_POD_IPS, from the downward API): without a
	// statsAddress, the stats listener binds them and loopback rather than every address.
	podIPs         []netip.Addr
	reloadInterval time.Duration
	mode           string
	updateStatus   bool
	once           bool
	driftInterval  time.Duration
	// canonicalHostname goes into Route status (ROUTER_CANONICAL_HOSTNAME).
	canonicalHostname string
	// statsUser and statsPassword (STATS_USERNAME, STATS_PASSWORD, or the files STATS_USERNAME_FILE
	// and STATS_PASSWORD_FILE name) guard the Data Plane API view on the stats port; without them it
	// is not served.
	statsUser, statsPassword string
	// metricsTLS, when set (ROUTER_METRICS_TLS_CERT_FILE), makes the stats port serve HTTPS beside
	// plain HTTP.
	metricsTLS *metricsTLS
	// shutdownDelay (ROUTER_GRACEFUL_SHUTDOWN_DELAY) is how long, after SIGTERM, the router keeps
	// serving (and reports not ready) before it stops.
	shutdownDelay time.Duration
	// draining is set while the shutdown delay runs (nil: never): /healthz/ready answers 503.
	draining *atomic.Bool
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
			// The settings' inputs are recorded for the state socket: the inspection commands
			// translate with them.
			rec := newEnvRecorder(a.getenv)
			recording := *a
			recording.getenv = rec.getenv
			rc, err := recording.runSettings(f, cmd.Flags().Changed)
			if err != nil {
				return err
			}
			rc.runSettings = runSettingsOf(rec, cmd.Flags())
			rc.draining = &atomic.Bool{}
			ctx, stop := shutdownContext(cmd.Context(), rc.shutdownDelay, rc.draining, a.log)
			defer stop()
			return a.runRouter(ctx, rc)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, flagKubeconfig, "", "kubeconfig file of the cluster to watch [KUBECONFIG]; without it and --manifests: in-cluster")
	fl.StringVar(&f.manifests, flagManifests, "", "watch this folder of manifest files instead of a cluster")
	fl.StringVar(&f.haproxyDir, flagHAProxyDir, defaultHAProxyDir, "HAProxy directory (conf/, router/, run/)")
	fl.StringVar(&f.adminSocket, flagAdminSocket, "", "HAProxy admin socket (default <haproxy-dir>/"+layout.AdminSocket+")")
	fl.StringVar(&f.masterSocket, flagMasterSocket, "", "HAProxy master socket (default <haproxy-dir>/"+layout.MasterSocket+")")
	fl.StringVar(&f.managedHAProxy, flagManaged, "", "start and supervise HAProxy from this binary")
	fl.Lookup(flagManaged).NoOptDefVal = defaultHAProxyBinary
	fl.IntVar(&f.statsPort, flagStatsPort, defaultStatsPort, "port of /healthz, /healthz/ready and /metrics; 0 disables [STATS_PORT]")
	fl.DurationVar(&f.reloadInterval, flagReloadInterval, haproxy.DefaultReloadInterval, "least time between two reloads [RELOAD_INTERVAL]")
	fl.StringVar(&f.mode, flagMode, modeRuntime, "runtime: runtime API updates, reload only when needed; reload: reload for every change (the stock router's way)")
	fl.BoolVar(&f.updateStatus, flagUpdateStatus, true, "write Route status.ingress (cluster only)")
	fl.StringVar(&f.metricsAuth, flagMetricsAuth, metricsAuthKube, "who may read /metrics without STATS_USERNAME/STATS_PASSWORD: "+
		metricsAuthKube+" (a bearer token the API server allows to get routers/metrics; cluster only) or "+metricsAuthNone+" (anyone) [HAROUTE_METRICS_AUTH]")
	fl.BoolVar(&f.once, flagOnce, false, "write the first configuration and exit (an init step for sidecar mode)")
	fl.DurationVar(&f.driftInterval, flagDriftInterval, defaultDriftInterval, "how often the live HAProxy state is compared with the applied one")
	fl.StringVar(&f.checkBinary, flagCheckBinary, "", "HAProxy binary that checks each configuration (haproxy -c) before a reload; "+
		checkNone+": the master's reload checks it and a refused one is rolled back (default: the --managed-haproxy binary, else "+
		defaultHAProxyBinary+" when it exists, else "+checkNone+")")
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
		metricsAuth:       f.metricsAuth,
		once:              f.once,
		driftInterval:     f.driftInterval,
		statsPort:         f.statsPort,
		reloadInterval:    f.reloadInterval,
		statsAddress:      s.opts.BindAddress,
		podIPs:            podAddresses(a.getenv("HAROUTE_POD_IPS")),
		canonicalHostname: strings.TrimSpace(a.getenv("ROUTER_CANONICAL_HOSTNAME")),
		statsUser:         a.getenv("STATS_USERNAME"),
		statsPassword:     a.getenv("STATS_PASSWORD"),
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
		// Checked before anything is written or started: a folder that is not there is a typo.
		if st, err := os.Stat(f.manifests); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", flagManifests, err))
		} else if !st.IsDir() {
			errs = append(errs, fmt.Errorf("--%s %s: not a directory", flagManifests, f.manifests))
		}
	case s.opts.AllowLoopbackEndpoints:
		errs = append(errs, errors.New("--allow-loopback-endpoints is for folder mode (--manifests) only: in a cluster a hand-made EndpointSlice could publish the router's own sockets"))
	}
	if v := strings.TrimSpace(a.getenv("ROUTER_UPDATE_STATUS")); v != "" && !changed(flagUpdateStatus) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("ROUTER_UPDATE_STATUS=%q: want true or false", v))
		}
		rc.updateStatus = b
	}
	// haroute always binds the public ports after the first complete sync (the first configuration
	// is written before HAProxy starts): OpenShift's ROUTER_BIND_PORTS_AFTER_SYNC=true. Its default,
	// false, binds them before and answers 503 meanwhile; haroute does not do that.
	if v := strings.TrimSpace(a.getenv("ROUTER_BIND_PORTS_AFTER_SYNC")); v != "" {
		if b, err := strconv.ParseBool(v); err != nil {
			errs = append(errs, fmt.Errorf("ROUTER_BIND_PORTS_AFTER_SYNC=%q: want true or false", v))
		} else if !b {
			a.log.Info("ROUTER_BIND_PORTS_AFTER_SYNC=false: haroute binds the public ports after the first complete sync all the same")
		}
	}
	if v := strings.TrimSpace(a.getenv("ROUTER_GRACEFUL_SHUTDOWN_DELAY")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("ROUTER_GRACEFUL_SHUTDOWN_DELAY=%q: want a duration such as 45s", v))
		}
		rc.shutdownDelay = d
	}
	if !changed(flagStatsPort) {
		if v := strings.TrimSpace(a.getenv("STATS_PORT")); v != "" {
			if rc.statsPort, err = strconv.Atoi(v); err != nil {
				errs = append(errs, fmt.Errorf("STATS_PORT=%q: want a port number", v))
			}
		}
	}
	// OpenShift's ROUTER_LISTEN_ADDR (host:port) names the stats listener's address and port; the
	// --stats-port flag, when set, keeps its port.
	if v := strings.TrimSpace(a.getenv("ROUTER_LISTEN_ADDR")); v != "" {
		host, port, err := net.SplitHostPort(v)
		n, perr := strconv.Atoi(port)
		switch {
		case err != nil || perr != nil:
			errs = append(errs, fmt.Errorf("ROUTER_LISTEN_ADDR=%q: want host:port, e.g. 0.0.0.0:1936", v))
		case host != "" && net.ParseIP(host) == nil:
			errs = append(errs, fmt.Errorf("ROUTER_LISTEN_ADDR=%q: the host must be an IP address", v))
		default:
			rc.statsAddress = host
			if !changed(flagStatsPort) {
				rc.statsPort = n
			}
		}
	}
	if v := strings.TrimSpace(a.getenv("HAROUTE_METRICS_AUTH")); v != "" && !changed(flagMetricsAuth) {
		rc.metricsAuth = v
	}
	rc.metricsAuth = cmpOr(rc.metricsAuth, metricsAuthKube)
	if rc.metricsAuth != metricsAuthKube && rc.metricsAuth != metricsAuthNone {
		errs = append(errs, fmt.Errorf("--%s=%q: want %s or %s", flagMetricsAuth, rc.metricsAuth, metricsAuthKube, metricsAuthNone))
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
	// OpenShift's metrics listener: the metrics type, HTTPS on the stats port, the stats credentials
	// in files (the files are read only when the stats port is served).
	serveStats := rc.statsPort != 0 && !rc.once
	if err := checkMetricsType(a.getenv); err != nil {
		errs = append(errs, err)
	}
	if m, err := a.metricsTLSFromEnv(serveStats); err != nil {
		errs = append(errs, err)
	} else {
		rc.metricsTLS = m
	}
	if u, p, err := a.statsCredentials(serveStats); err != nil {
		errs = append(errs, err)
	} else {
		rc.statsUser, rc.statsPassword = u, p
	}
	if (rc.statsUser == "") != (rc.statsPassword == "") {
		errs = append(errs, errors.New("STATS_USERNAME and STATS_PASSWORD: set both (the Data Plane API view on the stats port needs them) or neither"))
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
	rc.adminSocket = cmpOr(f.adminSocket, layout.For(rc.dir).AdminSocket())
	// OpenShift's ROUTER_HAPROXY_ADMIN_UNIX_SOCKET names the master CLI of the HAProxy sidecar.
	if v := strings.TrimSpace(a.getenv("ROUTER_HAPROXY_ADMIN_UNIX_SOCKET")); v != "" && f.masterSocket == "" {
		if !filepath.IsAbs(v) {
			errs = append(errs, fmt.Errorf("ROUTER_HAPROXY_ADMIN_UNIX_SOCKET=%q: want an absolute path", v))
		}
		f.masterSocket = v
	}
	rc.masterSocket = cmpOr(f.masterSocket, layout.For(rc.dir).MasterSocket())
	if want := layout.For(rc.dir).MasterSocket(); rc.managed != "" && filepath.Clean(rc.masterSocket) != want {
		errs = append(errs, fmt.Errorf("--%s: a managed HAProxy's master socket is %s", flagMasterSocket, want))
	}
	var cerr error
	if rc.checkBinary, cerr = resolveCheckBinary(f.checkBinary, changed(flagCheckBinary), rc.managed); cerr != nil {
		errs = append(errs, cerr)
	}
	if err := errors.Join(errs...); err != nil {
		return runConfig{}, fmt.Errorf("settings: %w", err)
	}
	return rc, nil
}

// resolveCheckBinary returns the binary that runs `haproxy -c` before reloads, or "" when the
// master's reload is the check: the flag's value when set ("none": ""), else the managed binary, else
// Debian's /usr/sbin/haproxy when this machine has it. A sidecar's container has no HAProxy of its
// own, and that is the normal case; a binary named on purpose must be there.
func resolveCheckBinary(flag string, set bool, managed string) (string, error) {
	switch {
	case set && flag == checkNone:
		return "", nil
	case set:
		if err := executable(flag); err != nil {
			return "", fmt.Errorf("--%s: %w (%s: let the master's reload check)", flagCheckBinary, err, checkNone)
		}
		return flag, nil
	case managed != "":
		return managed, nil
	case executable(defaultHAProxyBinary) == nil:
		return defaultHAProxyBinary, nil
	}
	return "", nil
}

// executable reports why path cannot be run as a program, or nil.
func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s: not an executable file", path)
	}
	return nil
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
