package main

import (
	"bytes"
	"context"
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

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/sync/listener"
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
	got, err := listener.KeyPair(messy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, a) {
		t.Errorf("normalized PEM differs from the clean one:\n%s", got)
	}

	certA, _ := pem.Decode(a)
	_, restB := pem.Decode(b)
	mismatched := append(pem.EncodeToMemory(certA), restB...)
	if _, err := listener.KeyPair(mismatched); err == nil {
		t.Error("certificate with another certificate's key accepted")
	}
	if _, err := listener.KeyPair(pem.EncodeToMemory(certA)); err == nil {
		t.Error("certificate without key accepted")
	}
}

func TestKeptDefaultCertificate(t *testing.T) {
	a := &app{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	out := t.TempDir()
	first, err := a.keptDefaultCertificate(out, "")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing was written yet (render writes it): a second call generates another one.
	second, err := a.keptDefaultCertificate(out, "")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, second) {
		t.Error("two generated certificates are identical")
	}
	path := layout.For(out).DefaultCertificate()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, first, 0o600); err != nil {
		t.Fatal(err)
	}
	kept, err := a.keptDefaultCertificate(out, "")
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
	fresh, err := a.keptDefaultCertificate(out, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(fresh, fresh); err != nil {
		t.Errorf("replacement does not parse: %v", err)
	}
}

// TestDefaultCertificateFromSettings: DEFAULT_CERTIFICATE_PATH, DEFAULT_CERTIFICATE_DIR and
// DEFAULT_CERTIFICATE give the listener files' default certificate (the first set wins, as in
// OpenShift); a bad or missing file is a start-up error naming the variable and the file.
func TestDefaultCertificateFromSettings(t *testing.T) {
	dir := t.TempDir()
	good, err := generateCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, err := generateCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "c.pem")
	bad := filepath.Join(dir, "bad.pem")
	secret := filepath.Join(dir, "secret")
	block, rest := pem.Decode(other)
	for name, data := range map[string][]byte{p: good, bad: []byte("not a certificate"),
		filepath.Join(secret, "tls.crt"): pem.EncodeToMemory(block), filepath.Join(secret, "tls.key"): rest} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []byte
		err  string
	}{
		{"path", map[string]string{"DEFAULT_CERTIFICATE_PATH": p}, good, ""},
		{"dir", map[string]string{"DEFAULT_CERTIFICATE_DIR": secret}, other, ""},
		{"inline wins", map[string]string{"DEFAULT_CERTIFICATE": string(other), "DEFAULT_CERTIFICATE_PATH": p}, other, ""},
		{"path before dir", map[string]string{"DEFAULT_CERTIFICATE_PATH": p, "DEFAULT_CERTIFICATE_DIR": secret}, good, ""},
		{"bad", map[string]string{"DEFAULT_CERTIFICATE_PATH": bad}, nil, "DEFAULT_CERTIFICATE_PATH=" + bad},
		{"missing", map[string]string{"DEFAULT_CERTIFICATE_DIR": filepath.Join(dir, "nope")}, nil, "DEFAULT_CERTIFICATE_DIR=" + filepath.Join(dir, "nope")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{log: slog.New(slog.NewTextHandler(io.Discard, nil)), getenv: func(k string) string { return tc.env[k] }}
			l, err := a.listenerSettingsFromEnv("")
			if err != nil {
				t.Fatal(err)
			}
			w, err := a.listenerWatcher(context.Background(), renderSettings{listener: l}, t.TempDir())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Files().DefaultCertificate; got != string(tc.want) {
				t.Errorf("default certificate:\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestKeptDefaultCertificateNamesTheDomain: with ROUTER_DOMAIN the self-signed certificate names
// *.<domain>, as OpenShift's does, and a kept one that does not is replaced.
func TestKeptDefaultCertificateNamesTheDomain(t *testing.T) {
	a := &app{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	out := t.TempDir()
	plain, err := a.keptDefaultCertificate(out, "")
	if err != nil {
		t.Fatal(err)
	}
	path := layout.For(out).DefaultCertificate()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, plain, 0o600); err != nil {
		t.Fatal(err)
	}
	named, err := a.keptDefaultCertificate(out, "apps.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(named, plain) || !coversNames(named, []string{"*.apps.example.com"}) {
		t.Error("the kept certificate without the domain was not replaced by one for *.apps.example.com")
	}
}
