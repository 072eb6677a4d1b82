package clientca

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewValidates(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no bundle":     {Dir: "/x"},
		"no dir":        {CABundle: "/b.pem"},
		"negative poll": {CABundle: "/b.pem", Dir: "/x", PollInterval: -time.Second},
		"overwrite":     {CABundle: "/x/ca-bundle.pem", Dir: "/x/"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	if _, err := New(Config{CABundle: "/b.pem", Dir: "/x"}); err != nil {
		t.Fatal(err)
	}
}

func TestSyncCAWithoutDistributionPoint(t *testing.T) {
	ca := newCA(t, "root without CDP", nil)
	f := newFixture(t, []byte("# comment\n\n"), ca.pem(), []byte("\n"))
	files, err := f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if files.HaveCRLs || !files.CAChanged || files.CRLChanged || len(files.Uncovered) != 0 {
		t.Fatalf("files %+v", files)
	}
	got, err := os.ReadFile(files.CABundle)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, ca.pem()) {
		t.Fatalf("ca-bundle.pem is %q, want the certificate alone", got)
	}
	if _, err := os.Stat(files.CRL); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("crls.pem written without distribution point: %v", err)
	}
}

func TestSyncCAWithDistributionPoint(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	leaf := newCert(t, "client", ca, false)
	der := ca.crl(t, 1, t0.Add(-time.Minute), t0.Add(time.Hour), leaf.cert.SerialNumber)
	srv.set("/root.crl", pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})) // PEM is accepted as DER is
	f := newFixture(t, ca.pem())
	files, err := f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !files.HaveCRLs || !files.CAChanged || !files.CRLChanged || len(files.Uncovered) != 0 {
		t.Fatalf("files %+v", files)
	}
	crls := readCRLs(t, files.CRL)
	if len(crls) != 1 || !bytes.Equal(crls[0].Raw, der) {
		t.Fatalf("crls.pem holds %d CRLs, want the one served", len(crls))
	}
	if len(crls[0].RevokedCertificateEntries) != 1 {
		t.Fatalf("revoked entries %d", len(crls[0].RevokedCertificateEntries))
	}
}

// TestSyncRootAndIntermediate has each CA name the CRL it signs: both CRLs are written.
func TestSyncRootAndIntermediate(t *testing.T) {
	srv := newCRLServer(t)
	root := newCA(t, "root", nil, srv.url("/root.crl"))
	inter := newCA(t, "intermediate", root, srv.url("/intermediate.crl"))
	srv.set("/root.crl", root.crl(t, 1, t0, t0.Add(time.Hour)))
	srv.set("/intermediate.crl", inter.crl(t, 1, t0, t0.Add(2*time.Hour)))
	f := newFixture(t, inter.pem(), root.pem())
	files, err := f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	crls := readCRLs(t, files.CRL)
	if len(crls) != 2 || !issuedBy(crls[0], inter) || !issuedBy(crls[1], root) {
		t.Fatalf("crls.pem: %d CRLs, want the intermediate's then the root's", len(crls))
	}
	if len(files.Uncovered) != 0 {
		t.Fatalf("uncovered %v", files.Uncovered)
	}
	if f.m.due != t0.Add(54*time.Minute) {
		t.Fatalf("next download due at %s, want a tenth of the root CRL's hour before its nextUpdate", f.m.due)
	}
}

// TestSyncIssuerCRLLayout has the intermediate name its issuer's CRL: the intermediate's own CRL is
// unknown, and reported, until a certificate it issued names it.
func TestSyncIssuerCRLLayout(t *testing.T) {
	srv := newCRLServer(t)
	root := newCA(t, "root", nil)
	inter := newCA(t, "intermediate", root, srv.url("/root.crl"))
	srv.set("/root.crl", root.crl(t, 1, t0, t0.Add(time.Hour)))
	srv.set("/intermediate.crl", inter.crl(t, 1, t0, t0.Add(time.Hour)))
	f := newFixture(t, inter.pem(), root.pem())
	files, err := f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if crls := readCRLs(t, files.CRL); len(crls) != 1 || !issuedBy(crls[0], root) {
		t.Fatalf("crls.pem: %d CRLs, want the root's", len(crls))
	}
	if !slices.Equal(files.Uncovered, []string{inter.cert.Subject.String()}) {
		t.Fatalf("uncovered %v, want the intermediate", files.Uncovered)
	}
	if !strings.Contains(f.log.String(), "CAs without a CRL") {
		t.Fatalf("no warning about the intermediate:\n%s", f.log)
	}

	leaf := newCert(t, "client", inter, false, srv.url("/intermediate.crl"))
	writeFile(t, f.bundle, slices.Concat(leaf.pem(), inter.pem(), root.pem()))
	files, err = f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if crls := readCRLs(t, files.CRL); len(crls) != 2 || !issuedBy(crls[0], inter) || !issuedBy(crls[1], root) {
		t.Fatalf("crls.pem: %d CRLs, want the intermediate's then the root's", len(crls))
	}
	if len(files.Uncovered) != 0 || !files.CAChanged || !files.CRLChanged {
		t.Fatalf("files %+v", files)
	}
}

