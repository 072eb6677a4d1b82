// Package listener keeps the router's own TLS files: the default certificate and, for mutual TLS,
// the client CA bundle and its revocation lists (model.ListenerFiles). It reads them from the files
// OpenShift's settings name — DEFAULT_CERTIFICATE (inline), DEFAULT_CERTIFICATE_PATH or
// DEFAULT_CERTIFICATE_DIR (a mounted TLS Secret: tls.crt and tls.key), ROUTER_MUTUAL_TLS_AUTH_CA (a
// mounted ConfigMap; the CRLs its certificates name are downloaded and refreshed by sync/clientca)
// and ROUTER_MUTUAL_TLS_AUTH_CRL (an explicit CRL file) — and watches them: a Secret or ConfigMap
// updated in place (kubelet swaps a symlink) is seen within a poll interval and handed on, so that
// the controller applies it at runtime (set ssl cert / ca-file / crl-file) without a reload.
//
// Start-up is strict, running is forgiving: New fails on a file that is missing, unreadable or does
// not hold what it must (a certificate with its key, a CA bundle, CRLs), naming the variable and the
// path; later, a file that turns bad is reported once and the last good content stays in force.
package listener

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/sync/clientca"
)

// DefaultPollInterval is how often the files are read again.
const DefaultPollInterval = 2 * time.Second

// maxFileBytes bounds a file read.
const maxFileBytes = 16 << 20

// Config says where the files come from. The default certificate is taken from the first of
// DefaultCertificatePEM, DefaultCertificatePath and DefaultCertificateDir that is set (OpenShift's
// order); none: the Files have no default certificate and the caller renders its own.
type Config struct {
	// DefaultCertificatePEM is a certificate and its key given inline (DEFAULT_CERTIFICATE); it
	// never changes.
	DefaultCertificatePEM []byte
	// DefaultCertificatePath is a PEM file with the certificate, its chain and its key
	// (DEFAULT_CERTIFICATE_PATH).
	DefaultCertificatePath string
	// DefaultCertificateDir holds tls.crt and, unless tls.crt has the key too, tls.key
	// (DEFAULT_CERTIFICATE_DIR: the mounted TLS Secret).
	DefaultCertificateDir string
	// ClientCA is the client CA bundle (ROUTER_MUTUAL_TLS_AUTH_CA); empty: no mutual TLS files.
	ClientCA string
	// ClientCRL is an explicit CRL file (ROUTER_MUTUAL_TLS_AUTH_CRL). When set, the CRLs are this
	// file's, and nothing is downloaded; otherwise the CRLs the CA certificates name are downloaded
	// (sync/clientca) into CRLDir.
	ClientCRL string
	// CRLDir is where the downloaded CRLs are kept (required with ClientCA and no ClientCRL).
	CRLDir string
	// HTTPClient downloads CRLs; nil: clientca's default (30 s timeout, the environment's proxy).
	HTTPClient *http.Client
	// PollInterval is how often the files are read again; 0: DefaultPollInterval.
	PollInterval time.Duration
	// Log receives what happens; nil discards.
	Log *slog.Logger
}

// Watcher holds the current listener files and notices their changes. Create it with New.
type Watcher struct {
	cfg     Config
	log     *slog.Logger
	crls    *clientca.Manager // nil without downloaded CRLs
	changes chan struct{}

	mu    sync.Mutex
	files model.ListenerFiles
	// haveCRLs: the CRL manager keeps a CRL file (a certificate of the bundle names a distribution
	// point); it follows the bundle's content.
	haveCRLs bool
	// bad holds, per variable, the last error reported for a file that turned bad, so that a lasting
	// one is reported once.
	bad map[string]string
}

// New reads every file once and returns a Watcher holding them; an error names the variable and the
// file. A CRL that cannot be downloaded at start is not an error (OpenShift's router starts too): it
// is logged, the clients that need it are refused until it arrives, and Run keeps trying.
func New(ctx context.Context, cfg Config) (*Watcher, error) {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	w := &Watcher{cfg: cfg, log: cfg.Log, changes: make(chan struct{}, 1), bad: map[string]string{}}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if cfg.ClientCA != "" && cfg.ClientCRL == "" {
		if cfg.CRLDir == "" {
			return nil, errors.New("listener files: no directory for the client CRLs")
		}
		m, err := clientca.New(clientca.Config{CABundle: cfg.ClientCA, Dir: cfg.CRLDir, Client: cfg.HTTPClient,
			Log: w.log, PollInterval: cfg.PollInterval})
		if err != nil {
			return nil, fmt.Errorf("ROUTER_MUTUAL_TLS_AUTH_CA: %w", err)
		}
		w.crls = m
		f, err := m.Sync(ctx)
		switch {
		case errors.Is(err, clientca.ErrCRLUnavailable):
			w.log.Warn("client CA: CRLs missing at start; HAProxy refuses the clients that need them until they are downloaded", "error", err)
		case err != nil:
			return nil, fmt.Errorf("ROUTER_MUTUAL_TLS_AUTH_CA=%s: %w", cfg.ClientCA, err)
		}
		w.haveCRLs = f.HaveCRLs
	}
	files, err := w.read(w.haveCRLs)
	if err != nil {
		return nil, err
	}
	w.files = files
	return w, nil
}

// Files returns the current listener files.
func (w *Watcher) Files() model.ListenerFiles {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.files
}

// Changes receives a value after the files changed; values coalesce (buffer 1).
func (w *Watcher) Changes() <-chan struct{} { return w.changes }

