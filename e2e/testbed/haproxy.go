package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
)

// Bounds of the process life cycle.
const (
	startTimeout = 10 * time.Second      // until the admin and master sockets answer
	startPoll    = 20 * time.Millisecond // how often it is asked
	stopTimeout  = 5 * time.Second       // SIGTERM → exit, before SIGKILL
	socketIOTime = 5 * time.Second       // one CLI exchange
	checkTimeout = 60 * time.Second      // haproxy -c
	maxSocketLen = 107                   // sun_path on Linux, minus the terminating NUL
	runDirPerm   = os.FileMode(0o755)    // DIR/run and the directories files go into
	filePerm     = os.FileMode(0o600)    // rendered files (certificates include private keys)
)

// HAProxy is one running HAProxy master-worker process started by StartHAProxy.
type HAProxy struct {
	// Dir is the HAProxy directory (render.Options.Dir).
	Dir string
	// ConfigPath is Dir/conf/haproxy.cfg.
	ConfigPath string
	// AdminSocket is the worker's runtime API socket, Dir/run/haproxy.sock.
	AdminSocket string
	// MasterSocket is the master CLI socket, Dir/run/master.sock.
	MasterSocket string
	// PID is the master process id.
	PID int

	cmd    *exec.Cmd
	output *testkit.LogBuffer
	exited chan struct{} // closed when the master has been reaped
	err    error         // Wait's result, valid once exited is closed
	// reported is set when the output is already in the test log.
	reported bool
}

// Paths under an HAProxy directory.
func configPath(dir string) string   { return layout.For(dir).Config() }
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

// Start runs `haproxy -W -db -S DIR/run/master.sock -f DIR/conf/haproxy.cfg` (the production shape)
// and waits until the worker's admin socket (DIR/run/haproxy.sock, which the config must declare)
// answers `show info` and the master socket answers `show proc`. The process is stopped on cleanup; HAProxy's output is logged when the test
// failed.
func Start(t testing.TB, dir string) *HAProxy {
	t.Helper()
	h := &HAProxy{
		Dir:          dir,
		ConfigPath:   configPath(dir),
		AdminSocket:  adminSocket(dir),
		MasterSocket: masterSocket(dir),
		output:       &testkit.LogBuffer{},
		exited:       make(chan struct{}),
	}
	for _, s := range []string{h.AdminSocket, h.MasterSocket, layout.For(dir).NoSNISocket()} {
		if len(s) > maxSocketLen {
			t.Fatalf("testbed: socket path %q is %d bytes, over the %d-byte limit of unix sockets: use a shorter directory (testkit.TempDir)", s, len(s), maxSocketLen)
		}
	}
	for _, d := range []string{layout.For(dir).RunDir(), layout.For(dir).BackendsDir()} {
		if err := os.MkdirAll(d, runDirPerm); err != nil {
			t.Fatalf("testbed: %v", err)
		}
	}
	h.cmd = exec.Command(testkit.HAProxyBinary(), append([]string{"-W", "-db", "-S", h.MasterSocket}, render.ConfigArgs(dir)...)...)
	h.cmd.Dir = dir
	h.cmd.Stdout = h.output
	h.cmd.Stderr = h.output
	// Own process group (so leftover workers can be reached through it) and die with the test binary.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("testbed: start %s: %v", testkit.HAProxyBinary(), err)
	}
	h.PID = h.cmd.Process.Pid
	go func() {
		h.err = h.cmd.Wait()
		close(h.exited)
	}()
	t.Cleanup(func() {
		if err := h.stop(); err != nil {
			t.Errorf("testbed: stop haproxy (pid %d): %v", h.PID, err)
		}
		if t.Failed() && !h.reported {
			t.Logf("haproxy (pid %d) output:\n%s", h.PID, h.output.String())
		}
	})
	if err := h.waitReady(); err != nil {
		h.reported = true
		t.Fatalf("testbed: haproxy (pid %d) did not become ready: %v\nhaproxy output:\n%s", h.PID, err, h.output.String())
	}
	return h
}

// waitReady polls until the worker's admin socket answers show info and the master's socket answers
// show proc (the master starts listening on it a moment after the worker is up), the process exits
// or time runs out.
func (h *HAProxy) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-h.exited:
			return fmt.Errorf("process exited: %v", h.err)
		default:
		}
		if last = h.probe(); last == nil {
			return nil
		}
		time.Sleep(startPoll)
	}
	return fmt.Errorf("not answering after %v: %w", startTimeout, last)
}

func (h *HAProxy) probe() error {
	out, err := h.Cmd("show info")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "Pid:") {
		return fmt.Errorf("unexpected show info reply %q", firstLine(out))
	}
	out, err = h.MasterCmd("show proc")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "worker") {
		return fmt.Errorf("unexpected show proc reply %q", out)
	}
	return nil
}

// stop sends SIGTERM to the master (which stops its workers and exits once they are gone), waits up
// to stopTimeout, then SIGKILLs the process group the master leads.
func (h *HAProxy) stop() error {
	if h.Exited() {
		return nil
	}
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case <-h.exited:
		return nil
	case <-time.After(stopTimeout):
	}
	// The master has not been reaped, so the group id (its PID) is still this HAProxy's.
	_ = syscall.Kill(-h.PID, syscall.SIGKILL)
	select {
	case <-h.exited:
		return fmt.Errorf("did not exit within %v of SIGTERM; killed", stopTimeout)
	case <-time.After(stopTimeout):
		return fmt.Errorf("still running %v after SIGKILL", stopTimeout)
	}
}

// Exited reports whether the master process has exited.
func (h *HAProxy) Exited() bool {
	select {
	case <-h.exited:
		return true
	default:
		return false
	}
}

// Cmd sends one command to the worker's admin socket and returns the whole reply.
func (h *HAProxy) Cmd(cmd string) (string, error) {
	out, err := socketCmd(h.AdminSocket, cmd)
	if err != nil {
		return out, fmt.Errorf("admin socket %q: %w", cmd, err)
	}
	return out, nil
}

// MasterCmd sends one command to the master CLI (e.g. "show proc", "reload") and returns the reply.
// The 2.6 master keeps a non-interactive connection open after its reply, so a "quit" follows.
func (h *HAProxy) MasterCmd(cmd string) (string, error) {
	out, err := socketCmd(h.MasterSocket, strings.TrimSuffix(cmd, "\n")+"\nquit\n")
	if err != nil {
		return out, fmt.Errorf("master socket %q: %w", cmd, err)
	}
	return out, nil
}

// Check runs `haproxy -c` on cfgPath (the running config when cfgPath is empty).
func (h *HAProxy) Check(cfgPath string) error {
	if cfgPath == "" {
		cfgPath = h.ConfigPath
	}
	return CheckConfig(cfgPath)
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

// socketCmd runs one non-interactive CLI exchange: HAProxy closes the connection after the reply.
func socketCmd(path, cmd string) (string, error) {
	conn, err := net.DialTimeout("unix", path, socketIOTime)
	if err != nil {
		return "", fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(socketIOTime)); err != nil {
		return "", fmt.Errorf("set deadline: %w", err)
	}
	if !strings.HasSuffix(cmd, "\n") {
		cmd += "\n"
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("write: %w", err)
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		return string(out), fmt.Errorf("read: %w", err)
	}
	return string(out), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
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
