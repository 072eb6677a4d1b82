package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/netip"
	"testing"
	"time"
)

// Certificates are valid from an hour ago (clock skew) for a day: longer than any test run.
const (
	certBackdate = time.Hour
	certLifetime = 24 * time.Hour
)

// CA is a throw-away certificate authority with an ECDSA P-256 key.
type CA struct {
	// Name is the CA's common name.
	Name string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// NewCA creates a self-signed CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testkit: CA %s: generate key: %v", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"haroute testbed"}},
		NotBefore:             now.Add(-certBackdate),
		NotAfter:              now.Add(certLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testkit: CA %s: create certificate: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testkit: CA %s: parse certificate: %v", name, err)
	}
	return &CA{
		Name: name,
		cert: cert,
		key:  key,
		pem:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}
}

// PEM returns the CA certificate in PEM form.
func (c *CA) PEM() []byte { return append([]byte(nil), c.pem...) }

// Pool returns a pool that trusts this CA only.
func (c *CA) Pool() *x509.CertPool { return Pool(c) }

// Pool returns a pool that trusts the given CAs.
func Pool(cas ...*CA) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range cas {
		p.AddCert(c.cert)
	}
	return p
}

// Issue returns a server (and client) certificate for dnsNames signed by the CA, with a fresh ECDSA
// P-256 key in PKCS#8 form. Names that parse as IP addresses go into the IP SANs. The first name is
// also the common name.
func (c *CA) Issue(t testing.TB, dnsNames ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testkit: CA %s: generate key: %v", c.Name, err)
	}
	return c.issue(t, key, &key.PublicKey, dnsNames)
}

// IssueRSA is Issue with an RSA key of the given size: 1024 bits makes a certificate that Go and
// haroute accept and that OpenSSL 3 at its default security level refuses ("ee key too small").
func (c *CA) IssueRSA(t testing.TB, bits int, dnsNames ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatalf("testkit: CA %s: generate a %d-bit RSA key: %v", c.Name, bits, err)
	}
	return c.issue(t, key, &key.PublicKey, dnsNames)
}

// issue signs a leaf certificate for dnsNames over pub and returns it with key (PKCS#8), both PEM.
func (c *CA) issue(t testing.TB, key crypto.Signer, pub crypto.PublicKey, dnsNames []string) (certPEM, keyPEM []byte) {
	t.Helper()
	if len(dnsNames) == 0 {
		t.Fatalf("testkit: CA %s: Issue needs at least one name", c.Name)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		NotBefore:    now.Add(-certBackdate),
		NotAfter:     now.Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range dnsNames {
		if ip, err := netip.ParseAddr(n); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip.AsSlice())
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, pub, c.key)
	if err != nil {
		t.Fatalf("testkit: CA %s: issue %v: %v", c.Name, dnsNames, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("testkit: CA %s: marshal key: %v", c.Name, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}

// IssueBundle returns certificate and key concatenated in one PEM, the form HAProxy reads from a
// crt file (e.g. render.Options.DefaultCertificatePEM).
func (c *CA) IssueBundle(t testing.TB, dnsNames ...string) []byte {
	t.Helper()
	certPEM, keyPEM := c.Issue(t, dnsNames...)
	return append(certPEM, keyPEM...)
}

// KeyPair parses a PEM certificate and key into a tls.Certificate.
func KeyPair(t testing.TB, certPEM, keyPEM []byte) tls.Certificate {
	t.Helper()
	kp, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("testkit: key pair: %v", err)
	}
	return kp
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatalf("testkit: serial number: %v", err)
	}
	return n.Add(n, big.NewInt(1))
}

// LargeCABundle returns c's certificate after enough other CA certificates to make a bundle of at
// least size bytes, as a tenant pastes a public CA bundle into destinationCACertificate. c comes last,
// so a server verified against the bundle only works when all of it arrived.
func (c *CA) LargeCABundle(t testing.TB, size int) []byte {
	t.Helper()
	var b []byte
	for i := 0; len(b)+len(c.pem) < size; i++ {
		b = append(b, NewCA(t, fmt.Sprintf("%s filler %03d", c.Name, i)).pem...)
	}
	return append(b, c.pem...)
}
