package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/haroute/haroute/sync/listener"
)

// clientCRLDir is where the CRLs of the client CA bundle are downloaded and kept, under the HAProxy
// directory (private to haroute).
const clientCRLDir = "haroute/client-crls"

// listenerSettings are the variables that name the router's own TLS files (model.ListenerFiles).
type listenerSettings struct {
	// defaultCertPEM (DEFAULT_CERTIFICATE), defaultCertPath (DEFAULT_CERTIFICATE_PATH or
	// --default-certificate) and defaultCertDir (DEFAULT_CERTIFICATE_DIR), the first one set wins.
	defaultCertPEM  []byte
	defaultCertPath string
	defaultCertDir  string
	// clientCA (ROUTER_MUTUAL_TLS_AUTH_CA) and clientCRL (ROUTER_MUTUAL_TLS_AUTH_CRL), read only with
	// client certificates (ROUTER_MUTUAL_TLS_AUTH optional or required).
	clientCA, clientCRL string
}

// listenerSettingsFromEnv reads the variables of the listener files; verify is the client
// certificate policy. Mutual TLS needs a CA bundle: OpenShift's router would fall back to the
// system's trust store, which would let any publicly trusted certificate in.
func (a *app) listenerSettingsFromEnv(verify string) (listenerSettings, error) {
	get := func(name string) string { return strings.TrimSpace(a.getenv(name)) }
	l := listenerSettings{
		defaultCertPath: get("DEFAULT_CERTIFICATE_PATH"),
		defaultCertDir:  get("DEFAULT_CERTIFICATE_DIR"),
	}
	if v := a.getenv("DEFAULT_CERTIFICATE"); strings.TrimSpace(v) != "" {
		l.defaultCertPEM = []byte(v)
	}
	ca, crl := get("ROUTER_MUTUAL_TLS_AUTH_CA"), get("ROUTER_MUTUAL_TLS_AUTH_CRL")
	if verify == "" {
		return l, nil
	}
	if ca == "" {
		return l, fmt.Errorf("ROUTER_MUTUAL_TLS_AUTH=%s: set ROUTER_MUTUAL_TLS_AUTH_CA to the bundle of the CAs that sign client certificates", verify)
	}
	for name, p := range map[string]string{"ROUTER_MUTUAL_TLS_AUTH_CA": ca, "ROUTER_MUTUAL_TLS_AUTH_CRL": crl} {
		if p != "" && !filepath.IsAbs(p) {
			return l, fmt.Errorf("%s=%q: want an absolute path", name, p)
		}
	}
	l.clientCA, l.clientCRL = ca, crl
	return l, nil
}

// configured reports whether any listener file is configured.
func (l listenerSettings) configured() bool {
	return len(l.defaultCertPEM) > 0 || l.defaultCertPath != "" || l.defaultCertDir != "" || l.clientCA != ""
}

// listenerWatcher reads the listener files of s once (an error names the variable and the file) and
// returns their watcher, or nil when none is configured; dir is the HAProxy directory.
func (a *app) listenerWatcher(ctx context.Context, s renderSettings, dir string) (*listener.Watcher, error) {
	l := s.listener
	if !l.configured() {
		return nil, nil
	}
	w, err := listener.New(ctx, listener.Config{
		DefaultCertificatePEM:  l.defaultCertPEM,
		DefaultCertificatePath: l.defaultCertPath,
		DefaultCertificateDir:  l.defaultCertDir,
		ClientCA:               l.clientCA,
		ClientCRL:              l.clientCRL,
		CRLDir:                 filepath.Join(dir, filepath.FromSlash(clientCRLDir)),
		Log:                    a.log,
	})
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	return w, nil
}
