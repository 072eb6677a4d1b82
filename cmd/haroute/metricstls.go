package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// OpenShift's variables of the metrics listener (the stats port), which the ingress operator sets on
// every router it deploys.
const (
	envMetricsType       = "ROUTER_METRICS_TYPE"
	envMetricsCertFile   = "ROUTER_METRICS_TLS_CERT_FILE"
	envMetricsKeyFile    = "ROUTER_METRICS_TLS_KEY_FILE"
	envMetricsCiphers    = "ROUTER_METRICS_TLS_CIPHERS"
	envMetricsMinVersion = "ROUTER_METRICS_TLS_MIN_VERSION"
	envMetricsCurves     = "ROUTER_METRICS_TLS_CURVES"
)

// metricsTypeHAProxy is the one ROUTER_METRICS_TYPE OpenShift's router knows: its own listener with
// /healthz, /healthz/ready and /metrics on the stats port, which haroute always serves.
const metricsTypeHAProxy = "haproxy"

// certRecheck bounds how long a certificate file changed in place (same file, size and modification
// time: a rewrite within the file system's timestamp granularity) can go unnoticed. A replaced file,
// the way a Secret volume is updated, is noticed at the next handshake.
const certRecheck = 30 * time.Second

// checkMetricsType refuses a ROUTER_METRICS_TYPE other than haproxy or unset, as OpenShift's router does.
func checkMetricsType(getenv func(string) string) error {
	if v := strings.TrimSpace(getenv(envMetricsType)); v != "" && v != metricsTypeHAProxy {
		return fmt.Errorf("%s=%q: want %s or unset (haroute always serves its own /metrics on the stats port)", envMetricsType, v, metricsTypeHAProxy)
	}
	return nil
}

// metricsTLSSettings are the ROUTER_METRICS_TLS_* variables, checked.
type metricsTLSSettings struct {
	certFile, keyFile string
	// ciphers, minVersion and curves are zero when not set.
	ciphers    []uint16
	minVersion uint16
	curves     []tls.CurveID
}

// metricsTLSSettingsFromEnv reads and checks the ROUTER_METRICS_TLS_* variables; every malformed one
// is reported. The cipher, version and curve names are OpenShift's (library-go's): what the ingress
// operator writes from the cluster's TLS security profile.
func metricsTLSSettingsFromEnv(getenv func(string) string) (metricsTLSSettings, error) {
	s := metricsTLSSettings{
		certFile: strings.TrimSpace(getenv(envMetricsCertFile)),
		keyFile:  strings.TrimSpace(getenv(envMetricsKeyFile)),
	}
	var errs []error
	if (s.certFile == "") != (s.keyFile == "") {
		errs = append(errs, fmt.Errorf("%s and %s: set both (the stats port's certificate and its key) or neither", envMetricsCertFile, envMetricsKeyFile))
	}
	if v := strings.TrimSpace(getenv(envMetricsCiphers)); v != "" {
		ids := cipherSuiteIDs()
		for _, name := range splitNames(v) {
			id, ok := ids[name]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: unknown cipher suite %q (want IANA names separated by colons, such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", envMetricsCiphers, name))
				continue
			}
			s.ciphers = append(s.ciphers, id)
		}
		if len(s.ciphers) == 0 && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("%s=%q: names no cipher suite", envMetricsCiphers, v))
		}
	}
	if v := strings.TrimSpace(getenv(envMetricsMinVersion)); v != "" {
		versions := map[string]uint16{"VersionTLS10": tls.VersionTLS10, "VersionTLS11": tls.VersionTLS11, "VersionTLS12": tls.VersionTLS12, "VersionTLS13": tls.VersionTLS13}
		if s.minVersion = versions[v]; s.minVersion == 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13", envMetricsMinVersion, v))
		}
	}
	if v := strings.TrimSpace(getenv(envMetricsCurves)); v != "" {
		groups := map[string]tls.CurveID{"X25519": tls.X25519, "secp256r1": tls.CurveP256, "secp384r1": tls.CurveP384, "secp521r1": tls.CurveP521, "X25519MLKEM768": tls.X25519MLKEM768}
		for _, name := range splitNames(v) {
			id, ok := groups[name]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: unknown group %q (want X25519, secp256r1, secp384r1, secp521r1 or X25519MLKEM768, separated by commas or colons)", envMetricsCurves, name))
				continue
			}
			s.curves = append(s.curves, id)
		}
		if len(s.curves) == 0 && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("%s=%q: names no group", envMetricsCurves, v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return metricsTLSSettings{}, err
	}
	return s, nil
}

