package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// curveCheckTimeout bounds one `haproxy -c` of the key-exchange groups.
const curveCheckTimeout = 10 * time.Second

// fitCurves returns the key-exchange groups of ROUTER_CURVES that the TLS library of the HAProxy
// binary knows. The ingress operator names X25519MLKEM768 by default, which OpenSSL learnt in 3.5:
// an HAProxy built with an older one (Debian bookworm's 2.6 has OpenSSL 3.0) refuses its whole
// configuration for it. With a binary to ask (a managed HAProxy, or --check-binary), the groups it
// refuses are left out with a warning that names them; none left is an error. Without a binary the
// list is kept as it is, and HAProxy's own check says what it refuses.
func fitCurves(ctx context.Context, log *slog.Logger, binary, curves string) (string, error) {
	if binary == "" || curves == "" {
		return curves, nil
	}
	if curvesAccepted(ctx, binary, curves) == nil {
		return curves, nil
	}
	var kept, dropped []string
	for _, g := range strings.Split(curves, ":") {
		if err := curvesAccepted(ctx, binary, g); err != nil {
			dropped = append(dropped, g)
			continue
		}
		kept = append(kept, g)
	}
	if len(kept) == 0 {
		return "", fmt.Errorf("ROUTER_CURVES=%q: %s knows none of these key-exchange groups", curves, binary)
	}
	log.Warn("ROUTER_CURVES names key-exchange groups this HAProxy's TLS library does not know; they are left out",
		"haproxy", binary, "dropped", strings.Join(dropped, ":"), "kept", strings.Join(kept, ":"))
	return strings.Join(kept, ":"), nil
}

// curvesAccepted runs `binary -c` on a minimal configuration that sets the groups curves, and returns
// its output as an error when HAProxy refuses it.
func curvesAccepted(ctx context.Context, binary, curves string) error {
	dir, err := os.MkdirTemp("", "haroute-curves-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cert, err := generateCertificate(time.Now())
	if err != nil {
		return err
	}
	certFile, cfgFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "haproxy.cfg")
	cfg := "global\n  ssl-default-bind-curves " + curves + "\ndefaults\n  mode http\n  timeout connect 1s\n" +
		"  timeout client 1s\n  timeout server 1s\nfrontend probe\n  bind unix@" + filepath.Join(dir, "probe.sock") +
		" ssl crt " + certFile + "\n"
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, curveCheckTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "-c", "-q", "-f", cfgFile).CombinedOutput()
	if err != nil {
		return errors.Join(err, errors.New(strings.TrimSpace(string(out))))
	}
	return nil
}
