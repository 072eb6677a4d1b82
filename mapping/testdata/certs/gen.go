//go:build ignore

// gen writes the fixed test certificates of this folder. It was run once; the files are committed so
// that golden outputs stay byte-stable. Run it again (go run gen.go in this folder) only to replace
// them, and regenerate the goldens afterwards. Every certificate is valid until 2126.
package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"time"
)

var (
	notBefore = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	notAfter  = time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC)
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "haroute test CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writeCert("ca.crt", caDER); err != nil {
		return err
	}
	if err := writeKey("ca.key", "PRIVATE KEY", caKey, pkcs8); err != nil {
		return err
	}

	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := leaf("example", 2, []string{"example.com", "*.example.com", "*.apps.example.com", "localhost"}, rsaKey, ca, caKey); err != nil {
		return err
	}
	if err := writeKey("example.key", "RSA PRIVATE KEY", rsaKey, func(k crypto.Signer) ([]byte, error) {
		return x509.MarshalPKCS1PrivateKey(k.(*rsa.PrivateKey)), nil
	}); err != nil {
		return err
	}

	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := leaf("other", 3, []string{"other.example.org"}, otherKey, ca, caKey); err != nil {
		return err
	}
	if err := writeKey("other.key", "EC PRIVATE KEY", otherKey, func(k crypto.Signer) ([]byte, error) {
		return x509.MarshalECPrivateKey(k.(*ecdsa.PrivateKey))
	}); err != nil {
		return err
	}

	backendKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := leaf("backend", 4, []string{"*.demo.svc", "*.default.svc", "*.team-a.svc", "*.team-b.svc"}, backendKey, ca, caKey); err != nil {
		return err
	}
	return writeKey("backend.key", "PRIVATE KEY", backendKey, pkcs8)
}

func pkcs8(k crypto.Signer) ([]byte, error) { return x509.MarshalPKCS8PrivateKey(k) }

func leaf(name string, serial int64, dns []string, key crypto.Signer, ca *x509.Certificate, caKey crypto.Signer) error {
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: dns[0]},
		DNSNames:     dns,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	return writeCert(name+".crt", der)
}

func writeCert(file string, der []byte) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeKey(file, typ string, key crypto.Signer, marshal func(crypto.Signer) ([]byte, error)) error {
	der, err := marshal(key)
	if err != nil {
		return err
	}
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
