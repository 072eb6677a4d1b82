package oracle

import (
	"sync"
	"testing"
)

// Scope is a testing.TB whose cleanups run when Close is called rather than at the end of the test:
// the oracle starts HAProxy B (and its directory and client) for one step and stops it at the end of
// that step, through e2e/testbed helpers that release what they start with t.Cleanup. Everything
// else (Fatal, Log, Failed...) is the test's own. Cleanups still pending when the test ends (a step
// that failed) run then.
type Scope struct {
	testing.TB
	mu  sync.Mutex
	fns []func()
}

// NewScope returns a scope of t.
func NewScope(t testing.TB) *Scope {
	s := &Scope{TB: t}
	t.Cleanup(s.Close)
	return s
}

// Cleanup registers f to run at Close (last registered, first run).
func (s *Scope) Cleanup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fns = append(s.fns, f)
}

// Close runs the pending cleanups; it may be called more than once.
func (s *Scope) Close() {
	s.mu.Lock()
	fns := s.fns
	s.fns = nil
	s.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
