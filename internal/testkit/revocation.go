package testkit

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// RevocationList returns a CRL of c (PEM), valid from an hour ago for a day, that revokes the
// certificates given in PEM (none: an empty list). number orders the lists of one CA.
func (c *CA) RevocationList(t testing.TB, number int64, revoked ...[]byte) []byte {
	t.Helper()
	now := time.Now()
	tmpl := &x509.RevocationList{Number: big.NewInt(number), ThisUpdate: now.Add(-certBackdate), NextUpdate: now.Add(certLifetime)}
	for _, certPEM := range revoked {
		b, _ := pem.Decode(certPEM)
		if b == nil {
			t.Fatalf("testkit: CA %s: revoke: no PEM certificate", c.Name)
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatalf("testkit: CA %s: revoke: %v", c.Name, err)
		}
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: cert.SerialNumber, RevocationTime: now.Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, c.cert, c.key)
	if err != nil {
		t.Fatalf("testkit: CA %s: create CRL: %v", c.Name, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}