func TestFirstSyncDownloadFailure(t *testing.T) {
	srv := newCRLServer(t)
	gone := newCRLServer(t)
	gone.Close()
	for name, u := range map[string]string{
		"404":     srv.url("/missing.crl"),
		"refused": gone.url("/root.crl"),
		"ldap":    "ldap://ldap.example.com/cn=root?certificateRevocationList",
	} {
		t.Run(name, func(t *testing.T) {
			ca := newCA(t, "root "+name, nil, u)
			f := newFixture(t, ca.pem())
			files, err := f.m.Sync(context.Background())
			if !errors.Is(err, ErrCRLUnavailable) {
				t.Fatalf("error %v, want ErrCRLUnavailable", err)
			}
			var ce *CRLError
			if !errors.As(err, &ce) || ce.Subject != ca.cert.Subject.String() || !slices.Equal(ce.URLs, []string{u}) {
				t.Fatalf("error %#v", ce)
			}
			if msg := err.Error(); !strings.Contains(msg, "root "+name) || !strings.Contains(msg, u) {
				t.Fatalf("error %q does not name the CA and the URL", msg)
			}
			if !files.HaveCRLs || !files.CAChanged || !files.CRLChanged {
				t.Fatalf("files %+v: the bundle and a placeholder must be written", files)
			}
			crls := readCRLs(t, files.CRL)
			if len(crls) != 1 || issuedBy(crls[0], ca) || !crls[0].NextUpdate.Before(t0) {
				t.Fatalf("crls.pem must hold only the expired placeholder, not a CRL of the CA")
			}
			if !slices.Equal(files.Uncovered, []string{ca.cert.Subject.String()}) {
				t.Fatalf("uncovered %v", files.Uncovered)
			}
		})
	}
}

// TestSyncPartialFailure writes the CRLs that came and reports only the CA whose CRL did not.
func TestSyncPartialFailure(t *testing.T) {
	srv := newCRLServer(t)
	good := newCA(t, "good root", nil, srv.url("/good.crl"))
	bad := newCA(t, "bad root", nil, srv.url("/bad.crl"))
	srv.set("/good.crl", good.crl(t, 1, t0, t0.Add(time.Hour)))
	srv.fail("/bad.crl", http.StatusInternalServerError)
	f := newFixture(t, good.pem(), bad.pem())
	files, err := f.m.Sync(context.Background())
	var ce *CRLError
	if !errors.As(err, &ce) || ce.Subject != bad.cert.Subject.String() || strings.Contains(err.Error(), "good root") {
		t.Fatalf("error %v, want one for the bad root only", err)
	}
	if crls := readCRLs(t, files.CRL); len(crls) != 1 || !issuedBy(crls[0], good) {
		t.Fatalf("crls.pem: %d CRLs, want the good root's", len(crls))
	}
	if !slices.Equal(files.Uncovered, []string{bad.cert.Subject.String()}) {
		t.Fatalf("uncovered %v", files.Uncovered)
	}
}

func TestSyncRefusesExpiredOrForgedCRL(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/expired.crl"), srv.url("/forged.crl"))
	impostor := newCA(t, "root", nil) // same name, another key
	srv.set("/expired.crl", ca.crl(t, 1, t0.Add(-2*time.Hour), t0.Add(-time.Hour)))
	srv.set("/forged.crl", impostor.crl(t, 1, t0, t0.Add(time.Hour)))
	f := newFixture(t, ca.pem())
	_, err := f.m.Sync(context.Background())
	if !errors.Is(err, ErrCRLUnavailable) || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("error %v, want both distribution points refused", err)
	}

	srv.set("/forged.crl", ca.crl(t, 2, t0, t0.Add(time.Hour)))
	if _, err := f.m.Sync(context.Background()); !errors.Is(err, ErrCRLUnavailable) || srv.count("/forged.crl") != 1 {
		t.Fatalf("retried before the backoff ended: error %v, %d downloads", err, srv.count("/forged.crl"))
	}
	f.clock.advance(backoffBase)
	files, err := f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if crls := readCRLs(t, files.CRL); len(crls) != 1 || !issuedBy(crls[0], ca) || !files.CRLChanged || files.CAChanged {
		t.Fatalf("files %+v: want the second distribution point's CRL in place of the placeholder", files)
	}
}

