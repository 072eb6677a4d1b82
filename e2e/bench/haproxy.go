//go:build e2e

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// The benchmark's HAProxy: one binary for both routers. The stock template uses bind options of
// HAProxy 2.8 (no-alpn), which Debian bookworm's 2.6 rejects; OpenShift's router image ships 3.2.
const (
	benchHAProxySeries = "3.2"
	minMajor, minMinor = 2, 8
	versionTimeout     = 10 * time.Second
)

var haproxyVersion = regexp.MustCompile(`HAProxy version (\d+)\.(\d+)`)

// HAProxy returns the HAProxy binary both routers run: $HAROUTE_HAPROXY, or else the repository's
// bin/haproxy-3.2 (`make haproxy-versions`). It fails the test when that binary is missing or older
// than 2.8.
func HAProxy(t testing.TB) string {
	t.Helper()
	path := os.Getenv(testkit.HAProxyEnv)
	if path == "" {
		abs, err := filepath.Abs(filepath.Join("..", "..", "bin", "haproxy-"+benchHAProxySeries))
		if err != nil {
			t.Fatalf("bench HAProxy: %v", err)
		}
		path = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-v").Output()
	if err != nil {
		t.Fatalf("bench HAProxy %s: %v (the stock router's template needs HAProxy %d.%d or newer: "+
			"run `make haproxy-versions` for bin/haproxy-%s, or set %s)", path, err, minMajor, minMinor, benchHAProxySeries, testkit.HAProxyEnv)
	}
	m := haproxyVersion.FindSubmatch(out)
	if m == nil {
		t.Fatalf("bench HAProxy %s: no version in `-v`: %q", path, out)
	}
	major, _ := strconv.Atoi(string(m[1])) // the pattern's digits always parse
	minor, _ := strconv.Atoi(string(m[2]))
	if major < minMajor || (major == minMajor && minor < minMinor) {
		t.Fatalf("bench HAProxy %s is %d.%d: the stock router's template needs %d.%d or newer (%s=bin/haproxy-%s)",
			path, major, minor, minMajor, minMinor, testkit.HAProxyEnv, benchHAProxySeries)
	}
	return path
}

// haproxyLabel returns "major.minor" of the HAProxy at path, for the figures ("?" when unknown).
func haproxyLabel(path string) string {
	out, err := exec.Command(path, "-v").Output()
	if m := haproxyVersion.FindSubmatch(out); err == nil && m != nil {
		return fmt.Sprintf("%s.%s", m[1], m[2])
	}
	return "?"
}
