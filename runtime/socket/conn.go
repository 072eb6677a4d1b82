package socket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Bounds of the connection layer.
const (
	// retryFirst and retryMax are the first and the largest wait between two dial attempts.
	retryFirst = 10 * time.Millisecond
	retryMax   = 500 * time.Millisecond
	// maxAttempts bounds the dial loop in count as well as in time.
	maxAttempts = 1000
	// maxReply bounds the memory one reply may take (`show map` of 100k entries is ~6 MB).
	maxReply = 256 << 20
)

// dialRetry connects to the unix socket at path. While the socket is unavailable in a way a
// restarting HAProxy causes (no socket file, nobody listening, backlog full) it retries with
// exponential waits (cenkalti/backoff: 10 ms doubling up to 500 ms, jittered) for at most o.RetryFor
// in total, at most maxAttempts times, and while ctx lasts. Every error wraps ErrUnavailable.
func dialRetry(ctx context.Context, path string, o Options) (net.Conn, error) {
	start := time.Now()
	eb := backoff.NewExponentialBackOff()
	eb.InitialInterval, eb.MaxInterval, eb.Multiplier = retryFirst, retryMax, 2
	eb.MaxElapsedTime = max(o.RetryFor, 0) // set explicitly: the library's default gives up after 15 min
	var (
		d       net.Dialer
		conn    net.Conn
		attempt int
		lastErr error
	)
	err := backoff.Retry(func() error {
		attempt++
		dctx, cancel := context.WithTimeout(ctx, o.Timeout)
		c, err := d.DialContext(dctx, "unix", path)
		cancel()
		switch {
		case err == nil:
			conn = c
			return nil
		case ctx.Err() != nil || !transient(err) || o.RetryFor <= 0:
			return backoff.Permanent(err)
		}
		lastErr = err
		return err
	}, backoff.WithContext(backoff.WithMaxRetries(eb, maxAttempts-1), ctx))
	if err == nil {
		return conn, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("dial %s: %w: %w", path, ErrUnavailable, ctx.Err())
	}
	if lastErr != nil && errors.Is(err, lastErr) {
		return nil, fmt.Errorf("dial %s: %w after %d attempts in %v: %w", path, ErrUnavailable, attempt,
			time.Since(start).Round(time.Millisecond), err)
	}
	return nil, fmt.Errorf("dial %s: %w: %w", path, ErrUnavailable, err)
}

// transient reports whether a dial error is one a restarting HAProxy causes.
func transient(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EAGAIN)
}

// deadline is the earlier of now+timeout and ctx's deadline.
func deadline(ctx context.Context, timeout time.Duration) time.Time {
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// watch makes conn's pending I/O fail as soon as ctx is cancelled; call the returned stop when done.
func watch(ctx context.Context, conn net.Conn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
}

// ioError wraps an error of an established connection: HAProxy resetting the connection (what it
// does when a payload overflows tune.bufsize while it is still being written) is a *CommandError
// wrapping ErrUnexpectedReply, like a connection closed without a reply; anything else (timeout,
// cancellation) wraps ErrUnavailable.
func ioError(ctx context.Context, what, cmd string, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	} else if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return noReply(cmd, err)
	}
	return fmt.Errorf("%s %q: %w: %w", what, cmd, ErrUnavailable, err)
}

// noReply is the error of a command HAProxy answered by closing the connection.
func noReply(cmd string, err error) error {
	return &CommandError{Command: cmd, Err: fmt.Errorf("%w: connection closed without a reply: %w", ErrUnexpectedReply, err)}
}

// checkCommand refuses a command line HAProxy would not read as exactly one command: one with a line
// break, NUL or unescaped ';' (each ends the command there), one that ends with a lone backslash (it
// escapes the line feed that ends the line, and HAProxy would read the next command as part of this
// one), and one holding the payload marker "<<" (HAProxy would wait for a payload). A ';' escaped as
// "\;" is a character of its word.
func checkCommand(cmd string) error {
	if strings.TrimSpace(cmd) == "" {
		return fmt.Errorf("command %q: %w: empty", cmd, ErrInvalid)
	}
	if i := strings.IndexAny(cmd, "\n\r\x00"); i >= 0 {
		return fmt.Errorf("command %q: %w: %q would end the command early", cmd, ErrInvalid, cmd[i])
	}
	if strings.Contains(cmd, payloadMarker) {
		return fmt.Errorf("command %q: %w: %q would open a payload", cmd, ErrInvalid, payloadMarker)
	}
	for i := 0; i < len(cmd); i++ {
		switch cmd[i] {
		case '\\':
			if i++; i == len(cmd) {
				return fmt.Errorf("command %q: %w: a trailing backslash would continue the command on the next line", cmd, ErrInvalid)
			}
		case ';':
			return fmt.Errorf("command %q: %w: an unescaped ';' would end the command early", cmd, ErrInvalid)
		}
	}
	return nil
}

// payloadMarker opens a payload on HAProxy's CLI: 2.6 takes a line that ends with it, 3.0+ a line
// whose last word starts with it.
const payloadMarker = "<<"

// payloadMessage checks cmd and payload and returns what is written for them: "cmd <<", the payload
// lines and the empty line that ends them.
func payloadMessage(cmd, payload string) (msg string, lines int, err error) {
	if err := checkCommand(cmd); err != nil {
		return "", 0, err
	}
	if !strings.HasSuffix(payload, "\n") {
		payload += "\n"
	}
	body := strings.TrimSuffix(payload, "\n")
	for i, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "" {
			return "", 0, fmt.Errorf("command %q: %w: payload line %d is empty and would end the payload early", cmd, ErrInvalid, i+1)
		}
		if strings.ContainsAny(line, "\r\x00") {
			return "", 0, fmt.Errorf("command %q: %w: payload line %d holds a control character", cmd, ErrInvalid, i+1)
		}
		lines++
	}
	return cmd + " <<\n" + payload + "\n", lines, nil
}

// normalize removes the empty line that ends a reply: "X\n\n" becomes "X\n" and "\n" becomes "".
// Replies HAProxy does not end with an empty line (`del server`: "Server deleted.\n") stay as they are.
func normalize(raw string) string {
	if raw == "\n" {
		return ""
	}
	if strings.HasSuffix(raw, "\n\n") {
		return raw[:len(raw)-1]
	}
	return raw
}

// readAll reads r to EOF, at most maxReply bytes.
func readAll(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxReply+1))
	if err != nil {
		return string(b), err
	}
	if len(b) > maxReply {
		return "", fmt.Errorf("reply larger than %d bytes", maxReply)
	}
	return string(b), nil
}
