// Package socket talks to HAProxy's CLI: the admin (stats) socket of the worker and the master CLI.
// Every command helper checks the reply against what HAProxy answers on success — HAProxy 2.6 answers
// an unknown or malformed command with help text, and most successful changes with an empty line — and
// returns a typed error otherwise. It imports no Kubernetes code.
//
// It is haroute's own small client rather than client-native's runtime package: client-native v6
// reports HAProxy 2.6's help text (the answer to an unknown or malformed command) as success, while
// this package compares every reply with the exact answer HAProxy gives on success (the strings are
// in replies.go, the same on 2.6, 3.0, 3.2 and 3.4) and maps the known refusals to ErrNotFound,
// ErrExists, ErrBusy and ErrUnsupported. What changes with the version is in Capabilities, derived
// from the version HAProxy reports (DetectCapabilities, ProcState.Version), never from reply text.
//
// Framing. A Runner is either an *Admin (one connection per command, non-interactive mode: HAProxy
// closes the connection after the reply) or a *Session (one connection in interactive "prompt" mode,
// where a reply ends at the "\n> " prompt). Both return the same reply text: HAProxy's answer without
// the empty line that ends it, so "" is the empty success answer of most changes. A command line is
// refused before anything is sent when it holds "\n", "\r" or ";" (HAProxy would run a second
// command); a payload is refused when it holds an empty or whitespace-only line (HAProxy would end the
// payload there and run the rest as commands). The typed helpers also escape backslashes and refuse
// arguments with whitespace, so that every argument reaches HAProxy as the one word it was meant to be.
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
	// ErrUnsupported: HAProxy cannot do this at runtime at all (e.g. 2.6 cannot delete the crt-list
	// entry of a certificate whose path contains ':'); only a reload gets there.
	ErrUnsupported = errors.New("not possible at runtime")
	// ErrInvalid: the command, argument or payload was refused before anything was sent (it would
	// have been split into other commands or arguments by HAProxy's parser).
	ErrInvalid = errors.New("invalid command")
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
	// Retry bounds reconnect attempts when the socket is unavailable; default 5 s total. A negative
	// value disables retries (one attempt).
	RetryFor time.Duration
}

// Defaults of Options.
const (
	DefaultTimeout  = 5 * time.Second
	DefaultRetryFor = 5 * time.Second
)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RetryFor == 0 {
		o.RetryFor = DefaultRetryFor
	}
	if o.RetryFor < 0 {
		o.RetryFor = 0
	}
	return o
}
