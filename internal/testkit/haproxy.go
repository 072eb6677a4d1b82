package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds of an HAProxy's life cycle.
const (
	haproxyStartTimeout = 10 * time.Second      // until the admin and master sockets answer
	haproxyStartPoll    = 20 * time.Millisecond // how often they are asked
	haproxyStopTimeout  = 5 * time.Second       // SIGTERM → exit, before SIGKILL
	socketIOTime        = 5 * time.Second       // one CLI exchange
	haproxyCheckTimeout = 60 * time.Second      // haproxy -c
	maxSocketLen        = 107                   // sun_path on Linux, minus the terminating NUL
	haproxyDirPerm      = os.FileMode(0o755)    // the directories made before the start
)

// HAProxyPaths say where an HAProxy started by RunHAProxy finds its configuration and sockets. The
// kit knows no layout: the caller names every path (e2e/testbed takes them from mapping/layout).
type HAProxyPaths struct {
	// Dir is the working directory (the HAProxy directory).
	Dir string
	// ConfigArgs are the arguments that name the configuration ("-f", a file or a folder HAProxy
	// reads in name order, ...); ConfigPath is the main configuration file among them.
	ConfigArgs []string
	ConfigPath string
	// AdminSocket is the worker's stats socket the configuration binds; MasterSocket the master CLI
	// (-S), both answering before RunHAProxy returns.
	AdminSocket, MasterSocket string
	// OtherSockets are further unix sockets the configuration binds, checked against the path limit.
	OtherSockets []string
	// Dirs are made (with their parents) before the start: the sockets' folder, a configuration folder.
	Dirs []string
}

// HAProxy is one running HAProxy master-worker process started by RunHAProxy.
type HAProxy struct {
	// Dir is the HAProxy directory; ConfigPath the first configuration it loads.
	Dir        string
	ConfigPath string
	// AdminSocket is the worker's runtime API socket; MasterSocket the master CLI socket.
	AdminSocket  string
	MasterSocket string
	// PID is the master process id.
	PID int

	configArgs []string
	cmd        *exec.Cmd
	output     *LogBuffer
	exited     chan struct{} // closed when the master has been reaped
	err        error         // Wait's result, valid once exited is closed
	// reported is set when the output is already in the test log.
	reported bool
}

// RunHAProxy runs `haproxy -W -db -S MasterSocket ConfigArgs...` (the production shape) in Dir and
// waits until the worker's admin socket answers `show info` and the master socket `show proc`. The
// process is owned by PID (its own process group, killed with the test binary), stopped on cleanup
// (SIGTERM, then SIGKILL of its group after a bound), and its output is logged when the test failed.
func RunHAProxy(t testing.TB, p HAProxyPaths) *HAProxy {
	t.Helper()
	if len(p.ConfigArgs) == 0 || p.ConfigPath == "" {
		t.Fatal("testkit: RunHAProxy without a configuration")
	}
	h := &HAProxy{
		Dir: p.Dir, ConfigPath: p.ConfigPath, AdminSocket: p.AdminSocket, MasterSocket: p.MasterSocket,
		configArgs: slices.Clone(p.ConfigArgs), output: &LogBuffer{}, exited: make(chan struct{}),
	}
	for _, s := range append([]string{p.AdminSocket, p.MasterSocket}, p.OtherSockets...) {
		if len(s) > maxSocketLen {
			t.Fatalf("testkit: socket path %q is %d bytes, over the %d-byte limit of unix sockets: use a shorter directory (testkit.TempDir)", s, len(s), maxSocketLen)
		}
	}
	for _, d := range p.Dirs {
		if err := os.MkdirAll(d, haproxyDirPerm); err != nil {
			t.Fatalf("testkit: %v", err)
		}
	}
	h.cmd = exec.Command(HAProxyBinary(), append([]string{"-W", "-db", "-S", p.MasterSocket}, p.ConfigArgs...)...)
	h.cmd.Dir = p.Dir
	h.cmd.Stdout = h.output
	h.cmd.Stderr = h.output
	// Own process group (so leftover workers can be reached through it) and die with the test binary.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("testkit: start %s: %v", HAProxyBinary(), err)
	}
	h.PID = h.cmd.Process.Pid
	go func() {
		h.err = h.cmd.Wait()
		close(h.exited)
	}()
	t.Cleanup(func() {
		if err := h.stop(); err != nil {
			t.Errorf("testkit: stop haproxy (pid %d): %v", h.PID, err)
		}
		if t.Failed() && !h.reported {
			t.Logf("haproxy (pid %d) output:\n%s", h.PID, h.output.String())
		}
	})
	if err := h.waitReady(); err != nil {
		h.reported = true
		t.Fatalf("testkit: haproxy (pid %d) did not become ready: %v\nhaproxy output:\n%s", h.PID, err, h.output.String())
	}
	return h
}

// waitReady polls until the worker's admin socket answers show info and the master's socket answers
// show proc (the master starts listening on it a moment after the worker is up), the process exits
// or time runs out.
func (h *HAProxy) waitReady() error {
	deadline := time.Now().Add(haproxyStartTimeout)
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
		time.Sleep(haproxyStartPoll)
	}
	return fmt.Errorf("not answering after %v: %w", haproxyStartTimeout, last)
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
// to haproxyStopTimeout, then SIGKILLs the process group the master leads.
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
	case <-time.After(haproxyStopTimeout):
	}
	// The master has not been reaped, so the group id (its PID) is still this HAProxy's.
	_ = syscall.Kill(-h.PID, syscall.SIGKILL)
	select {
	case <-h.exited:
		return fmt.Errorf("did not exit within %v of SIGTERM; killed", haproxyStopTimeout)
	case <-time.After(haproxyStopTimeout):
		return fmt.Errorf("still running %v after SIGKILL", haproxyStopTimeout)
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

// Check runs `haproxy -c` on the configuration the process was started with.
func (h *HAProxy) Check() error {
	ctx, cancel := context.WithTimeout(context.Background(), haproxyCheckTimeout)
	defer cancel()
	args := append([]string{"-c"}, h.configArgs...)
	cmd := exec.CommandContext(ctx, HAProxyBinary(), args...)
	cmd.Dir = h.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("haproxy %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
