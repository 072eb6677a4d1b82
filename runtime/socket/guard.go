package socket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/haroute/haroute/mapping/layout"
)

// The deletion guard keeps HAProxy's dumps of backends and servers away from backend deletions:
// HAProxy 3.4 before its July 2026 fixes could crash when `show servers state`, `show servers
// conn`, `show backend` or `show stat` walked a backend that `del backend` was removing. Whoever
// deletes backends holds the lock file next to the admin socket exclusively (LockDeletions); every
// Admin takes it shared around those dumps, whichever process it runs in (`haroute run`, `haroute
// state`), since both reach the socket through the same directory.
// deletionLockWait bounds how long a dump waits for a deletion to end.
const deletionLockWait = 5 * time.Second

// ErrDeletionInProgress is returned for a dump that waited deletionLockWait for backend deletions
// to end.
var ErrDeletionInProgress = errors.New("backends are being deleted: try again")

// dumpCommands are the commands that walk backends or servers.
var dumpCommands = []string{"show servers state", "show servers conn", "show backend", "show stat"}

// isDump reports whether cmd walks backends or servers.
func isDump(cmd string) bool {
	for _, d := range dumpCommands {
		if cmd == d || strings.HasPrefix(cmd, d+" ") {
			return true
		}
	}
	return false
}

// LockDeletions takes the deletion lock of the admin socket at socketPath exclusively, waiting for
// running dumps; the caller deletes backends, then calls release. Without a lock file that can be
// created (a read-only directory) there is nothing to take, and release does nothing.
func LockDeletions(ctx context.Context, socketPath string) (release func(), err error) {
	return lockFile(ctx, socketPath, syscall.LOCK_EX)
}

// lockFile takes the deletion lock of socketPath with how (LOCK_EX or LOCK_SH), polling until ctx
// ends or deletionLockWait passes.
func lockFile(ctx context.Context, socketPath string, how int) (func(), error) {
	path := filepath.Join(filepath.Dir(socketPath), layout.DeletionLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if f, err = os.Open(path); err != nil {
			return func() {}, nil
		}
	}
	deadline := time.Now().Add(deletionLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return func() {}, nil // a file system without locks: nothing to take
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("%s: %w", path, ErrDeletionInProgress)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
