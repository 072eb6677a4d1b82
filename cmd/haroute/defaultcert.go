package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// defaultCertFile is where render writes the default certificate, relative to the HAProxy directory.
const defaultCertFile = "conf/default_pub_keys.pem"

// defaultCertCommonName and defaultCertLifetime describe the generated default certificate.
const (
	defaultCertCommonName = "haroute default"
	defaultCertLifetime   = 10 * 365 * 24 * time.Hour
)

// loadCertificate reads a PEM file holding a certificate (and chain) and its private key.
func loadCertificate(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("default certificate: %w", err)
	}
	out, err := normalizeKeyPair(data)
	if err != nil {
		return nil, fmt.Errorf("default certificate %s: %w", path, err)
	}
	return out, nil
}

// keptDefaultCertificate returns the default certificate already in the HAProxy directory out, or
// generates a self-signed one when there is none (or it does not parse). The render writes it back
// to the same file, so later renders into out reuse it and give identical files.
func (a *app) keptDefaultCertificate(out string) ([]byte, error) {
	path := filepath.Join(out, filepath.FromSlash(defaultCertFile))
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		pemData, perr := normalizeKeyPair(data)
		if perr == nil {
			return pemData, nil
		}
		a.log.Warn("replacing the default certificate that does not parse", "file", path, "err", perr)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("default certificate: %w", err)
	}
	pemData, err := generateCertificate(time.Now())
	if err != nil {
		return nil, fmt.Errorf("generating the default certificate: %w", err)
	}
	a.log.Info("generated a self-signed default certificate", "file", path, "cn", defaultCertCommonName)
	return pemData, nil
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

// normalizeKeyPair checks that data holds certificates and a private key that belongs to the first
// of them, and returns the certificate and key blocks re-encoded in their order: other blocks (such
// as EC PARAMETERS), text between blocks and blank lines, which would break HAProxy runtime payloads,
// are dropped.
func normalizeKeyPair(data []byte) ([]byte, error) {
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
