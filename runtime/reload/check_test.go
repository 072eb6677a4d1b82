package reload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
)

// haproxyBinary is the HAProxy the integration tests run ($HAROUTE_HAPROXY, or Debian's).
var haproxyBinary = testkit.HAProxyBinary()

// writeConfig writes an HAProxy directory whose haproxy.cfg is text (and whose backend directory is
// empty) and returns it.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(layout.For(dir).BackendsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(layout.For(dir).Config(), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const validConfig = `global
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 5s
frontend f
  bind 127.0.0.1:65000
  default_backend b
backend b
  server s 127.0.0.1:1
`

func TestCheckRealHAProxy(t *testing.T) {
	ctx := context.Background()
	if err := Check(ctx, haproxyBinary, writeConfig(t, validConfig)); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	bad := writeConfig(t, validConfig+"  no_such_keyword 1\n")
	err := Check(ctx, haproxyBinary, bad)
	var ce *CheckError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("error %v, want a *CheckError wrapping ErrInvalidConfig", err)
	}
	if !strings.Contains(ce.Output, "no_such_keyword") || ce.Config != layout.For(bad).Config() || ce.Status != "exit status 1" {
		t.Errorf("check error %+v lacks HAProxy's output, the file or the status", ce)
	}
}

func TestCheckSignalIsFailure(t *testing.T) {
	err := Check(context.Background(), fakeHAProxy(t), writeConfig(t, "SEGV\n"))
	var ce *CheckError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("error %v, want a *CheckError", err)
	}
	if !strings.Contains(ce.Status, "signal") || !strings.Contains(ce.Status, "segmentation") {
		t.Errorf("status %q does not name SIGSEGV", ce.Status)
	}
}

func TestCheckBoundedByContext(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "slow")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := Check(ctx, bin, writeConfig(t, validConfig))
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrInvalidConfig) {
		t.Errorf("error %v, want the context's deadline and not ErrInvalidConfig", err)
	}
}

func TestCheckMissingBinary(t *testing.T) {
	err := Check(context.Background(), filepath.Join(t.TempDir(), "nope"), writeConfig(t, validConfig))
	if err == nil || errors.Is(err, ErrInvalidConfig) {
		t.Errorf("error %v, want a start error that is not ErrInvalidConfig", err)
	}
}

func TestBoundedBuffer(t *testing.T) {
	b := &boundedBuffer{limit: 4}
	for _, s := range []string{"ab", "cde", "f"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := b.String(); got != "abcd\n[output truncated]" {
		t.Errorf("buffer %q", got)
	}
}
