package socket

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Dynamic backends (HAProxy 3.4+, Capabilities.DynamicBackends). A backend added at runtime takes
// every setting from a named defaults section (a profile) and starts unpublished: use_backend rules
// skip it until PublishBackend. A backend leaves with UnpublishBackend, its servers' removal, then
// DelBackend. Backends of the configuration file can be unpublished and deleted too, unless the
// configuration names them (default_backend, a static use_backend, a sample expression). Replies
// checked on Debian's 3.4.7; 3.4.7 takes these commands without `experimental-mode on`.
const (
	replyBackendAdded       = "New backend registered."
	replyBackendPublished   = "Backend published."
	replyBackendUnpublished = "Backend unpublished."
	// replyBackendDeleted ends the reply of `del backend`, which may first repeat messages that
	// earlier commands left in the CLI's message buffer (e.g. "Server deleted.").
	replyBackendDeleted = "Backend deleted."
)

// backendWord checks a backend or profile name given to a backend command.
func backendWord(what, name string) error {
	if err := checkWord(name); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if strings.Contains(name, "/") {
		return fmt.Errorf("%s %q: %w: holds '/'", what, name, ErrInvalid)
	}
	return nil
}

// AddBackend sends `add backend <name> from <profile>`: a backend with every setting of the named
// defaults section profile, unpublished and without servers. ErrExists when a proxy of that name
// exists. A backend HAProxy registers without support for dynamic servers (the profile's balance
// algorithm does not allow them) is ErrUnexpectedReply: it exists then, and the caller deletes it.
func AddBackend(ctx context.Context, r Runner, name, profile string) error {
	if err := backendWord("add backend", name); err != nil {
		return err
	}
	if err := backendWord("add backend: profile", profile); err != nil {
		return err
	}
	cmd, err := line("add", "backend", name, "from", profile)
	if err != nil {
		return err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return err
	}
	if trimReply(reply) == replyBackendAdded {
		return nil
	}
	if strings.Contains(reply, "name is already used by other proxy") {
		return &CommandError{Command: cmd, Reply: reply, Err: ErrExists}
	}
	return classify(cmd, reply)
}

// PublishBackend sends `publish backend <name>`: use_backend rules select it from now on.
func PublishBackend(ctx context.Context, r Runner, name string) error {
	return backendCommand(ctx, r, "publish", name, replyBackendPublished)
}

// UnpublishBackend sends `unpublish backend <name>`: use_backend rules skip it (the next rule or the
// default backend answers), its health checks go on.
func UnpublishBackend(ctx context.Context, r Runner, name string) error {
	return backendCommand(ctx, r, "unpublish", name, replyBackendUnpublished)
}

func backendCommand(ctx context.Context, r Runner, verb, name, want string) error {
	if err := backendWord(verb+" backend", name); err != nil {
		return err
	}
	cmd, err := line(verb, "backend", name)
	if err != nil {
		return err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return err
	}
	if endsWithLine(reply, want) {
		return nil
	}
	return classify(cmd, reply)
}

// endsWithLine reports whether reply's last line is want. On 3.4.7, in an interactive session, the
// reply of a backend command may first repeat the messages of earlier commands ("Server … is going
// DOWN for maintenance", "Server deleted.").
func endsWithLine(reply, want string) bool {
	got := trimReply(reply)
	return got == want || strings.HasSuffix(got, "\n"+want)
}

// DelBackend sends `del backend <name>`. The backend must be unpublished and without servers: else
// ErrUnexpectedReply, as for one the configuration names or one with a stick-table (HAProxy never
// deletes those). ErrBusy while streams are attached to it (retry later), ErrNotFound when there is
// no such backend.
func DelBackend(ctx context.Context, r Runner, name string) error {
	if err := backendWord("del backend", name); err != nil {
		return err
	}
	cmd, err := line("del", "backend", name)
	if err != nil {
		return err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return err
	}
	if endsWithLine(reply, replyBackendDeleted) {
		return nil
	}
	if strings.Contains(reply, "Backend still has attached streams on it.") {
		return &CommandError{Command: cmd, Reply: reply, Err: ErrBusy}
	}
	if strings.Contains(reply, replyServerDeleted) && !strings.Contains(reply, replyBackendDeleted) {
		// 3.4.7 may cut a long repetition of earlier messages before its own answer: ask whether
		// the backend is still there (`show backend` lists one name a line after "# name").
		list, err := r.Command(ctx, "show backend")
		lines := strings.Split(trimReply(list), "\n")
		if err == nil && len(lines) > 0 && lines[0] == "# name" && !slices.Contains(lines[1:], name) {
			return nil
		}
	}
	return classify(cmd, reply)
}
