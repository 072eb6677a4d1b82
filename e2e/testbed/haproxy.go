package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
)

// Bounds and modes of the harness's files and processes.
const (
	startTimeout = 10 * time.Second   // the first exchanges with a started HAProxy (StopDormantChecks)
	checkTimeout = 60 * time.Second   // haproxy -c
	runDirPerm   = os.FileMode(0o755) // DIR/run
)

// HAProxy is one running HAProxy master-worker process (see testkit.RunHAProxy), started on an
// HAProxy directory by Start or StartHAProxy.
type HAProxy = testkit.HAProxy

// Paths under an HAProxy directory.
func adminSocket(dir string) string  { return layout.For(dir).AdminSocket() }
func masterSocket(dir string) string { return layout.For(dir).MasterSocket() }

// WriteFiles writes rendered files under dir (testkit.WriteTree: added to what is there, parents
// made, paths kept inside dir) and makes dir/run for the sockets.
func WriteFiles(t testing.TB, dir string, files []render.File) {
	t.Helper()
	tree := make(map[string][]byte, len(files))
	for _, f := range files {
		tree[f.Path] = f.Data
	}
	testkit.WriteTree(t, dir, tree)
	if err := os.MkdirAll(layout.For(dir).RunDir(), runDirPerm); err != nil {
		t.Fatalf("testbed: %v", err)
	}
}

// StartHAProxy writes files into dir and starts HAProxy on dir/conf/haproxy.cfg; see Start.
func StartHAProxy(t testing.TB, dir string, files []render.File) *HAProxy {
	t.Helper()
	WriteFiles(t, dir, files)
	return Start(t, dir)
}

// Start runs HAProxy in the production shape on the HAProxy directory dir as mapping/layout lays it
// out: `haproxy -W -db -S DIR/run/master.sock -f DIR/conf/haproxy.cfg -f DIR/conf/backends`
// (render.ConfigArgs), and waits until the worker's admin socket (DIR/run/haproxy.sock, which the
// configuration must declare) and the master socket answer. It is stopped on cleanup (see
// testkit.RunHAProxy).
func Start(t testing.TB, dir string) *HAProxy {
	t.Helper()
	l := layout.For(dir)
	return testkit.RunHAProxy(t, testkit.HAProxyPaths{
		Dir: dir, ConfigArgs: render.ConfigArgs(dir), ConfigPath: l.Config(),
		AdminSocket: l.AdminSocket(), MasterSocket: l.MasterSocket(),
		OtherSockets: []string{l.NoSNISocket()}, Dirs: []string{l.RunDir(), l.BackendsDir()},
	})
}

// CheckConfig runs `haproxy -c -f cfgPath`, with `-f <dir>/backends` when cfgPath's directory has the
// backend directory of a rendered configuration (render.ConfigArgs), and returns an error carrying
// HAProxy's output when the configuration is refused.
func CheckConfig(cfgPath string) error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	args := []string{"-c", "-f", cfgPath}
	if backends := filepath.Join(filepath.Dir(cfgPath), filepath.Base(layout.BackendsDir)); isDir(backends) {
		args = append(args, "-f", backends)
	}
	cmd := exec.CommandContext(ctx, testkit.HAProxyBinary(), args...)
	cmd.Dir = filepath.Dir(cfgPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("haproxy %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// ReadConfig returns the configuration HAProxy loads from the HAProxy directory dir: haproxy.cfg and
// the backend files (reload.ReadConfiguration), failing the test when it cannot be read.
func ReadConfig(t testing.TB, dir string) string {
	t.Helper()
	b, err := reload.ReadConfiguration(dir)
	if err != nil {
		t.Fatalf("testbed: %v", err)
	}
	return string(b)
}
