package clientca

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// runner runs a Manager's Run and collects what it reports.
type runner struct {
	mu     sync.Mutex
	calls  []Files
	cancel context.CancelFunc
	done   chan struct{}
}

func startRun(t *testing.T, m *Manager) *runner {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		m.Run(ctx, func(f Files) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.calls = append(r.calls, f)
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return r
}

// reported returns the Files reported so far.
func (r *runner) reported() []Files {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// waitCalls waits, 5 s at most, until Run has reported n changes.
func (r *runner) waitCalls(t *testing.T, n int) []Files {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if calls := r.reported(); len(calls) >= n {
			return calls
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("Run reported %d changes within 5 s, want %d", len(r.reported()), n)
	return nil
}

// settle lets Run poll about 20 times and checks it reported n changes in all.
func (r *runner) settle(t *testing.T, n int) {
	t.Helper()
	time.Sleep(100 * time.Millisecond)
	if calls := r.reported(); len(calls) != n {
		t.Fatalf("Run reported %d changes, want %d: %+v", len(calls), n, calls)
	}
}

// configMapDir lays out a bundle as a ConfigMap volume does: the file is a symlink through ..data
// to a timestamped directory, and an update swaps ..data.
type configMapDir struct {
	root string
	n    int
}

func newConfigMapDir(t *testing.T, content []byte) *configMapDir {
	t.Helper()
	d := &configMapDir{root: t.TempDir()}
	d.swap(t, content)
	if err := os.Symlink(filepath.Join("..data", "ca-bundle.pem"), d.path()); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *configMapDir) path() string { return filepath.Join(d.root, "ca-bundle.pem") }

// swap publishes content in a new directory and points ..data at it atomically.
func (d *configMapDir) swap(t *testing.T, content []byte) {
	t.Helper()
	d.n++
	version := filepath.Join(d.root, "..2030_03_01_12_00_0"+string(rune('0'+d.n)))
	if err := os.Mkdir(version, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(version, "ca-bundle.pem"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(d.root, "..data_tmp")
	if err := os.Symlink(filepath.Base(version), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(d.root, "..data")); err != nil {
		t.Fatal(err)
	}
}

func TestRunDetectsConfigMapSwap(t *testing.T) {
	first := newCA(t, "first root", nil)
	second := newCA(t, "second root", nil)
	cm := newConfigMapDir(t, first.pem())
	f := newFixture(t, first.pem())
	m, err := New(Config{CABundle: cm.path(), Dir: f.dir, Log: f.m.log, Now: f.clock.Now, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := startRun(t, m)
	if calls := r.waitCalls(t, 1); !calls[0].CAChanged || calls[0].HaveCRLs {
		t.Fatalf("first sync reported %+v", calls[0])
	}

	cm.swap(t, slices.Concat(first.pem(), second.pem()))
	calls := r.waitCalls(t, 2)
	if !calls[1].CAChanged || calls[1].CRLChanged {
		t.Fatalf("after the swap: %+v", calls[1])
	}
	got, err := os.ReadFile(calls[1].CABundle)
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Concat(first.pem(), second.pem()); string(got) != string(want) {
		t.Fatal("ca-bundle.pem does not hold the new bundle")
	}
	r.settle(t, 2)
}

func TestRunUnchangedContentNoCallback(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	srv.set("/root.crl", ca.crl(t, 1, t0, t0.Add(time.Hour)))
	f := newFixture(t, ca.pem())
	if _, err := f.m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := stat(t, filepath.Join(f.dir, CABundleName))
	r := startRun(t, f.m)
	writeFile(t, f.bundle, ca.pem()) // same content, new inode and mtime
	r.settle(t, 0)
	if n := srv.count("/root.crl"); n != 1 {
		t.Fatalf("%d downloads, want 1", n)
	}
	if !os.SameFile(before, stat(t, filepath.Join(f.dir, CABundleName))) {
		t.Fatal("ca-bundle.pem rewritten")
	}
}

// TestRunRefreshesCRL has Run download a CRL again before its nextUpdate, going by the clock.
func TestRunRefreshesCRL(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	srv.set("/root.crl", ca.crl(t, 1, t0, t0.Add(time.Hour)))
	f := newFixture(t, ca.pem())
	r := startRun(t, f.m)
	r.waitCalls(t, 1)

	srv.fail("/root.crl", http.StatusInternalServerError)
	f.clock.advance(55 * time.Minute)
	waitHits(t, srv, "/root.crl", 2)
	r.settle(t, 1) // the failed refresh keeps the CRL: no change

	srv.set("/root.crl", ca.crl(t, 2, t0.Add(55*time.Minute), t0.Add(2*time.Hour)))
	f.clock.advance(backoffBase)
	if calls := r.waitCalls(t, 2); !calls[1].CRLChanged || calls[1].CAChanged {
		t.Fatalf("after the refresh: %+v", calls[1])
	}
	if n := srv.count("/root.crl"); n != 3 {
		t.Fatalf("%d downloads, want 3", n)
	}
}

// TestRunRetriesFirstFailure has Run retry a CRL that never came, after a backoff.
func TestRunRetriesFirstFailure(t *testing.T) {
	srv := newCRLServer(t)
	ca := newCA(t, "root", nil, srv.url("/root.crl"))
	srv.fail("/root.crl", http.StatusBadGateway)
	f := newFixture(t, ca.pem())
	r := startRun(t, f.m)
	if calls := r.waitCalls(t, 1); !calls[0].HaveCRLs || !calls[0].CRLChanged {
		t.Fatalf("first sync reported %+v, want the bundle and the placeholder", calls[0])
	}
	r.settle(t, 1)
	if n := srv.count("/root.crl"); n != 1 {
		t.Fatalf("%d downloads before the backoff ended, want 1", n)
	}

	f.clock.advance(backoffBase)
	waitHits(t, srv, "/root.crl", 2)
	r.settle(t, 1)

	srv.set("/root.crl", ca.crl(t, 1, t0, t0.Add(time.Hour)))
	f.clock.advance(backoff(2))
	if calls := r.waitCalls(t, 2); !calls[1].CRLChanged || len(calls[1].Uncovered) != 0 {
		t.Fatalf("after the retry: %+v", calls[1])
	}
	if crls := readCRLs(t, filepath.Join(f.dir, CRLName)); len(crls) != 1 || !issuedBy(crls[0], ca) {
		t.Fatal("crls.pem does not hold the CA's CRL")
	}
}

// waitHits waits, 5 s at most, until path got n requests.
func waitHits(t *testing.T, srv *crlServer, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if srv.count(path) >= n {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s got %d requests within 5 s, want %d", path, srv.count(path), n)
}

func TestBackoffBounded(t *testing.T) {
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		if got := backoff(i + 1); got != w {
			t.Errorf("backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
	if got := backoff(1000); got != backoffMax {
		t.Errorf("backoff(1000) = %s", got)
	}
}
