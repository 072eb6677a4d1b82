package testbed

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// maxLogBuffer bounds what a LogBuffer keeps of a child process's output.
const maxLogBuffer = 1 << 20

// LogBuffer is a goroutine-safe buffer for a child process's output that keeps the first MiB and
// drops the rest (a test dumps it on failure; an unbounded buffer could grow without limit).
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps what fits and always reports success, so the child never blocks on its output.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := maxLogBuffer - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns what was kept so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// BuildHaroute builds the haroute binary into a new temporary directory, for a TestMain; remove
// deletes the directory. Suites that run `haroute run` as a child process share it.
func BuildHaroute() (path string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "haroute-e2e-bin-")
	if err != nil {
		return "", nil, fmt.Errorf("build haroute: %w", err)
	}
	remove = func() { _ = os.RemoveAll(dir) }
	path = filepath.Join(dir, "haroute")
	if out, err := exec.Command("go", "build", "-o", path, "github.com/haroute/haroute/cmd/haroute").CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("go build: %w\n%s", err, out)
	}
	return path, remove, nil
}
