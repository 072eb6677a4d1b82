package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"testing"
	"time"
)

// IssueClient returns a client certificate whose subject is exactly subject, its RDNs in the given
// order (the order in which OpenSSL, and HAProxy's ssl_c_s_dn, print them), signed by the CA, with a
// fresh ECDSA P-256 key in PKCS#8 form.
func (c *CA) IssueClient(t testing.TB, subject pkix.RDNSequence) (certPEM, keyPEM []byte) {
	t.Helper()
	raw, err := asn1.Marshal(subject)
	if err != nil {
		t.Fatalf("testkit: CA %s: marshal subject %v: %v", c.Name, subject, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testkit: CA %s: generate key: %v", c.Name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		RawSubject:   raw,
		NotBefore:    now.Add(-certBackdate),
		NotAfter:     now.Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatalf("testkit: CA %s: issue client certificate %v: %v", c.Name, subject, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("testkit: CA %s: marshal key: %v", c.Name, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}
