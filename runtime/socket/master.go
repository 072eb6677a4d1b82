package socket

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Master is a client of the master CLI (`haproxy -W -S <path>`).
type Master struct {
	path string
	opts Options
}

// NewMaster returns a client of the master socket at path.
func NewMaster(path string, opts Options) *Master { return &Master{path: path, opts: opts} }

// Path returns the socket path the client talks to.
func (m *Master) Path() string { return m.path }

// Command sends one command to the master and returns its reply (only ErrUnavailable as error, or
// ErrInvalid for a command refused before sending).
//
// The 2.6 master keeps a non-interactive connection open after its reply, so "quit" follows the
// command and the reply is read to EOF. The reply may be empty: `reload` answers nothing on 2.6 (the
// master re-executes itself and the connection closes).
func (m *Master) Command(ctx context.Context, cmd string) (string, error) {
	if err := checkCommand(cmd); err != nil {
		return "", err
	}
	o := m.opts.withDefaults()
	conn, err := dialRetry(ctx, m.path, o)
	if err != nil {
		return "", fmt.Errorf("master socket %q: %w", cmd, err)
	}
	defer conn.Close()
	stop := watch(ctx, conn)
	defer stop()
	if err := conn.SetDeadline(deadline(ctx, o.Timeout)); err != nil {
		return "", ioError(ctx, "master socket", cmd, err)
	}
	if _, err := io.WriteString(conn, cmd+"\nquit\n"); err != nil {
		return "", ioError(ctx, "master socket", cmd, err)
	}
	raw, err := readAll(conn)
	if err != nil {
		return "", ioError(ctx, "master socket", cmd, err)
	}
	return normalize(raw), nil
}

// ShowProc parses `show proc`.
func (m *Master) ShowProc(ctx context.Context) (ProcState, error) {
	reply, err := m.Command(ctx, "show proc")
	if err != nil {
		return ProcState{}, err
	}
	ps, err := ParseShowProc(reply)
	if err != nil {
		return ProcState{}, &CommandError{Command: "show proc", Reply: reply, Err: fmt.Errorf("%w: %w", ErrUnexpectedReply, err)}
	}
	return ps, nil
}

// Reload sends `reload` and parses the reply: empty on 2.6 (Sync false: the reload runs after the
// reply, poll ShowProc until the master's reload counter rises and look at ProcState.Failed), or
// "Success=1|0" followed by "--" and the new worker's start-up log on 2.7+.
func (m *Master) Reload(ctx context.Context) (ReloadReply, error) {
	reply, err := m.Command(ctx, "reload")
	if err != nil {
		return ReloadReply{}, err
	}
	rr, err := ParseReload(reply)
	if err != nil {
		return ReloadReply{}, &CommandError{Command: "reload", Reply: reply, Err: fmt.Errorf("%w: %w", ErrUnexpectedReply, err)}
	}
	return rr, nil
}

// ParseReload parses the master's answer to `reload` (see Master.Reload).
func ParseReload(reply string) (ReloadReply, error) {
	if strings.TrimSpace(reply) == "" {
		return ReloadReply{}, nil
	}
	status, log, _ := strings.Cut(reply, "\n")
	var rr ReloadReply
	switch strings.TrimSpace(status) {
	case "Success=1":
		rr = ReloadReply{Sync: true, Success: true}
	case "Success=0":
		rr = ReloadReply{Sync: true}
	default:
		return ReloadReply{}, fmt.Errorf("reload answer %q is neither empty nor Success=0|1", status)
	}
	log = strings.TrimPrefix(log, "--\n")
	rr.Log = strings.TrimRight(log, "\n")
	rr.InProgress = !rr.Success && rr.Log == replyReloadInProgress
	return rr, nil
}
