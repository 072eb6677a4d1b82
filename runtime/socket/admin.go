package socket

import (
	"context"
	"fmt"
	"io"
	"syscall"
)

// Admin is a client of a worker's admin (stats) socket.
type Admin struct {
	path string
	opts Options
}

// NewAdmin returns a client of the admin socket at path.
func NewAdmin(path string, opts Options) *Admin { return &Admin{path: path, opts: opts} }

// Path returns the admin socket's path.
func (a *Admin) Path() string { return a.path }

// Command implements Runner with one connection per command: it dials (retrying while the socket is
// unavailable, see Options.RetryFor), writes the command, reads the reply to EOF (HAProxy closes a
// non-interactive connection after one reply) and returns it without its trailing empty line.
// A command holding "\n", "\r" or ";" is refused with ErrInvalid before anything is sent. A
// connection closed or reset without any reply (what HAProxy does with a payload over
// tune.bufsize) is a *CommandError wrapping ErrUnexpectedReply; every other error wraps
// ErrUnavailable.
func (a *Admin) Command(ctx context.Context, cmd string) (string, error) {
	if err := checkCommand(cmd); err != nil {
		return "", err
	}
	return a.exchange(ctx, cmd, cmd+"\n")
}

// Payload implements Runner: it sends "cmd <<", the payload (a final "\n" is added when missing) and
// the empty line that ends it. A payload with an empty or whitespace-only line is refused with
// ErrInvalid before anything is sent.
func (a *Admin) Payload(ctx context.Context, cmd, payload string) (string, error) {
	msg, _, err := payloadMessage(cmd, payload)
	if err != nil {
		return "", err
	}
	return a.exchange(ctx, cmd+" <<", msg)
}

// exchange runs one non-interactive exchange on a new connection.
func (a *Admin) exchange(ctx context.Context, cmd, msg string) (string, error) {
	if isDump(cmd) {
		release, err := lockFile(ctx, a.path, syscall.LOCK_SH)
		if err != nil {
			return "", fmt.Errorf("admin socket %q: %w", cmd, err)
		}
		defer release()
	}
	o := a.opts.withDefaults()
	conn, err := dialRetry(ctx, a.path, o)
	if err != nil {
		return "", fmt.Errorf("admin socket %q: %w", cmd, err)
	}
	defer conn.Close()
	stop := watch(ctx, conn)
	defer stop()
	if err := conn.SetDeadline(deadline(ctx, o.Timeout)); err != nil {
		return "", ioError(ctx, "admin socket", cmd, err)
	}
	if _, err := io.WriteString(conn, msg); err != nil {
		return "", ioError(ctx, "admin socket", cmd, err)
	}
	raw, err := readAll(conn)
	if err != nil {
		return "", ioError(ctx, "admin socket", cmd, err)
	}
	if raw == "" {
		return "", noReply(cmd, io.EOF)
	}
	return normalize(raw), nil
}
