package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

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