func TestSyncUnchangedContentNotWritten(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	srv.set("/root.crl", ca.crl(t, 1, t0, t0.Add(time.Hour)))
	f := newFixture(t, ca.pem())
	files, err := f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	caBefore, crlBefore := stat(t, files.CABundle), stat(t, files.CRL)
	writeFile(t, f.bundle, ca.pem()) // same content, new file
	files, err = f.m.Sync(context.Background())
	if err != nil || files.CAChanged || files.CRLChanged {
		t.Fatalf("files %+v, error %v; want nothing changed", files, err)
	}
	if !os.SameFile(caBefore, stat(t, files.CABundle)) || !os.SameFile(crlBefore, stat(t, files.CRL)) {
		t.Fatal("a file was rewritten with the same content")
	}

	// A restart finds the bundle file in place and leaves it alone.
	m2, err := New(Config{CABundle: f.bundle, Dir: f.dir, Now: f.clock.Now, Log: f.m.log})
	if err != nil {
		t.Fatal(err)
	}
	files, err = m2.Sync(context.Background())
	if err != nil || files.CAChanged || files.CRLChanged || !os.SameFile(caBefore, stat(t, files.CABundle)) {
		t.Fatalf("after a restart: files %+v, error %v", files, err)
	}
}

func TestSyncGarbageBundle(t *testing.T) {
	ca := newCA(t, "root", nil)
	f := newFixture(t, ca.pem())
	if _, err := f.m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := stat(t, filepath.Join(f.dir, CABundleName))
	for name, content := range map[string][]byte{
		"not PEM":     []byte("this is no certificate\n"),
		"empty":       nil,
		"key only":    pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}),
		"bad DER":     slices.Concat(ca.pem(), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 1, 2}})),
		"no such one": nil,
	} {
		if name == "no such one" {
			if err := os.Remove(f.bundle); err != nil {
				t.Fatal(err)
			}
		} else {
			writeFile(t, f.bundle, content)
		}
		files, err := f.m.Sync(context.Background())
		if err == nil || errors.Is(err, ErrCRLUnavailable) || files.CAChanged {
			t.Fatalf("%s: files %+v, error %v", name, files, err)
		}
		if !strings.Contains(err.Error(), f.bundle) {
			t.Errorf("%s: error %q does not name the bundle", name, err)
		}
		if !os.SameFile(before, stat(t, filepath.Join(f.dir, CABundleName))) {
			t.Fatalf("%s: ca-bundle.pem replaced by a bad bundle", name)
		}
	}
}

func TestSyncFilesModeAndAtomic(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	srv.set("/root.crl", ca.crl(t, 1, t0, t0.Add(time.Hour)))
	f := newFixture(t, ca.pem())
	files, err := f.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if mode := stat(t, f.dir).Mode().Perm(); mode != 0o700 {
		t.Errorf("dir mode %o", mode)
	}
	for _, p := range []string{files.CABundle, files.CRL} {
		if mode := stat(t, p).Mode().Perm(); mode != 0o600 {
			t.Errorf("%s mode %o", p, mode)
		}
	}
	before := stat(t, files.CABundle)
	other := newCA(t, "second root", nil)
	writeFile(t, f.bundle, slices.Concat(ca.pem(), other.pem()))
	if files, err = f.m.Sync(context.Background()); err != nil || !files.CAChanged || files.CRLChanged {
		t.Fatalf("files %+v, error %v", files, err)
	}
	if os.SameFile(before, stat(t, files.CABundle)) {
		t.Fatal("ca-bundle.pem rewritten in place, not replaced by a rename")
	}
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("dir holds %v, want the two files only (no temporary file left)", entries)
	}
}

// TestDefaultClient downloads with the client New makes (loopback is never proxied).
func TestDefaultClient(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	srv.set("/root.crl", ca.crl(t, 1, t0, t0.Add(time.Hour)))
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.pem")
	writeFile(t, bundle, ca.pem())
	m, err := New(Config{CABundle: bundle, Dir: filepath.Join(dir, "out"), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
