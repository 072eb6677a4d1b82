package faults

import (
	"os"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
)

// Bounds of the suite. Every wait is bounded by one of these; none of them is asserted as a timing.
const (
	readyTimeout = 30 * time.Second
	applyTimeout = 15 * time.Second
	pollEvery    = 5 * time.Millisecond
	procRetryFor = 10 * time.Second
	socketTime   = 2 * time.Second
	// stopTimeout bounds haroute's stop after SIGTERM: its supervisor's soft stop of a managed
	// HAProxy (10 s), then SIGTERM (5 s) and SIGKILL (5 s), with a margin.
	stopTimeout = 25 * time.Second
	// logTail is how much of haroute's output a failed test logs.
	logTail = 16 << 10
)

// binary is the haroute binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testbed.RunWithHaroute(m, "e2e/faults", &binary))
}
