package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"slices"
	"time"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/sync/listener"
)

// defaultCertCommonName and defaultCertLifetime describe the generated default certificate.
const (
	defaultCertCommonName = "haroute default"
	defaultCertLifetime   = 10 * 365 * 24 * time.Hour
)

// keptDefaultCertificate returns the default certificate already in the HAProxy directory out, or
// generates a self-signed one when there is none, it does not parse, or it does not cover the
// router's domain (ROUTER_DOMAIN: OpenShift's router makes its own for *.<domain>). The render writes
// it back to the same file, so later renders into out reuse it and give identical files.
func (a *app) keptDefaultCertificate(out, domain string) ([]byte, error) {
	var names []string
	if domain != "" {
		names = []string{"*." + domain}
	}
	path := layout.For(out).DefaultCertificate()
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		pemData, perr := listener.KeyPair(data)
		if perr == nil && coversNames(pemData, names) {
			return pemData, nil
		}
		if perr == nil {
			perr = fmt.Errorf("it does not name %v", names)
		}
		a.log.Warn("replacing the kept default certificate", "file", path, "err", perr)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("default certificate: %w", err)
	}
	pemData, err := selfSignedCertificate(defaultCertCommonName, names, time.Now())
	if err != nil {
		return nil, fmt.Errorf("generating the default certificate: %w", err)
	}
	a.log.Info("generated a self-signed default certificate", "file", path, "cn", defaultCertCommonName, "dns", names)
	return pemData, nil
}

// coversNames reports whether the leaf of a PEM bundle has exactly these DNS names.
func coversNames(pemData []byte, names []string) bool {
	b, _ := pem.Decode(pemData)
	if b == nil {
		return false
	}
	c, err := x509.ParseCertificate(b.Bytes)
	return err == nil && slices.Equal(c.DNSNames, names)
}

// generateCertificate makes the self-signed default certificate, valid for ten years from now.
func generateCertificate(now time.Time) ([]byte, error) {
	return selfSignedCertificate(defaultCertCommonName, nil, now)
}

// selfSignedCertificate makes a self-signed ECDSA P-256 server certificate for commonName and
// dnsNames, valid for ten years from now, PEM-encoded as certificate then PKCS#8 key.
func selfSignedCertificate(commonName string, dnsNames []string, now time.Time) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		DNSNames:              dnsNames,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(defaultCertLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("key encoding: %w", err)
	}
	var buf bytes.Buffer
	for _, b := range []*pem.Block{{Type: "CERTIFICATE", Bytes: der}, {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := pem.Encode(&buf, b); err != nil {
			return nil, fmt.Errorf("PEM encoding: %w", err)
		}
	}
	return buf.Bytes(), nil
}
