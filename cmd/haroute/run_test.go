package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/render"
)

// TestRunRefusesBadSettings checks the settings run refuses before it starts anything.
func TestRunRefusesBadSettings(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"loopback in a cluster", nil, []string{"--kubeconfig", "/nonexistent", "--allow-loopback-endpoints"}, "folder mode"},
		{"loopback in-cluster", nil, []string{"--allow-loopback-endpoints"}, "folder mode"},
		{"folder and cluster", nil, []string{"--manifests", dir, "--kubeconfig", "/nonexistent"}, "exclude each other"},
		{"bad mode", nil, []string{"--manifests", dir, "--mode", "fast"}, "--mode"},
		{"once and managed", nil, []string{"--manifests", dir, "--once", "--managed-haproxy"}, "--once"},
		{"managed master socket", nil, []string{"--manifests", dir, "--haproxy-dir", dir, "--managed-haproxy", "--master-socket", "/tmp/other.sock"}, "master socket"},
		{"bad STATS_PORT", map[string]string{"STATS_PORT": "x"}, []string{"--manifests", dir}, "STATS_PORT"},
		{"bad RELOAD_INTERVAL", map[string]string{"RELOAD_INTERVAL": "soon"}, []string{"--manifests", dir}, "RELOAD_INTERVAL"},
		{"bad port", nil, []string{"--manifests", dir, "--http-port", "0"}, "--http-port"},
		{"stats user without password", map[string]string{"STATS_USERNAME": "admin"}, []string{"--manifests", dir}, "STATS_PASSWORD"},
		{"no cluster", nil, []string{"--kubeconfig", filepath.Join(dir, "missing"), "--haproxy-dir", dir}, "cluster configuration"},
		{"missing check binary", nil, []string{"--manifests", dir, "--check-binary", filepath.Join(dir, "haproxy")}, "--check-binary"},
		{"check binary not executable", nil, []string{"--manifests", dir, "--check-binary", dir}, "not an executable"},
		{"no folder", nil, []string{"--manifests", filepath.Join(dir, "missing"), "--haproxy-dir", filepath.Join(dir, "untouched")}, "no such file"},
		{"service name without namespace", map[string]string{"ROUTER_SERVICE_NAME": "default"}, []string{"--manifests", dir}, "ROUTER_SERVICE_NAMESPACE is required"},
		{"two router names", map[string]string{"ROUTER_SERVICE_NAME": "a", "ROUTER_SERVICE_NAMESPACE": "x", "ROUTER_NAME": "b"}, []string{"--manifests", dir}, "set one"},
		{"bad ROUTER_UPDATE_STATUS", map[string]string{"ROUTER_UPDATE_STATUS": "maybe"}, []string{"--manifests", dir}, "ROUTER_UPDATE_STATUS"},
		{"bad shutdown delay", map[string]string{"ROUTER_GRACEFUL_SHUTDOWN_DELAY": "45"}, []string{"--manifests", dir}, "ROUTER_GRACEFUL_SHUTDOWN_DELAY"},
		{"relative admin socket", map[string]string{"ROUTER_HAPROXY_ADMIN_UNIX_SOCKET": "run/admin.sock"}, []string{"--manifests", dir}, "ROUTER_HAPROXY_ADMIN_UNIX_SOCKET"},
		{"mutual TLS without CA", map[string]string{"ROUTER_MUTUAL_TLS_AUTH": "required"}, []string{"--manifests", dir}, "ROUTER_MUTUAL_TLS_AUTH_CA"},
		{"bad ROUTE_FIELDS", map[string]string{"ROUTE_FIELDS": "spec.tls=x"}, []string{"--manifests", dir}, "ROUTE_FIELDS"},
		{"missing destination CA", map[string]string{"DEFAULT_DESTINATION_CA_PATH": filepath.Join(dir, "service-ca.crt")}, []string{"--manifests", dir, "--haproxy-dir", filepath.Join(dir, "untouched")}, "DEFAULT_DESTINATION_CA_PATH"},
		{"missing error page", map[string]string{"ROUTER_ERRORFILE_503": filepath.Join(dir, "503.http")}, []string{"--manifests", dir, "--haproxy-dir", filepath.Join(dir, "untouched")}, "ROUTER_ERRORFILE_503"},
		{"missing default certificate", map[string]string{"DEFAULT_CERTIFICATE_DIR": filepath.Join(dir, "secret")}, []string{"--manifests", dir, "--haproxy-dir", filepath.Join(dir, "untouched")}, "DEFAULT_CERTIFICATE_DIR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runCLI(t, c.env, append([]string{"run"}, c.args...)...)
			if res.err == nil || !strings.Contains(res.err.Error(), c.want) {
				t.Fatalf("err = %v, want one mentioning %q", res.err, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "untouched")); err == nil {
				t.Fatal("a refused run wrote its HAProxy directory")
			}
		})
	}
}

