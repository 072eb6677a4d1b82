package socket

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestDumpsWaitForDeletions: while the deletion lock is held, dumps of backends and servers wait
// (here until their context ends) and other commands go through; once it is released, dumps go
// through too.
func TestDumpsWaitForDeletions(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "admin.sock") // nothing listens: a command that goes through fails to dial
	a := NewAdmin(sock, Options{RetryFor: -1, Timeout: time.Second})
	unlock, err := LockDeletions(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := a.Command(ctx, "show servers state"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a dump during a deletion: %v, want it to wait until its context ends", err)
	}
	if _, err := a.Command(context.Background(), "show info"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("another command during a deletion: %v, want it sent (and the dial to fail)", err)
	}
	unlock()
	if _, err := a.Command(context.Background(), "show stat"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a dump after the deletion: %v, want it sent (and the dial to fail)", err)
	}
	for cmd, want := range map[string]bool{"show servers state": true, "show servers state be_x": true, "show backend": true,
		"show stat": true, "show servers conn be_x": true, "show info": false, "show stats": false, "show map": false} {
		if isDump(cmd) != want {
			t.Errorf("isDump(%q) = %v", cmd, !want)
		}
	}
}
