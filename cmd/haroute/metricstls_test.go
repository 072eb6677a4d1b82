package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

func TestCheckMetricsType(t *testing.T) {
	for v, ok := range map[string]bool{"": true, "haproxy": true, " haproxy ": true, "prometheus": false, "HAProxy": false} {
		err := checkMetricsType(func(string) string { return v })
		if ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), envMetricsType)) {
			t.Errorf("%s=%q: %v", envMetricsType, v, err)
		}
	}
}

func TestMetricsTLSSettings(t *testing.T) {
	// The operator's value for the Intermediate profile: IANA names, TLS 1.3 suites included.
	intermediate := "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:" +
		"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:" +
		"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
	cases := []struct {
		name string
		env  map[string]string
		want metricsTLSSettings
		// errs are the variables the error must name, in order; none: no error.
		errs []string
	}{
		{name: "nothing", env: nil},
		{name: "pair", env: map[string]string{envMetricsCertFile: "/c", envMetricsKeyFile: "/k"}, want: metricsTLSSettings{certFile: "/c", keyFile: "/k"}},
		{name: "cert alone", env: map[string]string{envMetricsCertFile: "/c"}, errs: []string{envMetricsCertFile + " and " + envMetricsKeyFile}},
		{name: "key alone", env: map[string]string{envMetricsKeyFile: "/k"}, errs: []string{envMetricsKeyFile}},
		{name: "intermediate ciphers", env: map[string]string{envMetricsCiphers: intermediate}, want: metricsTLSSettings{ciphers: []uint16{
			tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		}}},
		{name: "legacy and old ciphers", env: map[string]string{envMetricsCiphers: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305:TLS_RSA_WITH_AES_128_CBC_SHA:"},
			want: metricsTLSSettings{ciphers: []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA}}},
		{name: "OpenSSL cipher name", env: map[string]string{envMetricsCiphers: "TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256"}, errs: []string{envMetricsCiphers + `: unknown cipher suite "ECDHE-RSA-AES128-GCM-SHA256"`}},
		{name: "no cipher", env: map[string]string{envMetricsCiphers: "::"}, errs: []string{envMetricsCiphers}},
		{name: "min version", env: map[string]string{envMetricsMinVersion: "VersionTLS13"}, want: metricsTLSSettings{minVersion: tls.VersionTLS13}},
		{name: "min version 1.0", env: map[string]string{envMetricsMinVersion: "VersionTLS10"}, want: metricsTLSSettings{minVersion: tls.VersionTLS10}},
		{name: "HAProxy's version name", env: map[string]string{envMetricsMinVersion: "TLSv1.2"}, errs: []string{envMetricsMinVersion + `="TLSv1.2"`}},
		{name: "curves", env: map[string]string{envMetricsCurves: "X25519MLKEM768:X25519, secp256r1,secp384r1:secp521r1"},
			want: metricsTLSSettings{curves: []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}}},
		{name: "Go's curve name", env: map[string]string{envMetricsCurves: "X25519:P-256"}, errs: []string{envMetricsCurves + `: unknown group "P-256"`}},
		{name: "no curve", env: map[string]string{envMetricsCurves: " , "}, errs: []string{envMetricsCurves}},
		{name: "every error", env: map[string]string{envMetricsKeyFile: "/k", envMetricsCiphers: "RC4", envMetricsMinVersion: "1.3", envMetricsCurves: "P-384"},
			errs: []string{envMetricsKeyFile, envMetricsCiphers, envMetricsMinVersion, envMetricsCurves}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := metricsTLSSettingsFromEnv(func(k string) string { return c.env[k] })
			if len(c.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got.certFile != c.want.certFile || got.keyFile != c.want.keyFile || got.minVersion != c.want.minVersion ||
					!slices.Equal(got.ciphers, c.want.ciphers) || !slices.Equal(got.curves, c.want.curves) {
					t.Errorf("got %+v, want %+v", got, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one naming %q", c.errs)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(c.errs) {
				t.Fatalf("err = %v, want %d lines", err, len(c.errs))
			}
			for i, want := range c.errs {
				if !strings.Contains(lines[i], want) {
					t.Errorf("error %q does not name %q", lines[i], want)
				}
			}
		})
	}
}

