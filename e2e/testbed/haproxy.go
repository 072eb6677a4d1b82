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
	runDirPerm   = os.FileMode(0o755) // DIR/run and the directories files go into
	filePerm     = os.FileMode(0o600) // rendered files (certificates include private keys)
)

// HAProxy is one running HAProxy master-worker process (see testkit.RunHAProxy), started on an
// HAProxy directory by Start or StartHAProxy.
type HAProxy = testkit.HAProxy

// Paths under an HAProxy directory.
func adminSocket(dir string) string  { return layout.For(dir).AdminSocket() }
func masterSocket(dir string) string { return layout.For(dir).MasterSocket() }

// WriteFiles writes rendered files under dir (creating dir/run and every parent directory). Paths must
// be relative and stay inside dir.
func WriteFiles(t testing.TB, dir string, files []render.File) {
	t.Helper()
	if err := writeFiles(dir, files); err != nil {
		t.Fatalf("testbed: %v", err)
	}
}

func writeFiles(dir string, files []render.File) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("write files: directory %q is not absolute", dir)
	}
	if err := os.MkdirAll(layout.For(dir).RunDir(), runDirPerm); err != nil {
		return fmt.Errorf("write files: %w", err)
	}
	for _, f := range files {
		if f.Path == "" || filepath.IsAbs(f.Path) || !filepath.IsLocal(f.Path) {
			return fmt.Errorf("write files: path %q is not a relative path inside the directory", f.Path)
		}
		p := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), runDirPerm); err != nil {
			return fmt.Errorf("write files: %w", err)
		}
		if err := os.WriteFile(p, f.Data, filePerm); err != nil {
			return fmt.Errorf("write files: %w", err)
		}
	}
	return nil
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
