package main

import (
	"bytes"
	"log/slog"
	"testing"
)

// cliResult is what one in-process run of the command printed and returned.
type cliResult struct {
	stdout, stderr string
	err            error
}

// runCLI runs haroute in-process with the given environment and arguments.
func runCLI(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	return runCLIWith(t, func(k string) string { return env[k] }, args...)
}

// runCLIWith is runCLI with getenv as the environment.
func runCLIWith(t *testing.T, getenv func(string) string, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{
		stdout: &stdout,
		stderr: &stderr,
		getenv: getenv,
		log:    slog.New(slog.NewTextHandler(&stderr, nil)),
	}
	root := newRootCommand(a)
	root.SetArgs(args)
	err := root.Execute()
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
}
