package parity

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Files of the package's testdata, relative to the package directory.
const (
	RecordingFile = "testdata/stock-answers.json"
	KnownFile     = "testdata/known-differences.yaml"
)

// OutEnv names the directory the reports are written to (make parity sets bin/parity).
const OutEnv = "HAROUTE_PARITY_OUT"

// RouterFiles are the files both routers' settings name, written for a run.
type RouterFiles struct {
	// DefaultCert holds the default certificate and key; DestCA the default destination CA.
	DefaultCert, DestCA string
}

// WriteRouterFiles writes the PKI's default certificate and backend CA into dir.
func WriteRouterFiles(dir string, pki *PKI) (RouterFiles, error) {
	f := RouterFiles{DefaultCert: filepath.Join(dir, "default.pem"), DestCA: filepath.Join(dir, "destination-ca.pem")}
	if err := os.WriteFile(f.DefaultCert, pki.Default, 0o600); err != nil {
		return RouterFiles{}, fmt.Errorf("router files: %w", err)
	}
	if err := os.WriteFile(f.DestCA, pki.BackendCA.PEM(), 0o644); err != nil {
		return RouterFiles{}, fmt.Errorf("router files: %w", err)
	}
	return f, nil
}

// RouterEnv is the environment both routers run with: the ingress operator's kind of settings where
// the corpus needs them (a domain for spec.subdomain, wildcard Routes admitted, a default certificate
// and a default destination CA) and a connection limit the test machine's file limit allows.
func RouterEnv(f RouterFiles) []string {
	return []string{
		"ROUTER_DOMAIN=apps.parity.test",
		"ROUTER_ALLOW_WILDCARD_ROUTES=true",
		"DEFAULT_CERTIFICATE_PATH=" + f.DefaultCert,
		"DEFAULT_DESTINATION_CA_PATH=" + f.DestCA,
		"ROUTER_MAX_CONNECTIONS=2000",
	}
}

// HAProxyVersion returns the first line of `binary -v` and the version it names.
func HAProxyVersion(binary string) (string, Version, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "-v").Output()
	if err != nil {
		return "", Version{}, fmt.Errorf("%s -v: %w", binary, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	v, err := ParseVersion(line)
	return strings.TrimSpace(line), v, err
}