// TestMetricsTLSFromEnv checks the start-up side: a pair that does not load names both files, the
// certificate is not read when the stats port is not served, and settings without a certificate are
// ignored with a warning.
func TestMetricsTLSFromEnv(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, "metrics-ca")
	certA, keyA := ca.Issue(t, "127.0.0.1")
	_, keyB := ca.Issue(t, "127.0.0.1")
	certFile, keyFile, otherKey := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "other.key")
	writeAtomic(t, certFile, certA)
	writeAtomic(t, keyFile, keyA)
	writeAtomic(t, otherKey, keyB)
	newApp := func(env map[string]string) (*app, *testkit.LogBuffer) {
		logs := &testkit.LogBuffer{}
		return &app{getenv: func(k string) string { return env[k] }, log: slog.New(slog.NewTextHandler(logs, nil))}, logs
	}

	a, _ := newApp(map[string]string{envMetricsCertFile: certFile, envMetricsKeyFile: keyFile})
	if m, err := a.metricsTLSFromEnv(true); err != nil || m == nil || m.certs.certificate() == nil {
		t.Fatalf("good pair: %v, %v", m, err)
	}
	for name, key := range map[string]string{"missing key": filepath.Join(dir, "missing.key"), "mismatched key": otherKey} {
		a, _ := newApp(map[string]string{envMetricsCertFile: certFile, envMetricsKeyFile: key})
		_, err := a.metricsTLSFromEnv(true)
		if err == nil || !strings.Contains(err.Error(), envMetricsCertFile+"="+certFile) || !strings.Contains(err.Error(), envMetricsKeyFile+"="+key) {
			t.Errorf("%s: err = %v, want one naming both files", name, err)
		}
		if m, err := a.metricsTLSFromEnv(false); m != nil || err != nil {
			t.Errorf("%s, no stats port: %v, %v; want neither", name, m, err)
		}
	}
	a, logs := newApp(map[string]string{envMetricsMinVersion: "VersionTLS13", envMetricsCurves: "X25519"})
	if m, err := a.metricsTLSFromEnv(true); m != nil || err != nil {
		t.Errorf("settings without a certificate: %v, %v; want neither", m, err)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, envMetricsMinVersion+","+envMetricsCurves) {
		t.Errorf("no warning naming the ignored settings: %s", l)
	}
}

// TestMetricsCertRecheck: a certificate rewritten in place so that its stat does not change is
// picked up at the next recheck.
func TestMetricsCertRecheck(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, "metrics-ca")
	certA, keyA := ca.Issue(t, "a")
	certB, keyB := ca.Issue(t, "b")
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeAtomic(t, certFile, certA)
	writeAtomic(t, keyFile, keyA)
	r, err := newCertReloader(certFile, keyFile, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r.now = func() time.Time { return now }
	writeAtomic(t, certFile, certB)
	writeAtomic(t, keyFile, keyB)
	r.seen = r.stat() // as if the rewrite had left the files' stat as it was
	if got := leafName(t, r.certificate()); got != "a" {
		t.Fatalf("before the recheck: %q", got)
	}
	now = now.Add(certRecheck)
	if got := leafName(t, r.certificate()); got != "b" {
		t.Fatalf("after the recheck: %q, want b", got)
	}
}

// TestMetricsTLSListener runs the real stats listener with OpenShift's settings: HTTPS and plain HTTP
// on one port, the probes on both, /metrics behind the credentials of the operator's Secret files.
func TestMetricsTLSListener(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, "metrics-ca")
	certPEM, keyPEM := ca.Issue(t, "127.0.0.1")
	writeAtomic(t, filepath.Join(dir, "tls.crt"), certPEM)
	writeAtomic(t, filepath.Join(dir, "tls.key"), keyPEM)
	writeAtomic(t, filepath.Join(dir, "statsUsername"), []byte("admin\n"))
	writeAtomic(t, filepath.Join(dir, "statsPassword"), []byte("s3cret"))
	addr, _ := serveStatsForTest(t, map[string]string{
		envMetricsType:       "haproxy",
		envMetricsCertFile:   filepath.Join(dir, "tls.crt"),
		envMetricsKeyFile:    filepath.Join(dir, "tls.key"),
		envStatsUserFile:     filepath.Join(dir, "statsUsername"),
		envStatsPasswordFile: filepath.Join(dir, "statsPassword"),
		"STATS_USERNAME":     "ignored",
		"STATS_PASSWORD":     "ignored",
	})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, DisableKeepAlives: true}}
	get := func(scheme, path, user, password string) (int, bool) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, scheme+"://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", req.URL, err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.TLS != nil
	}
	for _, c := range []struct {
		scheme, path, user, password string
		want                         int
	}{
		{"https", "/healthz", "", "", http.StatusOK},
		{"http", "/healthz", "", "", http.StatusOK},
		{"https", "/healthz/ready", "", "", http.StatusServiceUnavailable}, // starting: answered, not ready
		{"http", "/healthz/ready", "", "", http.StatusServiceUnavailable},
		{"https", "/metrics", "admin", "s3cret", http.StatusOK},
		{"https", "/metrics", "admin", "s3cret\n", http.StatusUnauthorized},
		{"https", "/metrics", "ignored", "ignored", http.StatusUnauthorized},
		{"http", "/metrics", "admin", "s3cret", http.StatusOK},
		{"http", "/metrics", "admin", "wrong", http.StatusUnauthorized},
	} {
		code, overTLS := get(c.scheme, c.path, c.user, c.password)
		if code != c.want || overTLS != (c.scheme == "https") {
			t.Errorf("%s %s as %q: %d (TLS %v), want %d", c.scheme, c.path, c.user, code, overTLS, c.want)
		}
	}
}

