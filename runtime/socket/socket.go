// Package socket talks to HAProxy's CLI: the admin (stats) socket of the worker and the master CLI.
// Every command helper checks the reply against what HAProxy answers on success — HAProxy 2.6 answers
// an unknown or malformed command with help text, and most successful changes with an empty line — and
// returns a typed error otherwise. It imports no Kubernetes code.
package socket

import (
	"errors"
	"fmt"
	"time"
)

// Errors a caller may act on (test with errors.Is).
var (
	// ErrUnavailable: the socket could not be reached (HAProxy down or restarting).
	ErrUnavailable = errors.New("haproxy socket unavailable")
	// ErrNotFound: the backend, server, map key, certificate or CA file does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: the server or certificate already exists.
	ErrExists = errors.New("already exists")
	// ErrBusy: HAProxy refused for now (e.g. del server with connections attached); retry later.
	ErrBusy = errors.New("refused for now")
	// ErrUnexpectedReply: the reply is none of the known answers (help text, an error message).
	ErrUnexpectedReply = errors.New("unexpected reply")
)

// CommandError is a command HAProxy did not carry out, with its reply. It wraps one of the errors
// above.
type CommandError struct {
	Command string
	Reply   string
	Err     error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("haproxy %q: %v: %q", e.Command, e.Err, e.Reply)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Options tune a client; zero values take the defaults.
type Options struct {
	// Timeout bounds one command (dial, write, read); default 5 s.
	Timeout time.Duration
	// Retry bounds reconnect attempts when the socket is unavailable; default 5 s total.
	RetryFor time.Duration
}
