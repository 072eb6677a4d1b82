package listener

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// writeSecret writes a TLS Secret mount the way the kubelet does: the files live in a timestamped
// directory, ..data points at it and tls.crt, tls.key point through ..data; a new content is a new
// directory and an atomic swap of ..data.
func writeSecret(t *testing.T, dir, crt, key string, n int) {
	t.Helper()
	ts := filepath.Join(dir, "..2026_"+string(rune('a'+n)))
	if err := os.MkdirAll(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"tls.crt": crt, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(ts, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// waitChange waits for a change signal, at most 5 s.
func waitChange(t *testing.T, w *Watcher) {
	t.Helper()
	select {
	case <-w.Changes():
	case <-time.After(5 * time.Second):
		t.Fatal("no change signalled within 5 s")
	}
}

// TestDefaultCertificateSecretRotation: a rotated Secret mount is taken at the next poll and
// signalled; a bad content keeps the certificate in force; a good one is taken again.
func TestDefaultCertificateSecretRotation(t *testing.T) {
	ca := testkit.NewCA(t, "listener CA")
	dir := t.TempDir()
	c1, k1 := ca.Issue(t, "one.example.com")
	writeSecret(t, dir, string(c1), string(k1), 0)
	w, err := New(context.Background(), Config{DefaultCertificateDir: dir, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first := w.Files().DefaultCertificate
	if !strings.Contains(first, "BEGIN CERTIFICATE") || !strings.Contains(first, "PRIVATE KEY") {
		t.Fatalf("default certificate without certificate and key:\n%s", first)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	c2, k2 := ca.Issue(t, "two.example.com")
	writeSecret(t, dir, string(c2), string(k2), 1)
	waitChange(t, w)
	second := w.Files().DefaultCertificate
	if second == first || !strings.Contains(second, strings.TrimSpace(strings.Split(string(c2), "\n")[1])) {
		t.Fatal("the rotated Secret was not taken")
	}

	// A key that does not match: kept, no signal.
	writeSecret(t, dir, string(c1), string(k2), 2)
	time.Sleep(100 * time.Millisecond)
	if w.Files().DefaultCertificate != second {
		t.Fatal("a certificate with another key replaced the one in force")
	}
	select {
	case <-w.Changes():
		t.Fatal("a bad content was signalled")
	default:
	}
	writeSecret(t, dir, string(c1), string(k1), 3)
	waitChange(t, w)
	if w.Files().DefaultCertificate != first {
		t.Fatal("the good content after a bad one was not taken")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestClientCAAndExplicitCRL: the client CA bundle and an explicit CRL file are read, checked
// (blocks of the right type only) and watched.
func TestClientCAAndExplicitCRL(t *testing.T) {
	ca := testkit.NewCA(t, "clients")
	dir := t.TempDir()
	caFile, crlFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "crl.pem")
	if err := os.WriteFile(caFile, append([]byte("a comment\n\n"), ca.PEM()...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crlFile, ca.RevocationList(t, 1), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := New(context.Background(), Config{ClientCA: caFile, ClientCRL: crlFile, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f := w.Files()
	if f.ClientCA != string(ca.PEM()) || !strings.HasPrefix(f.ClientCRL, "-----BEGIN X509 CRL-----") {
		t.Fatalf("files: %+v", f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = w.Run(ctx) }()
	if err := os.WriteFile(crlFile, ca.RevocationList(t, 2), 0o600); err != nil {
		t.Fatal(err)
	}
	waitChange(t, w)
	if w.Files().ClientCRL == f.ClientCRL {
		t.Fatal("the new CRL was not taken")
	}
}

// TestStartErrorsNameTheVariable: a missing or malformed file is a start-up error that names the
// variable and the file.
func TestStartErrorsNameTheVariable(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{DefaultCertificatePath: junk}, "DEFAULT_CERTIFICATE_PATH=" + junk},
		{Config{DefaultCertificateDir: filepath.Join(dir, "none")}, "DEFAULT_CERTIFICATE_DIR="},
		{Config{DefaultCertificatePEM: []byte("junk")}, "DEFAULT_CERTIFICATE"},
		{Config{ClientCA: junk, ClientCRL: junk}, "ROUTER_MUTUAL_TLS_AUTH_CA=" + junk},
		{Config{ClientCA: filepath.Join(dir, "none.pem"), CRLDir: filepath.Join(dir, "crls")}, "ROUTER_MUTUAL_TLS_AUTH_CA="},
	} {
		if _, err := New(context.Background(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.cfg, err, tc.want)
		}
	}
}
