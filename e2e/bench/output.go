//go:build e2e

package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench/results"
)

// Where the tests write their results (package results) and how often they repeat a measurement.
const (
	// OutEnv names the results directory; a relative path is taken from the module root.
	OutEnv = "HAROUTE_BENCH_OUT"
	// DefaultOut is the results directory under the module root when OutEnv is unset.
	DefaultOut = "bin/bench"
	// RepeatsEnv is how many times each measurement is repeated.
	RepeatsEnv     = "HAROUTE_BENCH_REPEATS"
	DefaultRepeats = 3
	// commandTimeout bounds `git describe` and `haproxy -v`.
	commandTimeout = 10 * time.Second
	// maxParents bounds the walk up to go.mod.
	maxParents = 16
)

// OutDir returns the results directory: $HAROUTE_BENCH_OUT, or bin/bench under the module root.
func OutDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(OutEnv)
	if dir == "" {
		dir = DefaultOut
	}
	if filepath.IsAbs(dir) {
		return dir
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("results directory: %v", err)
	}
	return filepath.Join(root, dir)
}

// Repeats returns $HAROUTE_BENCH_REPEATS (a positive integer), or 3.
func Repeats(t testing.TB) int {
	t.Helper()
	v := os.Getenv(RepeatsEnv)
	if v == "" {
		return DefaultRepeats
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", RepeatsEnv, v)
	}
	return n
}

// NewHeader describes a results file: this machine, the HAProxy at haproxy (the first line of
// `haproxy -v`), the tree measured (`git describe --always --dirty`, "unknown" outside a work tree),
// the command and when the test started; Elapsed is left for the caller.
func NewHeader(haproxy, command string, started time.Time) results.Header {
	return results.Header{
		Machine: results.ThisMachine(),
		HAProxy: firstLineOf(haproxy, "-v"),
		Commit:  gitDescribe(),
		Command: command,
		Started: started.UTC(),
	}
}

// WriteResults stores v as name in the results directory and logs where.
func WriteResults(t testing.TB, name string, v any) {
	t.Helper()
	dir := OutDir(t)
	if err := results.Write(dir, name, v); err != nil {
		t.Fatalf("write results: %v", err)
	}
	t.Logf("results written to %s", filepath.Join(dir, name))
}

// moduleRoot returns the nearest directory above the working directory that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for range maxParents {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("module root: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("module root: no go.mod above the working directory")
}

// gitDescribe names the tree of the module root, or "unknown".
func gitDescribe() string {
	root, err := moduleRoot()
	if err != nil {
		return "unknown"
	}
	if s := firstLineOf("git", "-C", root, "describe", "--always", "--dirty"); s != "" {
		return s
	}
	return "unknown"
}

// firstLineOf runs a command (bounded) and returns the first line of its output ("" on failure).
func firstLineOf(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}
