package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGenerateCertificate(t *testing.T) {
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	data, err := generateCertificate(now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(data, data)
	if err != nil {
		t.Fatalf("generated PEM does not parse: %v", err)
	}
	crt, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if crt.Subject.CommonName != "haroute default" {
		t.Errorf("CN = %q", crt.Subject.CommonName)
	}
	pub, ok := crt.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Errorf("public key %T is not ECDSA P-256", crt.PublicKey)
	}
	if got := crt.NotAfter.Sub(now); got < 9*365*24*time.Hour || got > 11*365*24*time.Hour {
		t.Errorf("lifetime %v, want about 10 years", got)
	}
	if err := crt.CheckSignature(crt.SignatureAlgorithm, crt.RawTBSCertificate, crt.Signature); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	if bytes.Contains(data, []byte("\n\n")) {
		t.Error("blank line in the generated PEM")
	}
}

func TestNormalizeKeyPair(t *testing.T) {
	a, err := generateCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, err := generateCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Comments, blank lines and an extra block are dropped; the result is stable.
	messy := append([]byte("subject=haroute default\n\n"), a...)
	messy = bytes.Replace(messy, []byte("-----END CERTIFICATE-----\n"), []byte("-----END CERTIFICATE-----\n\n"), 1)
	messy = append(messy, pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{6, 8, 42}})...)
	got, err := normalizeKeyPair(messy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, a) {
		t.Errorf("normalized PEM differs from the clean one:\n%s", got)
	}

	certA, _ := pem.Decode(a)
	_, restB := pem.Decode(b)
	mismatched := append(pem.EncodeToMemory(certA), restB...)
	if _, err := normalizeKeyPair(mismatched); err == nil {
		t.Error("certificate with another certificate's key accepted")
	}
	if _, err := normalizeKeyPair(pem.EncodeToMemory(certA)); err == nil {
		t.Error("certificate without key accepted")
	}
}

func TestKeptDefaultCertificate(t *testing.T) {
	a := &app{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	out := t.TempDir()
	first, err := a.keptDefaultCertificate(out)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing was written yet (render writes it): a second call generates another one.
	second, err := a.keptDefaultCertificate(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, second) {
		t.Error("two generated certificates are identical")
	}
	path := filepath.Join(out, "conf", "default_pub_keys.pem")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, first, 0o600); err != nil {
		t.Fatal(err)
	}
	kept, err := a.keptDefaultCertificate(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, first) {
		t.Error("existing default certificate not reused")
	}
	// A file that does not parse is replaced.
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh, err := a.keptDefaultCertificate(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(fresh, fresh); err != nil {
		t.Errorf("replacement does not parse: %v", err)
	}
}

func TestLoadCertificate(t *testing.T) {
	dir := t.TempDir()
	good, err := generateCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "c.pem")
	if err := os.WriteFile(p, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := loadCertificate(p); err != nil || !bytes.Equal(got, good) {
		t.Errorf("loadCertificate = %v", err)
	}
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCertificate(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad certificate: error = %v, want one naming %s", err, bad)
	}
	if _, err := loadCertificate(filepath.Join(dir, "missing.pem")); err == nil {
		t.Error("missing certificate accepted")
	}
}
