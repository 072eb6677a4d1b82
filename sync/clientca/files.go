package clientca

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// bundle is a parsed CA bundle.
type bundle struct {
	// pem holds each certificate once, as PEM, in file order.
	pem []byte
	// certs are the certificates, withCDP those that have distribution points.
	certs, withCDP []*x509.Certificate
	// bySubject indexes certs by raw subject.
	bySubject map[string][]*x509.Certificate
	// skipped lists the types of the PEM blocks that are not certificates.
	skipped []string
}

// readBundle reads the CA bundle at path, following symlinks.
func readBundle(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("client CA bundle: %w", err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxBundleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("client CA bundle %s: %w", path, err)
	}
	if len(data) > maxBundleBytes {
		return nil, fmt.Errorf("client CA bundle %s: larger than %d bytes", path, maxBundleBytes)
	}
	return data, nil
}

// parseBundle parses the PEM certificates of data. A certificate that does not parse, or no
// certificate at all, is an error; other PEM blocks and text between blocks are skipped.
func parseBundle(data []byte) (*bundle, error) {
	b := &bundle{bySubject: map[string][]*x509.Certificate{}}
	var buf bytes.Buffer
	seen := map[[sha256.Size]byte]bool{}
	for n := 1; ; {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		data = rest
		if block.Type != "CERTIFICATE" {
			b.skipped = append(b.skipped, block.Type)
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", n, err)
		}
		n++
		key := sha256.Sum256(c.Raw)
		if seen[key] {
			continue
		}
		seen[key] = true
		b.certs = append(b.certs, c)
		b.bySubject[string(c.RawSubject)] = append(b.bySubject[string(c.RawSubject)], c)
		if len(c.CRLDistributionPoints) > 0 {
			b.withCDP = append(b.withCDP, c)
		}
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	if len(b.certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	b.pem = buf.Bytes()
	return b, nil
}

// write writes content to path unless it is already there; want false leaves path alone. It tells
// whether it wrote.
func (m *Manager) write(path string, content []byte, want bool) (bool, error) {
	if !want {
		return false, nil
	}
	prev, known := m.written[path]
	if !known {
		// First write of this Manager: a file left by an earlier run may already hold content.
		if cur, err := os.ReadFile(path); err == nil {
			prev, known = cur, true
		}
	}
	if known && bytes.Equal(prev, content) {
		m.written[path] = content
		return false, nil
	}
	if err := os.MkdirAll(m.cfg.Dir, 0o700); err != nil {
		return false, fmt.Errorf("client CA: %w", err)
	}
	if err := writeAtomic(path, content); err != nil {
		return false, fmt.Errorf("client CA: %w", err)
	}
	m.written[path] = bytes.Clone(content)
	return true, nil
}

// writeAtomic replaces path with content, mode 0600, through a temporary file in the same
// directory renamed over it: a reader sees the old content or the new one, never a part.
func writeAtomic(path string, content []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err = f.Write(content); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// makePlaceholder returns a CRL (PEM) that HAProxy loads and that covers no certificate: its
// issuer is a name made up here, its key is dropped on return, and it expired in 2000.
func makePlaceholder() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("name: %w", err)
	}
	start := time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{
		SerialNumber: new(big.Int).SetBytes(id),
		Subject: pkix.Name{
			Organization: []string{"haroute"},
			CommonName:   "haroute placeholder, no CRL held yet " + hex.EncodeToString(id),
		},
		NotBefore:             start,
		NotAfter:              start.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	issuer, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	crl, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number:     big.NewInt(1),
		ThisUpdate: start,
		NextUpdate: start.Add(time.Hour),
	}, issuer, key)
	if err != nil {
		return nil, fmt.Errorf("CRL: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: crl}), nil
}