// Run reads the files every poll interval until ctx ends, keeps the CRLs downloaded and fresh, and
// signals Changes when a file's content changed. A file that turned bad is reported once; the last
// good content stays in force. It returns nil when ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	if w.crls != nil {
		go w.crls.Run(ctx, func(f clientca.Files) {
			w.mu.Lock()
			w.haveCRLs = f.HaveCRLs
			w.mu.Unlock()
			w.poll()
		})
	}
	t := time.NewTicker(w.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.poll()
		}
	}
}

// poll reads the files and takes them when they are good and differ from the current ones.
func (w *Watcher) poll() {
	w.mu.Lock()
	haveCRLs := w.haveCRLs
	w.mu.Unlock()
	files, err := w.read(haveCRLs)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if msg := err.Error(); w.bad["read"] != msg {
			w.bad["read"] = msg
			w.log.Warn("listener files: a file is missing or malformed; the content in force is kept", "error", err)
		}
		return
	}
	if w.bad["read"] != "" {
		w.log.Info("listener files: every file is readable and well-formed again")
		delete(w.bad, "read")
	}
	if files == w.files {
		return
	}
	for _, c := range []struct {
		what     string
		old, new string
	}{
		{"default certificate", w.files.DefaultCertificate, files.DefaultCertificate},
		{"client CA", w.files.ClientCA, files.ClientCA},
		{"client CRLs", w.files.ClientCRL, files.ClientCRL},
	} {
		if c.old != c.new {
			w.log.Info("listener files: "+c.what+" changed", "sha256", digest(c.new))
		}
	}
	w.files = files
	select {
	case w.changes <- struct{}{}:
	default:
	}
}

// read reads every file; haveCRLs says whether the CRL manager keeps a CRL file.
func (w *Watcher) read(haveCRLs bool) (model.ListenerFiles, error) {
	var out model.ListenerFiles
	var errs []error
	cert, err := w.defaultCertificate()
	if err != nil {
		errs = append(errs, err)
	}
	out.DefaultCertificate = cert
	if w.cfg.ClientCA != "" {
		caPath, crlPath, crlVar := w.cfg.ClientCA, w.cfg.ClientCRL, "ROUTER_MUTUAL_TLS_AUTH_CRL"
		if w.crls != nil {
			caPath = filepath.Join(w.cfg.CRLDir, clientca.CABundleName)
			crlPath, crlVar = filepath.Join(w.cfg.CRLDir, clientca.CRLName), "ROUTER_MUTUAL_TLS_AUTH_CA"
		}
		if out.ClientCA, err = readPEM(caPath, "CERTIFICATE"); err != nil {
			errs = append(errs, fmt.Errorf("ROUTER_MUTUAL_TLS_AUTH_CA=%s: %w", w.cfg.ClientCA, err))
		}
		if w.crls == nil || haveCRLs {
			if out.ClientCRL, err = readPEM(crlPath, "X509 CRL"); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", crlVar, crlPath, err))
			}
		}
	}
	return out, errors.Join(errs...)
}

// defaultCertificate returns the default certificate of the configured source, normalised
// (KeyPair), or "" when none is configured.
func (w *Watcher) defaultCertificate() (string, error) {
	c := w.cfg
	var data []byte
	var what string
	switch {
	case len(c.DefaultCertificatePEM) > 0:
		data, what = c.DefaultCertificatePEM, "DEFAULT_CERTIFICATE"
	case c.DefaultCertificatePath != "":
		what = "DEFAULT_CERTIFICATE_PATH=" + c.DefaultCertificatePath
		b, err := readFile(c.DefaultCertificatePath)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		data = b
	case c.DefaultCertificateDir != "":
		what = "DEFAULT_CERTIFICATE_DIR=" + c.DefaultCertificateDir
		b, err := secretPEM(c.DefaultCertificateDir)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		data = b
	default:
		return "", nil
	}
	pemData, err := KeyPair(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return string(pemData), nil
}

// secretPEM joins a mounted TLS Secret's tls.crt and tls.key, or returns tls.crt alone when it holds
// the key too.
func secretPEM(dir string) ([]byte, error) {
	crt, err := readFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		return nil, err
	}
	if bytes.Contains(crt, []byte("PRIVATE KEY-----")) {
		return crt, nil
	}
	key, err := readFile(filepath.Join(dir, "tls.key"))
	if err != nil {
		return nil, fmt.Errorf("tls.crt holds no key: %w", err)
	}
	out := append(bytes.TrimRight(crt, "\n"), '\n')
	return append(out, key...), nil
}

// KeyPair checks that data holds certificates and a private key that belongs to the first of them,
// and returns the certificate and key blocks re-encoded in their order: other blocks (such as EC
// PARAMETERS), text between blocks and blank lines, which would break HAProxy runtime payloads, are
// dropped.
func KeyPair(data []byte) ([]byte, error) {
	if _, err := tls.X509KeyPair(data, data); err != nil {
		return nil, fmt.Errorf("want a PEM certificate and its private key: %w", err)
	}
	var buf bytes.Buffer
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" && !strings.HasSuffix(b.Type, "PRIVATE KEY") {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: b.Type, Bytes: b.Bytes}); err != nil {
			return nil, fmt.Errorf("PEM encoding: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// readPEM reads a file of PEM blocks of one type and returns them re-encoded (blank lines and text
// between blocks dropped); a file without such a block is an error.
func readPEM(path, blockType string) (string, error) {
	data, err := readFile(path)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != blockType {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: b.Type, Bytes: b.Bytes}); err != nil {
			return "", fmt.Errorf("PEM encoding: %w", err)
		}
	}
	if buf.Len() == 0 {
		return "", fmt.Errorf("%s: no PEM %s block", path, blockType)
	}
	return buf.String(), nil
}

// readFile reads a file of at most maxFileBytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileBytes)
	}
	return data, nil
}

// digest is a short SHA-256 of s for logs.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%x", sum[:8])
}