// TestRunOpenShiftIdentity: the variables the ingress operator always sets for the router's identity
// and its sidecar are read with OpenShift's meaning.
func TestRunOpenShiftIdentity(t *testing.T) {
	env := map[string]string{
		"ROUTER_SERVICE_NAME": "default", "ROUTER_SERVICE_NAMESPACE": "openshift-ingress",
		"ROUTER_HAPROXY_ADMIN_UNIX_SOCKET": "/var/lib/haproxy/run/admin.sock", "ROUTER_UPDATE_STATUS": "false",
		"ROUTER_GRACEFUL_SHUTDOWN_DELAY": "45s", "ROUTER_BIND_PORTS_AFTER_SYNC": "true",
	}
	a := &app{getenv: func(k string) string { return env[k] }, log: slog.New(slog.DiscardHandler)}
	f := runFlags{statsPort: defaultStatsPort, reloadInterval: 5 * time.Second, mode: modeRuntime, driftInterval: time.Second, updateStatus: true}
	f.manifests, f.haproxyDir, f.httpPort, f.httpsPort = t.TempDir(), "h", 80, 443
	rc, err := a.runSettings(f, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if rc.settings.opts.RouterName != "default" || rc.settings.opts.RouterNamespace != "openshift-ingress" ||
		rc.masterSocket != "/var/lib/haproxy/run/admin.sock" || rc.updateStatus || rc.shutdownDelay != 45*time.Second {
		t.Errorf("settings: name %q/%q, master socket %q, update status %v, shutdown delay %v",
			rc.settings.opts.RouterNamespace, rc.settings.opts.RouterName, rc.masterSocket, rc.updateStatus, rc.shutdownDelay)
	}
}

// TestShutdownDelay: SIGTERM with a delay reports draining at once and ends the context after the
// delay; a second signal ends it at once.
func TestShutdownDelay(t *testing.T) {
	var draining atomic.Bool
	ctx, cancel := shutdownContext(context.Background(), time.Hour, &draining, slog.New(slog.DiscardHandler))
	defer cancel()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := testkit.Eventually(5*time.Second, 10*time.Millisecond, func() error {
		if !draining.Load() {
			return errors.New("not draining")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the context ended before the delay")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a second signal did not end the context")
	}
}

// TestRunSettingsFromEnv checks that STATS_PORT and RELOAD_INTERVAL are read, and that flags win.
func TestRunSettingsFromEnv(t *testing.T) {
	a := &app{getenv: func(k string) string {
		return map[string]string{"STATS_PORT": "0", "RELOAD_INTERVAL": "2", "ROUTER_CANONICAL_HOSTNAME": "router.example.com"}[k]
	}}
	f := runFlags{statsPort: defaultStatsPort, reloadInterval: 5 * time.Second, mode: modeRuntime, driftInterval: time.Second, updateStatus: true}
	f.manifests, f.haproxyDir, f.httpPort, f.httpsPort = t.TempDir(), "h", 80, 443
	none := func(string) bool { return false }
	rc, err := a.runSettings(f, none)
	if err != nil {
		t.Fatal(err)
	}
	if rc.statsPort != 0 || rc.reloadInterval != 2*time.Second || rc.canonicalHostname != "router.example.com" {
		t.Errorf("from env: stats port %d, reload interval %v, canonical %q", rc.statsPort, rc.reloadInterval, rc.canonicalHostname)
	}
	if !filepath.IsAbs(rc.dir) || rc.adminSocket != filepath.Join(rc.dir, "run", "haproxy.sock") || rc.masterSocket != filepath.Join(rc.dir, "run", "master.sock") {
		t.Errorf("paths: dir %q admin %q master %q", rc.dir, rc.adminSocket, rc.masterSocket)
	}
	f.statsPort, f.reloadInterval = 9000, 100*time.Millisecond
	changed := func(n string) bool { return n == flagStatsPort || n == flagReloadInterval }
	if rc, err = a.runSettings(f, changed); err != nil {
		t.Fatal(err)
	}
	if rc.statsPort != 9000 || rc.reloadInterval != 100*time.Millisecond {
		t.Errorf("flags: stats port %d, reload interval %v", rc.statsPort, rc.reloadInterval)
	}

	// OpenShift's ROUTER_LISTEN_ADDR names the listener; a --stats-port flag keeps its port.
	a.getenv = func(k string) string {
		return map[string]string{"ROUTER_LISTEN_ADDR": "10.1.2.3:1937", "STATS_PORT": "1936"}[k]
	}
	if rc, err = a.runSettings(f, none); err != nil || rc.statsAddress != "10.1.2.3" || rc.statsPort != 1937 {
		t.Errorf("ROUTER_LISTEN_ADDR: %q port %d, %v", rc.statsAddress, rc.statsPort, err)
	}
	if rc, err = a.runSettings(f, changed); err != nil || rc.statsAddress != "10.1.2.3" || rc.statsPort != 9000 {
		t.Errorf("ROUTER_LISTEN_ADDR and --stats-port: %q port %d, %v", rc.statsAddress, rc.statsPort, err)
	}
	for _, bad := range []string{"1937", "router:1937", "10.1.2.3:port"} {
		a.getenv = func(k string) string { return map[string]string{"ROUTER_LISTEN_ADDR": bad}[k] }
		if _, err := a.runSettings(f, none); err == nil || !strings.Contains(err.Error(), "ROUTER_LISTEN_ADDR") {
			t.Errorf("ROUTER_LISTEN_ADDR=%q: %v, want an error naming it", bad, err)
		}
	}
}

// TestRunOnceWritesFirstConfig runs `run --once` on the demo manifests: it writes a configuration
// HAProxy accepts and exits without starting anything.
func TestRunOnceWritesFirstConfig(t *testing.T) {
	manifests, out := t.TempDir(), t.TempDir()
	if err := writeDemoManifests(manifests, 9999, time.Now()); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ROUTER_MAX_CONNECTIONS": "auto"}
	res := runCLI(t, env, "run", "--once", "--manifests", manifests, "--haproxy-dir", out,
		"--allow-loopback-endpoints", "--http-port", "18080", "--https-port", "18443")
	if res.err != nil {
		t.Fatalf("run --once: %v\n%s", res.err, res.stderr)
	}
	cfg := filepath.Join(out, "conf", "haproxy.cfg")
	if _, err := os.Stat(cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.stderr, "routes=5 rejected=0") {
		t.Errorf("log does not report 5 admitted Routes:\n%s", res.stderr)
	}
	if out, err := exec.Command(testkit.HAProxyBinary(), append([]string{"-c"}, render.ConfigArgs(out)...)...).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(out, "run", "master.sock")); err == nil {
		t.Errorf("--once left a master socket: something was started")
	}
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "5s": 5 * time.Second, "250ms": 250 * time.Millisecond, "0": 0} {
		if got, err := parseInterval(in); err != nil || got != want {
			t.Errorf("parseInterval(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseInterval("soon"); err == nil {
		t.Errorf("parseInterval(soon) gave no error")
	}
}

// TestResolveCheckBinary: who runs `haproxy -c` before a reload.
func TestResolveCheckBinary(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "haproxy")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, debianErr := os.Stat(defaultHAProxyBinary)
	debian := map[bool]string{true: defaultHAProxyBinary, false: ""}[debianErr == nil]
	cases := []struct {
		name, flag string
		set        bool
		managed    string
		want       string
	}{
		{"sidecar, none asked", checkNone, true, "", ""},
		{"sidecar, a binary asked", exe, true, "", exe},
		{"managed", "", false, exe, exe},
		{"managed, none asked", checkNone, true, exe, ""},
		{"sidecar default", "", false, "", debian},
	}
	for _, c := range cases {
		got, err := resolveCheckBinary(c.flag, c.set, c.managed)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
