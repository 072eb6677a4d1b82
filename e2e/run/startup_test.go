package run

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// TestStartFailureSaysWhy: HAProxy cannot start because its HTTP port is taken. haroute keeps
// retrying with a growing backoff, says why in one error line naming the cause and the fix (the
// attempts after it are quiet), and /healthz/ready answers 503 with the same cause.
func TestStartFailureSaysWhy(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	f := newFolder(t, map[string]string{"web.yaml": testkit.RouteYAML("web", "busy.e2e.test", "web")})
	stats := testkit.FreePort(t)
	cmd := exec.Command(binary, "run", "--manifests", f.Manifests, testbed.ManagedHAProxyFlag(), "--haproxy-dir", f.HAProxyDir,
		"--bind-address", "127.0.0.1", "--http-port", fmt.Sprint(busy.Addr().(*net.TCPAddr).Port),
		"--https-port", fmt.Sprint(testkit.FreePort(t)), "--stats-port", fmt.Sprint(stats))
	cmd.Env = append(os.Environ(), "ROUTER_MAX_CONNECTIONS=2000")
	var out testkit.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait() // stopped by the test: the exit status says nothing
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("haroute output:\n%s", out.String())
		}
	}()
	var body string
	err = testkit.Eventually(20*time.Second, 100*time.Millisecond, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz/ready", stats))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "already in use") {
			return fmt.Errorf("%d %s", resp.StatusCode, body)
		}
		if strings.Count(out.String(), "haproxy starting") < 3 {
			return fmt.Errorf("fewer than 3 attempts yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("readiness never named the busy port: %v", err)
	}
	if !strings.Contains(body, "fix:") {
		t.Errorf("readiness %q names no fix", body)
	}
	logs := out.String()
	if n := strings.Count(logs, `level=ERROR msg="haproxy did not start"`); n != 1 {
		t.Errorf("%d error lines for the failed starts, want 1", n)
	}
	if n := strings.Count(logs, "level=ERROR msg=\"haproxy output\""); n > 2 {
		t.Errorf("HAProxy's alerts logged as errors %d times, want those of the first attempt only", n)
	}
	if !strings.Contains(logs, "already in use") || !strings.Contains(logs, "fix=") {
		t.Errorf("the error line names no cause or fix")
	}
}
