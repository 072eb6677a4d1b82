package socket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// prompt ends every reply in interactive mode; payloadPrompt is printed for every line HAProxy reads
// while it collects a payload.
const (
	prompt        = "\n> "
	payloadPrompt = "+ "
	// readChunk is the read size of a session.
	readChunk = 32 << 10
)

// Session is an interactive admin connection; not safe for concurrent use.
//
// HAProxy closes an idle CLI connection after `stats timeout` (2 minutes in haroute's configuration),
// and a session whose exchange failed cannot tell where the next reply starts: after any error the
// session is broken and every later command fails with ErrUnavailable. Open a new one.
type Session struct {
	conn   net.Conn
	path   string
	opts   Options
	buf    []byte // the reply being read
	chunk  []byte // read buffer
	broken error
}

// Session opens one connection in interactive (prompt) mode for a batch of commands.
func (a *Admin) Session(ctx context.Context) (*Session, error) {
	o := a.opts.withDefaults()
	conn, err := dialRetry(ctx, a.path, o)
	if err != nil {
		return nil, fmt.Errorf("admin session: %w", err)
	}
	s := &Session{conn: conn, path: a.path, opts: o}
	reply, err := s.exchange(ctx, "prompt", "prompt\n", 0)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("admin session: %w", err)
	}
	if reply != "" {
		_ = conn.Close()
		return nil, &CommandError{Command: "prompt", Reply: reply, Err: ErrUnexpectedReply}
	}
	return s, nil
}

// Command implements Runner on the session's connection.
func (s *Session) Command(ctx context.Context, cmd string) (string, error) {
	if err := checkCommand(cmd); err != nil {
		return "", err
	}
	return s.exchange(ctx, cmd, cmd+"\n", 0)
}

// Payload implements Runner on the session's connection.
func (s *Session) Payload(ctx context.Context, cmd, payload string) (string, error) {
	msg, lines, err := payloadMessage(cmd, payload)
	if err != nil {
		return "", err
	}
	// HAProxy prints "+ " after the command line and after every payload line.
	return s.exchange(ctx, cmd+" <<", msg, lines+1)
}

// Close ends the session.
func (s *Session) Close() error {
	if s.broken == nil {
		s.broken = errors.New("session closed")
	}
	if err := s.conn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("admin session %s: close: %w", s.path, err)
	}
	return nil
}

// exchange writes msg and reads up to the prompt. plusPrompts is the number of "+ " payload prompts
// that precede the reply.
func (s *Session) exchange(ctx context.Context, cmd, msg string, plusPrompts int) (string, error) {
	if s.broken != nil {
		return "", fmt.Errorf("admin session %s %q: %w: %w", s.path, cmd, ErrUnavailable, s.broken)
	}
	reply, err := s.roundTrip(ctx, cmd, msg)
	if err != nil {
		s.broken = err
		_ = s.conn.Close()
		return "", err
	}
	for range plusPrompts {
		reply = strings.TrimPrefix(reply, payloadPrompt)
	}
	return normalize(reply), nil
}

func (s *Session) roundTrip(ctx context.Context, cmd, msg string) (string, error) {
	stop := watch(ctx, s.conn)
	defer stop()
	if err := s.conn.SetDeadline(deadline(ctx, s.opts.Timeout)); err != nil {
		return "", ioError(ctx, "admin session", cmd, err)
	}
	if _, err := io.WriteString(s.conn, msg); err != nil {
		return "", ioError(ctx, "admin session", cmd, err)
	}
	// A reply ends where HAProxy prints the prompt and waits for the next command: the prompt is
	// the last thing received before silence, so it is looked for at the end of what has arrived.
	s.buf = s.buf[:0]
	if s.chunk == nil {
		s.chunk = make([]byte, readChunk)
	}
	for {
		n, err := s.conn.Read(s.chunk)
		s.buf = append(s.buf, s.chunk[:n]...)
		if bytes.HasSuffix(s.buf, []byte(prompt)) {
			reply := string(s.buf[:len(s.buf)-len(prompt)+1]) // keep the prompt's "\n"
			_ = s.conn.SetDeadline(time.Time{})
			return reply, nil
		}
		if len(s.buf) > maxReply {
			return "", ioError(ctx, "admin session", cmd, fmt.Errorf("reply larger than %d bytes", maxReply))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(s.buf) == 0 {
					return "", noReply(cmd, io.EOF)
				}
				err = fmt.Errorf("connection closed after %d bytes without a prompt", len(s.buf))
			}
			return "", ioError(ctx, "admin session", cmd, err)
		}
	}
}
