package main

import (
	"bytes"
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
)

// TestFitCurves asks the test HAProxy about the operator's default groups: a TLS library without
// ML-KEM (OpenSSL before 3.5, HAProxy 2.6 on Debian bookworm) loses that group with a warning, one
// with it keeps the list; a list of unknown groups only is an error; without a binary the list stays.
func TestFitCurves(t *testing.T) {
	bin := testkit.HAProxyBinary()
	out, err := exec.Command(bin, "-vv").CombinedOutput()
	if err != nil {
		t.Fatalf("%s -vv: %v", bin, err)
	}
	mlkem := !strings.Contains(string(out), "OpenSSL 3.0") && !strings.Contains(string(out), "OpenSSL 3.1") &&
		!strings.Contains(string(out), "OpenSSL 3.2") && !strings.Contains(string(out), "OpenSSL 3.3") && !strings.Contains(string(out), "OpenSSL 3.4")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()
	const operator = "X25519MLKEM768:X25519:secp256r1:secp384r1"
	got, err := fitCurves(ctx, log, bin, operator)
	if err != nil {
		t.Fatal(err)
	}
	want := operator
	if !mlkem {
		want = "X25519:secp256r1:secp384r1"
	}
	if got != want {
		t.Errorf("fitted %q, want %q (HAProxy says: %s)", got, want, firstLine(string(out)))
	}
	if (got != operator) != strings.Contains(logs.String(), "dropped=X25519MLKEM768") {
		t.Errorf("the warning does not match what was dropped:\n%s", logs.String())
	}
	if _, err := fitCurves(ctx, log, bin, "bogus1:bogus2"); err == nil || !strings.Contains(err.Error(), "ROUTER_CURVES") {
		t.Errorf("unknown groups only: error %v, want one naming ROUTER_CURVES", err)
	}
	if got, err := fitCurves(ctx, log, "", "bogus"); err != nil || got != "bogus" {
		t.Errorf("without a binary: %q, %v; want the list as it is", got, err)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
