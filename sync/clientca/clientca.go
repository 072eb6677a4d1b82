package clientca

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Names of the files written in Config.Dir.
const (
	CABundleName = "ca-bundle.pem"
	CRLName      = "crls.pem"
)

// Defaults and bounds.
const (
	defaultTimeout = 30 * time.Second
	defaultPoll    = 2 * time.Second
	defaultMaxAge  = time.Hour
	// minMargin and maxMargin bound how long before its nextUpdate a CRL is downloaded again.
	minMargin = time.Minute
	maxMargin = time.Hour
	// backoffBase and backoffMax bound the delay before a failed download is tried again.
	backoffBase = 10 * time.Second
	backoffMax  = 5 * time.Minute
	// maxCRLBytes bounds a downloaded CRL (some CAs publish CRLs of tens of megabytes).
	maxCRLBytes = 64 << 20
	// maxBundleBytes bounds the CA bundle read.
	maxBundleBytes = 16 << 20
)

// Config says where the bundle is read and where the files are written.
type Config struct {
	// CABundle is the path of the client CA bundle (PEM), ROUTER_MUTUAL_TLS_AUTH_CA. Required.
	CABundle string
	// Dir is where ca-bundle.pem and crls.pem are written (created with mode 0700). Required.
	Dir string
	// Client downloads the CRLs. Nil: a client with a 30 s timeout and the proxy of the environment
	// (HTTP_PROXY, NO_PROXY), as the stock router's downloads have.
	Client *http.Client
	// Log receives what happens. Nil: slog.Default().
	Log *slog.Logger
	// Now tells the time the CRLs are checked and scheduled against. Nil: time.Now.
	Now func() time.Time
	// PollInterval is how often Run reads the bundle. Zero: 2 s.
	PollInterval time.Duration
	// MaxAge is the longest a downloaded CRL goes without being downloaded again, whatever its
	// nextUpdate. Zero: 1 hour.
	MaxAge time.Duration
}

// Files tells where the files are and what the last Sync changed.
type Files struct {
	// CABundle and CRL are the paths of ca-bundle.pem and crls.pem.
	CABundle, CRL string
	// HaveCRLs is true when a certificate of the bundle has a CRL distribution point: crl-file must
	// then be rendered. When false, crls.pem is neither written nor removed, and must not be used.
	HaveCRLs bool
	// CAChanged and CRLChanged are true when the last Sync wrote that file with a new content.
	CAChanged, CRLChanged bool
	// Uncovered lists the subjects of the bundle's CA certificates that signed none of the CRLs in
	// crls.pem. While HaveCRLs is true, HAProxy rejects every client whose chain goes through one.
	Uncovered []string
}

// ErrCRLUnavailable is wrapped by the errors of Sync when a certificate that has CRL distribution
// points has no usable CRL: the files were written all the same, and HAProxy rejects the clients
// that need the missing CRL.
var ErrCRLUnavailable = errors.New("certificate revocation list unavailable")

// CRLError says which certificate has no usable CRL and why.
type CRLError struct {
	// Subject is the subject of the certificate whose distribution points were tried.
	Subject string
	// URLs are its distribution points.
	URLs []string
	// Err says why each failed, or that the CRL held has expired.
	Err error
}

// Error names the certificate, its distribution points and the failures.
func (e *CRLError) Error() string {
	return fmt.Sprintf("no usable CRL for certificate %q (distribution points %s): %v",
		e.Subject, strings.Join(e.URLs, ", "), e.Err)
}

// Unwrap makes errors.Is(err, ErrCRLUnavailable) true.
func (e *CRLError) Unwrap() []error { return []error{ErrCRLUnavailable, e.Err} }

// Manager keeps the files. Create it with New; its methods may be called from several goroutines.
type Manager struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger
	now    func() time.Time
	poll   time.Duration
	maxAge time.Duration
	caPath string
	crl    string

	mu sync.Mutex
	// seen is the hash of the bundle content last synced, if haveSeen.
	seen     [sha256.Size]byte
	haveSeen bool
	// written holds the content of each file as last written or found on disk.
	written map[string][]byte
	// sources holds the CRL state of each certificate with distribution points, by certificate hash.
	sources map[[sha256.Size]byte]*source
	// order holds the keys of sources in bundle order.
	order [][sha256.Size]byte
	// last is what the last successful Sync returned, with the changed flags cleared; synced
	// tells whether there was one.
	last   Files
	synced bool
	// placeholder is the placeholder CRL (PEM), made once.
	placeholder []byte
	// due is when a CRL must be downloaded again; zero when none must.
	due time.Time
}

