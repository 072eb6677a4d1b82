package socket

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Typed helpers. Each sends one command through r, checks the reply against HAProxy's success answer
// and returns a *CommandError wrapping ErrNotFound, ErrExists, ErrBusy, ErrUnsupported or
// ErrUnexpectedReply otherwise (ErrInvalid when an argument is refused before sending, ErrUnavailable
// when the socket cannot be reached).

// serverRef returns "<backend>/<server>" after checking both names.
func serverRef(backend, server string) (string, error) {
	if strings.Contains(backend, "/") {
		return "", fmt.Errorf("backend %q: %w: holds '/'", backend, ErrInvalid)
	}
	if err := checkWord(backend); err != nil {
		return "", fmt.Errorf("backend: %w", err)
	}
	if err := checkWord(server); err != nil {
		return "", fmt.Errorf("server: %w", err)
	}
	return backend + "/" + server, nil
}

// AddServer sends `add server <backend>/<server> <spec>`; spec is "<addr>:<port> [keywords]". The
// server starts in maintenance with its checks off (enable them with EnableHealth, then
// SetServerState ready). ErrExists when the backend has a server of that name.
func AddServer(ctx context.Context, r Runner, backend, server, spec string) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("add server: %w", err)
	}
	words := strings.Fields(spec)
	if len(words) == 0 {
		return fmt.Errorf("add server %s: %w: empty spec", ref, ErrInvalid)
	}
	cmd, err := line(append([]string{"add", "server", ref}, words...)...)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, replyServerAdded)
}

// DelServer sends `del server`; ErrBusy when connections are still attached (HAProxy 2.6 counts
// idle pooled connections too). The server must be in maintenance: HAProxy answers "Only servers in
// maintenance mode can be deleted." otherwise, which is ErrUnexpectedReply.
func DelServer(ctx context.Context, r Runner, backend, server string) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("del server: %w", err)
	}
	cmd, err := line("del", "server", ref)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, replyServerDeleted)
}

// MaxWeight is the largest server weight HAProxy accepts.
const MaxWeight = 256

// SetServerWeight sends `set server <b>/<s> weight <w>`.
func SetServerWeight(ctx context.Context, r Runner, backend, server string, weight int) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("set server weight: %w", err)
	}
	if weight < 0 || weight > MaxWeight {
		return fmt.Errorf("set server %s weight %d: %w: weight out of 0-%d", ref, weight, ErrInvalid, MaxWeight)
	}
	cmd, err := line("set", "server", ref, "weight", strconv.Itoa(weight))
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// SetServerState sends `set server <b>/<s> state ready|drain|maint`.
func SetServerState(ctx context.Context, r Runner, backend, server, state string) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("set server state: %w", err)
	}
	switch state {
	case "ready", "drain", "maint":
	default:
		return fmt.Errorf("set server %s state %q: %w: not ready, drain or maint", ref, state, ErrInvalid)
	}
	cmd, err := line("set", "server", ref, "state", state)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// EnableHealth sends `enable health <b>/<s>`. A server without `check` answers "Health check was
// not configured on this server, cannot enable." (ErrUnexpectedReply).
func EnableHealth(ctx context.Context, r Runner, backend, server string) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("enable health: %w", err)
	}
	cmd, err := line("enable", "health", ref)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// DisableHealth sends `disable health <b>/<s>`: the server's checks stop, and its state stays what
// the last one made it (see SetServerHealth).
func DisableHealth(ctx context.Context, r Runner, backend, server string) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("disable health: %w", err)
	}
	cmd, err := line("disable", "health", ref)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// SetServerHealth sends `set server <b>/<s> health <up|stopping|down>`, which sets the server's
// operational state as a check result would (whether or not its checks run).
func SetServerHealth(ctx context.Context, r Runner, backend, server, health string) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("set server health: %w", err)
	}
	switch health {
	case "up", "stopping", "down":
	default:
		return fmt.Errorf("set server %s health %q: %w: want up, stopping or down", ref, health, ErrInvalid)
	}
	cmd, err := line("set", "server", ref, "health", health)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// SetServerPort sends `set server <b>/<s> addr <addr> port <port>` for a server whose port changes
// (its address may stay). HAProxy recomputes a dynamic cookie on an address or port change, for that
// server alone; it answers "…port changed from '<old>' to '<port>' by 'stats socket command'"
// (2.6: "no need to change the addr, port changed from …" when the address stays).
func SetServerPort(ctx context.Context, r Runner, backend, server, addr string, port int) error {
	ref, err := serverRef(backend, server)
	if err != nil {
		return fmt.Errorf("set server addr: %w", err)
	}
	if port < 1 || port > 65535 {
		return fmt.Errorf("set server %s port %d: %w: port out of 1-65535", ref, port, ErrInvalid)
	}
	cmd, err := line("set", "server", ref, "addr", addr, "port", strconv.Itoa(port))
	if err != nil {
		return err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return err
	}
	got := trimReply(reply)
	if strings.Contains(got, "port changed from '") && strings.HasSuffix(got, fmt.Sprintf("' to '%d' by 'stats socket command'", port)) {
		return nil
	}
	return classify(cmd, reply)
}

// ShowServersState returns `show servers state` for one backend, or all when backend is "".
// ErrNotFound for an unknown backend.
func ShowServersState(ctx context.Context, r Runner, backend string) ([]ServerState, error) {
	words := []string{"show", "servers", "state"}
	if backend != "" {
		words = append(words, backend)
	}
	cmd, err := line(words...)
	if err != nil {
		return nil, err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	states, err := ParseServersState(reply)
	if err != nil {
		return nil, parseError(cmd, reply, err)
	}
	return states, nil
}

// parseError is the *CommandError of a reply a parser refused.
func parseError(cmd, reply string, err error) error {
	if kind := replyKind(reply); !errors.Is(kind, ErrUnexpectedReply) {
		return &CommandError{Command: cmd, Reply: reply, Err: kind}
	}
	return &CommandError{Command: cmd, Reply: reply, Err: fmt.Errorf("%w: %w", ErrUnexpectedReply, err)}
}