// TestMetricsTLSPolicy: the minimum version, the cipher suites (TLS 1.2) and the groups are enforced.
func TestMetricsTLSPolicy(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, "metrics-ca")
	certPEM, keyPEM := ca.Issue(t, "127.0.0.1") // ECDSA: the ECDHE_ECDSA suites
	writeAtomic(t, filepath.Join(dir, "tls.crt"), certPEM)
	writeAtomic(t, filepath.Join(dir, "tls.key"), keyPEM)
	base := map[string]string{envMetricsCertFile: filepath.Join(dir, "tls.crt"), envMetricsKeyFile: filepath.Join(dir, "tls.key")}
	with := func(extra map[string]string) map[string]string {
		env := maps.Clone(base)
		maps.Copy(env, extra)
		return env
	}
	client := func(c *tls.Config) *tls.Config {
		c.RootCAs = ca.Pool()
		return c
	}
	cases := []struct {
		name   string
		env    map[string]string
		client *tls.Config
		ok     bool
	}{
		{"default: TLS 1.2", base, client(&tls.Config{MaxVersion: tls.VersionTLS12}), true},
		{"default: not TLS 1.1", base, client(&tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}), false},
		{"default: not CBC", base, client(&tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}), false},
		{"min 1.3: TLS 1.2 refused", with(map[string]string{envMetricsMinVersion: "VersionTLS13"}), client(&tls.Config{MaxVersion: tls.VersionTLS12}), false},
		{"min 1.3: TLS 1.3", with(map[string]string{envMetricsMinVersion: "VersionTLS13"}), client(&tls.Config{}), true},
		{"min 1.1: TLS 1.1 without its ciphers", with(map[string]string{envMetricsMinVersion: "VersionTLS11"}), client(&tls.Config{MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11}), false},
		{"min 1.1: TLS 1.1", with(map[string]string{envMetricsMinVersion: "VersionTLS11", envMetricsCiphers: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}),
			client(&tls.Config{MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11}), true},
		{"cipher listed", with(map[string]string{envMetricsCiphers: "TLS_AES_128_GCM_SHA256:TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}),
			client(&tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}), true},
		{"cipher not listed", with(map[string]string{envMetricsCiphers: "TLS_AES_128_GCM_SHA256:TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}),
			client(&tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}), false},
		{"group listed", with(map[string]string{envMetricsCurves: "secp384r1"}), client(&tls.Config{CurvePreferences: []tls.CurveID{tls.CurveP384}}), true},
		{"group not listed", with(map[string]string{envMetricsCurves: "secp384r1"}), client(&tls.Config{CurvePreferences: []tls.CurveID{tls.X25519}}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr, _ := serveStatsForTest(t, c.env)
			_, err := handshake(addr, c.client)
			if c.ok != (err == nil) {
				t.Errorf("handshake: %v, want success %v", err, c.ok)
			}
		})
	}
}

