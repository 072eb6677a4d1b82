package clientca

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// t0 is the start of the tests' fake clock.
var t0 = time.Date(2030, time.March, 1, 12, 0, 0, 0, time.UTC)

// testCA is a certificate and its key, minted for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newCert mints a certificate named cn, signed by parent (self-signed when nil), with the given
// CRL distribution points.
func newCert(t *testing.T, cn string, parent *testCA, isCA bool, cdps ...string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"haroute tests"}},
		NotBefore:             t0.AddDate(-10, 0, 0),
		NotAfter:              t0.AddDate(1, 0, 0),
		BasicConstraintsValid: true,
		IsCA:                  isCA,
		CRLDistributionPoints: cdps,
	}
	if isCA {
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, key.Public(), signerKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: c, key: key}
}

// newCA mints a CA.
func newCA(t *testing.T, cn string, parent *testCA, cdps ...string) *testCA {
	t.Helper()
	return newCert(t, cn, parent, true, cdps...)
}

// pem returns the certificate as PEM.
func (c *testCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})
}

// crl returns a DER CRL signed by c, valid from this to next, revoking the given serials.
func (c *testCA) crl(t *testing.T, number int64, this, next time.Time, revoked ...*big.Int) []byte {
	t.Helper()
	tmpl := &x509.RevocationList{Number: big.NewInt(number), ThisUpdate: this, NextUpdate: next}
	for _, s := range revoked {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: s, RevocationTime: this})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, c.cert, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// crlServer serves CRLs on loopback; each path answers its body, or its status when not 200.
type crlServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string][]byte
	status map[string]int
	hits   map[string]int
}

func newCRLServer(t *testing.T) *crlServer {
	t.Helper()
	s := &crlServer{bodies: map[string][]byte{}, status: map[string]int{}, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.hits[r.URL.Path]++
		if code := s.status[r.URL.Path]; code != 0 && code != http.StatusOK {
			http.Error(w, "test failure", code)
			return
		}
		body, ok := s.bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// set serves body at path with status 200.
func (s *crlServer) set(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies[path], s.status[path] = body, http.StatusOK
}

// fail makes path answer code.
func (s *crlServer) fail(path string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[path] = code
}

// count returns how many requests path got.
func (s *crlServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// clock is a fake clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture is a Manager over a bundle in a temporary directory, with a fake clock and a log.
type fixture struct {
	bundle string
	dir    string
	clock  *clock
	log    *testkit.Buffer
	m      *Manager
}

func newFixture(t *testing.T, bundle ...[]byte) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{
		bundle: filepath.Join(root, "ca-bundle.pem"),
		dir:    filepath.Join(root, "out", "mtls"),
		clock:  &clock{now: t0},
		log:    &testkit.Buffer{},
	}
	writeFile(t, f.bundle, bytes.Join(bundle, nil))
	m, err := New(Config{
		CABundle:     f.bundle,
		Dir:          f.dir,
		Client:       &http.Client{Timeout: 5 * time.Second},
		Log:          slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:          f.clock.Now,
		PollInterval: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	return f
}

// writeFile replaces path with content through a rename, as a ConfigMap update does.
func writeFile(t *testing.T, path string, content []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// readCRLs parses the CRLs of a PEM file.
func readCRLs(t *testing.T, path string) []*x509.RevocationList {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*x509.RevocationList
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		data = rest
		if block.Type != "X509 CRL" {
			t.Fatalf("%s: PEM block %q", path, block.Type)
		}
		crl, err := x509.ParseRevocationList(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, crl)
	}
	if strings.TrimSpace(string(data)) != "" {
		t.Fatalf("%s: trailing data %q", path, data)
	}
	return out
}

// issuedBy tells whether crl is signed by ca.
func issuedBy(crl *x509.RevocationList, ca *testCA) bool {
	return bytes.Equal(crl.RawIssuer, ca.cert.RawSubject) && crl.CheckSignatureFrom(ca.cert) == nil
}

// url returns the server's URL for path.
func (s *crlServer) url(path string) string { return fmt.Sprintf("%s%s", s.URL, path) }
