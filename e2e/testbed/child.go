package testbed

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Bounds of a LogBuffer: the start of a child's output and its end are what explain a failure.
const (
	logHead = 256 << 10
	logTail = 256 << 10
)

// LogBuffer is a goroutine-safe buffer for a child process's output that keeps its first and its
// last 256 KiB and counts what it drops in between (a test dumps it on failure; an unbounded buffer
// could grow without limit).
type LogBuffer struct {
	mu      sync.Mutex
	head    bytes.Buffer
	tail    []byte
	dropped int
	// carry is the end of the output so far, so that a marker split across two writes is seen; keys
	// is set once PEM private key armour went by (kept or dropped).
	carry []byte
	keys  bool
}

// keyArmour is what every PEM private key carries ("-----BEGIN [RSA |EC ]PRIVATE KEY-----").
var keyArmour = []byte("PRIVATE KEY-----")

// SawKeyMaterial reports whether the output ever held a PEM private key, whatever the bounds kept.
func (b *LogBuffer) SawKeyMaterial() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keys
}

// Write keeps what the bounds allow and always reports success, so the child never blocks.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.keys {
		seen := append(b.carry, p...)
		b.keys = bytes.Contains(seen, keyArmour)
		b.carry = append(b.carry[:0], seen[max(len(seen)-len(keyArmour), 0):]...)
	}
	n := len(p)
	if room := logHead - b.head.Len(); room > 0 {
		k := min(len(p), room)
		b.head.Write(p[:k])
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - logTail; over > 0 {
		b.dropped += over
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

// String returns the head, a line saying how much was dropped (if anything), and the tail.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return b.head.String() + string(b.tail)
	}
	return fmt.Sprintf("%s\n[%d bytes of output dropped]\n%s", b.head.String(), b.dropped, b.tail)
}

// HarouteEnv names the environment variable that makes the suites run a given haroute binary
// instead of building the working tree's (to compare two versions on the same scenario).
const HarouteEnv = "HAROUTE_BINARY"

// BuildHaroute builds the haroute binary into a new temporary directory, for a TestMain; remove
// deletes the directory. Suites that run `haroute run` as a child process share it. With
// $HAROUTE_BINARY set, that binary is used as it is.
func BuildHaroute() (path string, remove func(), err error) {
	if p := os.Getenv(HarouteEnv); p != "" {
		return p, func() {}, nil
	}
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

// RunWithHaroute is the body of a TestMain whose tests run the haroute binary: it builds it
// (BuildHaroute), stores its path in *binary, runs the tests and removes the build. It returns the
// exit code; pkg names the package in an error.
func RunWithHaroute(m *testing.M, pkg string, binary *string) int {
	path, remove, err := BuildHaroute()
	if err != nil {
		fmt.Fprintln(os.Stderr, pkg+":", err)
		return 1
	}
	defer remove()
	*binary = path
	return m.Run()
}