// TestMetricsCertRotation replaces the certificate the way a Secret volume does (new files renamed
// into place): the next handshake serves the new one, without a restart; a broken new pair keeps the
// last good one and says so.
func TestMetricsCertRotation(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, "metrics-ca")
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	certA, keyA := ca.Issue(t, "127.0.0.1")
	writeAtomic(t, certFile, certA)
	writeAtomic(t, keyFile, keyA)
	addr, logs := serveStatsForTest(t, map[string]string{envMetricsCertFile: certFile, envMetricsKeyFile: keyFile})
	cfg := &tls.Config{RootCAs: ca.Pool()}
	served := func() string {
		t.Helper()
		leaf, err := handshake(addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	if got := served(); got != "127.0.0.1" {
		t.Fatalf("served %q", got)
	}
	certB, keyB := ca.Issue(t, "127.0.0.2", "127.0.0.1")
	writeAtomic(t, certFile, certB)
	writeAtomic(t, keyFile, keyB)
	if got := served(); got != "127.0.0.2" {
		t.Fatalf("after the rotation: served %q, want the new certificate", got)
	}
	if !strings.Contains(logs.String(), "reloaded the metrics certificate") {
		t.Errorf("the reload is not logged: %s", logs)
	}

	// A broken pair (the new certificate before its key): the last good one serves on, with a warning.
	certC, keyC := ca.Issue(t, "127.0.0.3", "127.0.0.1")
	writeAtomic(t, certFile, certC)
	if got := served(); got != "127.0.0.2" {
		t.Fatalf("with a mismatched pair: served %q, want the last good one", got)
	}
	if !strings.Contains(logs.String(), "does not load") {
		t.Errorf("the broken pair is not logged: %s", logs)
	}
	served()
	if n := strings.Count(logs.String(), "does not load"); n != 1 {
		t.Errorf("the broken pair is logged %d times, want once", n)
	}
	writeAtomic(t, keyFile, keyC)
	if got := served(); got != "127.0.0.3" {
		t.Fatalf("with the key in place: served %q", got)
	}
}

// TestRunRefusesMetricsSettings: `haroute run` stops at start, before writing anything, on a bad
// metrics listener setting, with one error naming the variable; without a stats port the files are
// not read.
func TestRunRefusesMetricsSettings(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"metrics type", map[string]string{envMetricsType: "prometheus"}, envMetricsType + `="prometheus"`},
		{"cert without key", map[string]string{envMetricsCertFile: missing}, envMetricsKeyFile},
		{"missing cert", map[string]string{envMetricsCertFile: missing, envMetricsKeyFile: missing}, envMetricsCertFile + "=" + missing},
		{"cipher", map[string]string{envMetricsCiphers: "RC4-SHA"}, envMetricsCiphers},
		{"missing credentials", map[string]string{envStatsUserFile: missing, envStatsPasswordFile: missing}, envStatsUserFile + ": open " + missing},
	}
	untouched := filepath.Join(dir, "untouched")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runCLI(t, c.env, "run", "--manifests", dir, "--haproxy-dir", untouched, "--check-binary", checkNone)
			if res.err == nil || !strings.Contains(res.err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", res.err, c.want)
			}
			if _, err := os.Stat(untouched); err == nil {
				t.Fatal("a refused run wrote its HAProxy directory")
			}
		})
	}
	a := &app{getenv: func(k string) string {
		return map[string]string{"STATS_PORT": "0", envMetricsCertFile: missing, envMetricsKeyFile: missing, envStatsUserFile: missing, envStatsPasswordFile: missing}[k]
	}}
	f := runFlags{statsPort: defaultStatsPort, reloadInterval: time.Second, mode: modeRuntime, driftInterval: time.Second, metricsAuth: metricsAuthNone, checkBinary: checkNone}
	f.manifests, f.haproxyDir, f.httpPort, f.httpsPort = dir, untouched, 80, 443
	if rc, err := a.runSettings(f, func(n string) bool { return n == flagCheckBinary }); err != nil || rc.metricsTLS != nil || rc.statsUser != "" {
		t.Errorf("STATS_PORT=0: %v, TLS %v, user %q; want the files left alone", err, rc.metricsTLS, rc.statsUser)
	}
}

// serveStatsForTest resolves env (plus a free loopback ROUTER_LISTEN_ADDR) as `haroute run` does, and
// serves the stats listener as run serves it before the controller exists: /healthz, /healthz/ready
// (not ready) and /metrics (protected). It returns the address and the log.
func serveStatsForTest(t *testing.T, env map[string]string) (string, *testkit.LogBuffer) {
	t.Helper()
	env = maps.Clone(env)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testkit.FreePort(t)))
	env["ROUTER_LISTEN_ADDR"] = addr
	logs := &testkit.LogBuffer{}
	a := &app{getenv: func(k string) string { return env[k] }, log: slog.New(slog.NewTextHandler(logs, nil))}
	f := runFlags{statsPort: defaultStatsPort, reloadInterval: time.Second, mode: modeRuntime, driftInterval: time.Second, metricsAuth: metricsAuthNone, checkBinary: checkNone}
	f.manifests, f.haproxyDir, f.httpPort, f.httpsPort = t.TempDir(), t.TempDir(), 80, 443
	rc, err := a.runSettings(f, func(n string) bool { return n == flagCheckBinary })
	if err != nil {
		t.Fatal(err)
	}
	lns, err := listenStats(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &group{cancel: cancel}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "haroute_up 1") })
	a.serveStartup(ctx, g, lns, protectMetrics(rc, nil, metrics), nil)
	t.Cleanup(func() {
		cancel()
		if err := g.wait(); err != nil {
			t.Error(err)
		}
		closeAll(lns)
	})
	return addr, logs
}

// handshake connects to addr over TLS (bounded) and returns the certificate the server sent.
func handshake(addr string, cfg *tls.Config) (*x509.Certificate, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

// writeAtomic writes b to a new file and renames it to path, as a Secret volume's update replaces
// its files.
func writeAtomic(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func leafName(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	if c == nil || c.Leaf == nil {
		t.Fatal("no certificate")
	}
	return c.Leaf.Subject.CommonName
}