// splitNames splits a list separated by colons or commas, dropping blanks.
func splitNames(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// cipherSuiteIDs maps the IANA names of the cipher suites Go's crypto/tls knows (the TLS 1.3 ones
// included, which Go negotiates by itself) to their IDs, with library-go's two legacy names without
// the _SHA256 suffix.
func cipherSuiteIDs() map[string]uint16 {
	ids := map[string]uint16{
		"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	}
	for _, cs := range slices.Concat(tls.CipherSuites(), tls.InsecureCipherSuites()) {
		ids[cs.Name] = cs.ID
	}
	return ids
}

// defaultMetricsCiphers are the suites of OpenShift's router when ROUTER_METRICS_TLS_CIPHERS is not
// set (library-go's defaults): ECDHE with AEAD for TLS 1.2; TLS 1.3 chooses its own.
func defaultMetricsCiphers() []uint16 {
	return []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	}
}

// metricsTLS is HTTPS on the stats port: the ROUTER_METRICS_TLS_* settings and the certificate
// they name, re-read when its files change.
type metricsTLS struct {
	settings metricsTLSSettings
	certs    *certReloader
}

// config returns the server configuration of the stats port's HTTPS: TLS 1.2 and library-go's
// ciphers unless the settings say otherwise, as OpenShift's router has it.
func (m *metricsTLS) config() *tls.Config {
	c := &tls.Config{
		MinVersion:       m.settings.minVersion,
		CipherSuites:     m.settings.ciphers,
		CurvePreferences: m.settings.curves,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return m.certs.certificate(), nil
		},
	}
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS12
	}
	if len(c.CipherSuites) == 0 {
		c.CipherSuites = defaultMetricsCiphers()
	}
	return c
}

// metricsTLSFromEnv reads the ROUTER_METRICS_TLS_* variables. Without a certificate it returns nil
// (plain HTTP only); the other settings are still checked, and ignored with a warning, as OpenShift's
// router ignores them. When serve is false (no stats port) the certificate is not read.
func (a *app) metricsTLSFromEnv(serve bool) (*metricsTLS, error) {
	s, err := metricsTLSSettingsFromEnv(a.getenv)
	if err != nil {
		return nil, err
	}
	if s.certFile == "" {
		var unused []string
		for _, name := range []string{envMetricsCiphers, envMetricsMinVersion, envMetricsCurves} {
			if strings.TrimSpace(a.getenv(name)) != "" {
				unused = append(unused, name)
			}
		}
		if len(unused) > 0 {
			a.log.Warn("the stats port serves plain HTTP only: these settings have no effect without "+envMetricsCertFile, "ignored", strings.Join(unused, ","))
		}
		return nil, nil
	}
	if !serve {
		return nil, nil
	}
	certs, err := newCertReloader(s.certFile, s.keyFile, a.log)
	if err != nil {
		return nil, err
	}
	a.log.Info("the stats port serves HTTPS, and plain HTTP for the probes", "cert", s.certFile, "key", s.keyFile)
	return &metricsTLS{settings: s, certs: certs}, nil
}

// certReloader serves a certificate and key pair from two files, re-read when they change: each
// handshake compares the files' stat (identity, size, modification time) with those of the last read,
// and reads them again when it differs, or at least every recheck. A new pair that does not load is
// logged once and the last good one keeps serving.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	recheck           time.Duration
	now               func() time.Time

	mu   sync.Mutex
	cert *tls.Certificate
	// seen are the files' stat at the last read (nil: the stat failed); sum is the hash of the
	// contents last read, loaded or refused; readAt is when.
	seen   [2]os.FileInfo
	sum    [sha256.Size]byte
	readAt time.Time
}

// newCertReloader loads the pair; a pair that does not load is an error naming both files.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log, recheck: certRecheck, now: time.Now}
	r.seen, r.readAt = r.stat(), r.now()
	certPEM, keyPEM, sum, err := r.read()
	if err == nil {
		var c tls.Certificate
		if c, err = tls.X509KeyPair(certPEM, keyPEM); err == nil {
			r.cert, r.sum = &c, sum
			return r, nil
		}
	}
	return nil, fmt.Errorf("%s=%s, %s=%s: %w", envMetricsCertFile, certFile, envMetricsKeyFile, keyFile, err)
}

// certificate returns the pair to serve, re-reading the files first when they changed.
func (r *certReloader) certificate() *tls.Certificate {
	r.mu.Lock()
	defer r.mu.Unlock()
	now, seen := r.now(), r.stat()
	if sameFile(seen[0], r.seen[0]) && sameFile(seen[1], r.seen[1]) && now.Sub(r.readAt) < r.recheck {
		return r.cert
	}
	r.seen, r.readAt = seen, now
	certPEM, keyPEM, sum, err := r.read()
	switch {
	case err != nil:
		r.log.Warn("the metrics certificate could not be re-read; the stats port keeps serving the last one", "cert", r.certFile, "key", r.keyFile, "err", err)
	case sum == r.sum:
	default:
		r.sum = sum
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			r.log.Warn("the new metrics certificate does not load; the stats port keeps serving the last one", "cert", r.certFile, "key", r.keyFile, "err", err)
			break
		}
		r.cert = &c
		r.log.Info("reloaded the metrics certificate", "cert", r.certFile, "key", r.keyFile)
	}
	return r.cert
}

// stat returns the files' stat, following symbolic links (a Secret volume's files are links).
func (r *certReloader) stat() [2]os.FileInfo {
	var out [2]os.FileInfo
	for i, p := range []string{r.certFile, r.keyFile} {
		if st, err := os.Stat(p); err == nil {
			out[i] = st
		}
	}
	return out
}

// read returns both files and the hash of the two.
func (r *certReloader) read() (certPEM, keyPEM []byte, sum [sha256.Size]byte, err error) {
	if certPEM, err = os.ReadFile(r.certFile); err != nil {
		return nil, nil, sum, err
	}
	if keyPEM, err = os.ReadFile(r.keyFile); err != nil {
		return nil, nil, sum, err
	}
	return certPEM, keyPEM, sha256.Sum256(bytes.Join([][]byte{certPEM, keyPEM}, []byte{0})), nil
}

// sameFile reports whether two stats are of the same file, unchanged (both nil: both failed).
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
