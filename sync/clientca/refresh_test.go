package clientca

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRefreshFailureKeepsCRL(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	first := ca.crl(t, 1, t0, t0.Add(time.Hour))
	srv.set("/root.crl", first)
	f := newFixture(t, ca.pem())
	if _, err := f.m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}

	srv.fail("/root.crl", http.StatusServiceUnavailable)
	f.clock.advance(55 * time.Minute) // within the 6 minutes before nextUpdate
	files, err := f.m.Sync(context.Background())
	if err != nil || files.CRLChanged || files.CAChanged {
		t.Fatalf("failed refresh: files %+v, error %v; want the CRL kept quietly", files, err)
	}
	if n := srv.count("/root.crl"); n != 2 {
		t.Fatalf("%d downloads, want 2", n)
	}
	if log := f.log.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "kept while valid") {
		t.Fatalf("no warning logged:\n%s", log)
	}
	if crls := readCRLs(t, files.CRL); len(crls) != 1 || !bytes.Equal(crls[0].Raw, first) {
		t.Fatal("the CRL held was not kept")
	}
	if _, err := f.m.Sync(context.Background()); err != nil || srv.count("/root.crl") != 2 {
		t.Fatalf("retried before the backoff ended: error %v, %d downloads", err, srv.count("/root.crl"))
	}

	f.clock.advance(6 * time.Minute) // past nextUpdate
	files, err = f.m.Sync(context.Background())
	if !errors.Is(err, ErrCRLUnavailable) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("error %v, want the expired CRL reported", err)
	}
	if crls := readCRLs(t, files.CRL); len(crls) != 1 || !bytes.Equal(crls[0].Raw, first) || files.CRLChanged {
		t.Fatal("the expired CRL must stay in place (HAProxy then rejects with CRL expired)")
	}
}

func TestRefreshBeforeNextUpdate(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	srv.set("/root.crl", ca.crl(t, 1, t0, t0.Add(time.Hour)))
	f := newFixture(t, ca.pem())
	if _, err := f.m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	next := ca.crl(t, 2, t0.Add(50*time.Minute), t0.Add(10*time.Hour))
	srv.set("/root.crl", next)

	f.clock.advance(53 * time.Minute)
	if files, err := f.m.Sync(context.Background()); err != nil || files.CRLChanged || srv.count("/root.crl") != 1 {
		t.Fatalf("downloaded before the margin: files %+v, error %v", files, err)
	}
	f.clock.advance(2 * time.Minute)
	files, err := f.m.Sync(context.Background())
	if err != nil || !files.CRLChanged || files.CAChanged {
		t.Fatalf("files %+v, error %v; want the new CRL", files, err)
	}
	if crls := readCRLs(t, files.CRL); len(crls) != 1 || !bytes.Equal(crls[0].Raw, next) {
		t.Fatal("crls.pem does not hold the new CRL")
	}
	// The new CRL is valid for hours: downloaded again after MaxAge (1 hour), before its margin.
	if want := t0.Add(55*time.Minute + time.Hour); f.m.due != want {
		t.Fatalf("next download at %s, want %s", f.m.due, want)
	}
}

// TestRefreshKeepsNewerCRL does not let a stale copy replace the CRL held.
func TestRefreshKeepsNewerCRL(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	held := ca.crl(t, 5, t0, t0.Add(10*time.Hour))
	srv.set("/root.crl", held)
	f := newFixture(t, ca.pem())
	if _, err := f.m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.set("/root.crl", ca.crl(t, 4, t0.Add(-time.Hour), t0.Add(9*time.Hour)))
	f.clock.advance(time.Hour)
	files, err := f.m.Sync(context.Background())
	if err != nil || files.CRLChanged || srv.count("/root.crl") != 2 {
		t.Fatalf("files %+v, error %v, %d downloads", files, err, srv.count("/root.crl"))
	}
	if !strings.Contains(f.log.String(), "not newer") {
		t.Fatalf("no warning about the older CRL:\n%s", f.log)
	}
	if crls := readCRLs(t, files.CRL); !bytes.Equal(crls[0].Raw, held) {
		t.Fatal("the older CRL replaced the newer one")
	}
}