// New checks cfg and returns a Manager. It does no I/O: the first Sync reads and writes.
func New(cfg Config) (*Manager, error) {
	if cfg.CABundle == "" {
		return nil, errors.New("client CA: the path of the CA bundle is not set")
	}
	if cfg.Dir == "" {
		return nil, errors.New("client CA: the directory of the files is not set")
	}
	if cfg.PollInterval < 0 || cfg.MaxAge < 0 {
		return nil, fmt.Errorf("client CA: negative poll interval %s or maximum CRL age %s", cfg.PollInterval, cfg.MaxAge)
	}
	m := &Manager{
		cfg:     cfg,
		client:  cfg.Client,
		log:     cfg.Log,
		now:     cfg.Now,
		poll:    cfg.PollInterval,
		maxAge:  cfg.MaxAge,
		caPath:  filepath.Join(cfg.Dir, CABundleName),
		crl:     filepath.Join(cfg.Dir, CRLName),
		written: map[string][]byte{},
		sources: map[[sha256.Size]byte]*source{},
	}
	if filepath.Clean(cfg.CABundle) == m.caPath {
		return nil, fmt.Errorf("client CA: the CA bundle %s would be overwritten by the file written", cfg.CABundle)
	}
	if m.client == nil {
		m.client = defaultClient()
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.poll == 0 {
		m.poll = defaultPoll
	}
	if m.maxAge == 0 {
		m.maxAge = defaultMaxAge
	}
	m.last = Files{CABundle: m.caPath, CRL: m.crl}
	return m, nil
}

// defaultClient downloads through the proxy of the environment, with bounded waits.
func defaultClient() *http.Client {
	return &http.Client{
		Timeout: defaultTimeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: defaultTimeout,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConns:          4,
		},
	}
}

// Sync reads the bundle, downloads the CRLs that are missing or due, and writes the files whose
// content changed.
//
// A bundle that cannot be read, does not parse or holds no certificate is an error, and nothing is
// written. A certificate with distribution points but no usable CRL is an error wrapping
// ErrCRLUnavailable (one *CRLError each); the files are written all the same and Files is valid.
// A failed refresh while the CRL held is valid is only logged.
func (m *Manager) Sync(ctx context.Context) (Files, error) {
	data, err := readBundle(m.cfg.CABundle)
	if err != nil {
		return m.unchanged(), err
	}
	return m.syncData(ctx, data)
}

// unchanged returns the files of the last successful Sync, nothing changed.
func (m *Manager) unchanged() Files {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// syncData does Sync on the bundle content data.
func (m *Manager) syncData(ctx context.Context, data []byte) (Files, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.seen, m.haveSeen = sha256.Sum256(data), true
	b, err := parseBundle(data)
	if err != nil {
		return m.last, fmt.Errorf("client CA bundle %s: %w", m.cfg.CABundle, err)
	}
	for _, t := range b.skipped {
		m.log.Info("client CA bundle: PEM block that is not a certificate skipped", "path", m.cfg.CABundle, "type", t)
	}
	m.keepSources(b)
	m.refresh(ctx, b, now)
	if err := ctx.Err(); err != nil {
		return m.last, fmt.Errorf("client CA: sync interrupted: %w", err)
	}

	files := Files{CABundle: m.caPath, CRL: m.crl, HaveCRLs: len(b.withCDP) > 0}
	var crlPEM []byte
	if files.HaveCRLs {
		var held []*x509.RevocationList
		crlPEM, held = m.crlContent(b)
		if len(held) == 0 {
			if crlPEM, err = m.placeholderCRL(); err != nil {
				return m.last, err
			}
		}
		files.Uncovered = uncovered(b, held)
	}
	if files.CRLChanged, err = m.write(m.crl, crlPEM, files.HaveCRLs); err != nil {
		m.due = now.Add(backoffBase)
		return m.last, err
	}
	if files.CAChanged, err = m.write(m.caPath, b.pem, true); err != nil {
		m.due = now.Add(backoffBase)
		return m.last, err
	}
	if files.HaveCRLs && !slices.Equal(files.Uncovered, m.last.Uncovered) && len(files.Uncovered) > 0 {
		m.log.Warn("client CA: CAs without a CRL in the CRL file; HAProxy rejects the clients they issued",
			"cas", files.Uncovered, "crl_file", m.crl)
	}
	if m.synced && files.HaveCRLs != m.last.HaveCRLs {
		m.log.Info("client CA: CRL checking changes; the CRL file must be added to or removed from the configuration",
			"have_crls", files.HaveCRLs)
	}
	m.last, m.synced = files, true
	m.last.CAChanged, m.last.CRLChanged = false, false
	m.last.Uncovered = slices.Clone(files.Uncovered)
	m.due = m.nextDue()
	return files, m.unusable(now)
}

// placeholderCRL returns the placeholder CRL, made at the first call.
func (m *Manager) placeholderCRL() ([]byte, error) {
	if m.placeholder == nil {
		p, err := makePlaceholder()
		if err != nil {
			return nil, fmt.Errorf("client CA: placeholder CRL: %w", err)
		}
		m.placeholder = p
	}
	return m.placeholder, nil
}

// backoff is the delay before the n-th retry (n ≥ 1).
func backoff(n int) time.Duration {
	d := backoffBase
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}
