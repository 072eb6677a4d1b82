package testkit

import (
	"bytes"
	"fmt"
	"sync"
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
