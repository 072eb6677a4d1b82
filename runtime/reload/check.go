package reload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/haroute/haroute/mapping/render"
)

// maxCheckOutput bounds the part of HAProxy's output an error keeps.
const maxCheckOutput = 64 << 10

// checkWaitDelay bounds how long Check waits for HAProxy's output after the process was killed.
const checkWaitDelay = 2 * time.Second

// CheckError is a configuration HAProxy refused: `haproxy -c` exited non-zero or died by a signal
// (2.6 can crash on some malformed log-format strings). It wraps ErrInvalidConfig.
type CheckError struct {
	// Config is the checked haproxy.cfg (the backend files beside it were checked with it).
	Config string
	// Output is what HAProxy printed (at most 64 KiB).
	Output string
	// Status describes how the check ended ("exit status 1", "killed by signal segmentation fault").
	Status string
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("%v: haproxy -c %s: %s\n%s", ErrInvalidConfig, strings.Join(render.ConfigArgs(filepath.Dir(filepath.Dir(e.Config))), " "), e.Status, e.Output)
}

// Unwrap returns ErrInvalidConfig.
func (e *CheckError) Unwrap() error { return ErrInvalidConfig }

// Check runs `<bin> -c` on the configuration of the HAProxy directory dir (render.ConfigArgs),
// bounded by ctx. A refused configuration gives a *CheckError (wrapping ErrInvalidConfig) with
// HAProxy's output; a binary that cannot be run or a check cut short by ctx gives another error.
func Check(ctx context.Context, bin, dir string) error {
	args := render.ConfigArgs(dir)
	cfgPath := args[1]
	cmd := exec.CommandContext(ctx, bin, append([]string{"-c"}, args...)...)
	cmd.Dir = filepath.Dir(cfgPath)
	out := &boundedBuffer{limit: maxCheckOutput}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = checkWaitDelay
	err := cmd.Run()
	if err == nil {
		return nil
	}
	what := "haproxy -c " + strings.Join(args, " ")
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return fmt.Errorf("%s: %w", what, err)
	}
	status := exitErr.String()
	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		status = "killed by signal " + ws.Signal().String()
	}
	return &CheckError{Config: cfgPath, Output: out.String(), Status: status}
}

// boundedBuffer is a goroutine-safe writer that keeps the first limit bytes written to it.
type boundedBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.limit - b.buf.Len(); room < n {
		b.truncated = true
		p = p[:max(room, 0)]
	}
	b.buf.Write(p)
	return n, nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.truncated {
		return b.buf.String() + "\n[output truncated]"
	}
	return b.buf.String()
}
