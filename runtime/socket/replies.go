package socket

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// HAProxy's success answers, checked on 2.6.12 (Debian 2.6.12-1+deb12u4) against the real binary and
// the same on Debian's 3.0.11, 3.2.26 and 3.4.7 (the runtime/socket integration tests run on each).
// Replies are compared without their trailing newlines. Most changes (set server weight/state, enable
// health, add/set/del map, add map @ver, commit map) answer an empty line. Where a version answers
// otherwise, Capabilities says so; refusals differ in places (3.0+ end them with one newline, 2.6
// with an empty line), which classify does not depend on.
const (
	replyServerAdded   = "New server registered."
	replyServerDeleted = "Server deleted."
	replyMapVersion    = "New version created: " // + the version number

	// replyReloadInProgress is the log of "Success=0" when the 3.1+ master refuses a reload because
	// the previous one's worker is still starting (mworker.c, cli_parse_reload).
	replyReloadInProgress = "Another reload is still in progress."

	fmtCertCreated    = "New empty certificate store '%s'!"
	fmtCertTxCreated  = "Transaction created for certificate %s!"
	fmtCertTxUpdated  = "Transaction updated for certificate %s!"
	fmtCertDeleted    = "Certificate '%s' deleted!"
	fmtCACreated      = "New CA file created '%s'!"
	fmtCATxCreated    = "transaction created for CA %s!"
	fmtCATxUpdated    = "transaction updated for CA %s!"
	fmtCADeleted      = "CA file '%s' deleted!"
	fmtCRLTxCreated   = "transaction created for CRL %s!"
	fmtCRLTxUpdated   = "transaction updated for CRL %s!"
	fmtCommitted      = "Committing %s\nSuccess!"                   // commit ssl cert / ca-file (+ "." per rebuilt instance)
	fmtAborted        = "Transaction aborted for certificate '%s'!" // abort ssl cert and abort ssl ca-file
	fmtCrtListAdded   = "Inserting certificate '%s' in crt-list '%s'.\nSuccess!"
	fmtCrtListDeleted = "Entry '%s' deleted in crtlist '%s'!"
)

// HAProxy's refusals, checked on 2.6.12, as the parts of the reply that identify them. A reply that
// matches none of them, HAProxy's help text in particular, is ErrUnexpectedReply.
var (
	// helpReplies mark the help text HAProxy prints after an unknown or malformed command; it is
	// checked first because it lists every command (and so many of the words below).
	helpReplies = []string{
		"Unknown command", // "Unknown command, but maybe one of the following ones is a better match:"
		"The following commands are valid at this level",
	}
	notFoundReplies = []string{
		"No such server.",                          // set server, enable health, del server
		"No such backend.",                         // set server, enable health, add/del server
		"Can't find backend.",                      // show servers state <backend>
		"Key not found.",                           // del map
		"entry not found.",                         // set map
		"Unknown map identifier.",                  // every map command: "Unknown map identifier. Please use #<id> or <file>."
		"doesn't exist!",                           // del ssl cert / del ssl ca-file: "certificate '…' doesn't exist!"
		"does not exist!",                          // add ssl crt-list: "certificate '…' does not exist!", "crt-list '…' does not exist!"
		"can't be found in crt-list",               // del ssl crt-list
		"not referenced by the configuration!",     // set ssl cert / set ssl ca-file of an unknown path
		"No ongoing transaction!",                  // commit / abort without set
		"Not found or the certificate is a bundle", // show ssl cert <path>
		"didn't find the specified filename",       // show ssl crt-list <path>
	}
	existsReplies = []string{
		"Already exists a server with the same name in backend.", // add server
		// add server with an id another server of the backend has (every version checks the id
		// before the name): "'id' : custom id 12 already used at (null):0 ('server x')."
		"already used at",
		"already exists!", // new ssl cert / new ssl ca-file: "Certificate '…' already exists!"
	}
	busyReplies = []string{
		// del server while connections (also idle pooled ones) are attached:
		"Server still has connections attached to it, cannot remove it.",
		// del ssl cert of a certificate a crt-list still uses:
		"in use, can't be deleted!",
		// set ssl cert / ca-file while another path's transaction is open (one at a time):
		"The ongoing transaction is about",
	}
	unsupportedReplies = []string{
		// del ssl crt-list of a certificate whose path contains ':' (e.g. "ns:route.pem"): 2.6 takes
		// what follows the first ':' as a line number and refuses, with or without ":<line>".
		"wrong line number after colons",
	}
)

// classify returns the *CommandError for a reply that is not the success answer of cmd.
func classify(cmd, reply string) error {
	return &CommandError{Command: cmd, Reply: reply, Err: replyKind(reply)}
}

// replyKind returns the error that a reply other than the success answer names: ErrUnsupported,
// ErrBusy, ErrExists, ErrNotFound, or ErrUnexpectedReply for any other reply.
func replyKind(reply string) error {
	switch {
	case containsAny(reply, helpReplies):
	case containsAny(reply, unsupportedReplies):
		return ErrUnsupported
	case containsAny(reply, busyReplies):
		return ErrBusy
	case containsAny(reply, existsReplies):
		return ErrExists
	case containsAny(reply, notFoundReplies):
		return ErrNotFound
	}
	return ErrUnexpectedReply
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// trimReply drops the newlines that end a reply.
func trimReply(reply string) string { return strings.TrimRight(reply, "\n") }

// expect sends cmd through r and checks that the reply is one of want (without trailing newlines).
func expect(ctx context.Context, r Runner, cmd string, want ...string) error {
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return err
	}
	return check(cmd, reply, want...)
}

// expectPayload is expect for a command with a payload.
func expectPayload(ctx context.Context, r Runner, cmd, payload string, want ...string) error {
	reply, err := r.Payload(ctx, cmd, payload)
	if err != nil {
		return err
	}
	return check(cmd+" <<", reply, want...)
}

func check(cmd, reply string, want ...string) error {
	got := trimReply(reply)
	for _, w := range want {
		if got == w {
			return nil
		}
	}
	return classify(cmd, reply)
}

// line joins a command's words into one command line. Every argument must be one non-empty word
// without whitespace, control characters or "<<"; backslashes are doubled and ';' is escaped as "\;",
// because HAProxy's CLI parser takes a backslash as an escape and an unescaped ';' as the end of the
// command (checked on 2.6, 3.0, 3.2 and 3.4: `del map <m> a\;b` deletes the key "a;b").
func line(words ...string) (string, error) {
	var b strings.Builder
	for i, w := range words {
		if err := checkWord(w); err != nil {
			return "", fmt.Errorf("%s: argument %d: %w", strings.Join(words[:min(i, 3)], " "), i+1, err)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		for j := 0; j < len(w); j++ {
			if w[j] == '\\' || w[j] == ';' {
				b.WriteByte('\\')
			}
			b.WriteByte(w[j])
		}
	}
	return b.String(), nil
}

// checkWord refuses an argument HAProxy would not read as one word, on a command line or as the key
// or value of a payload line.
func checkWord(w string) error {
	if w == "" {
		return fmt.Errorf("%w: empty argument", ErrInvalid)
	}
	for _, r := range w {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%w: %q holds %q", ErrInvalid, w, r)
		}
	}
	if strings.Contains(w, payloadMarker) {
		return fmt.Errorf("%w: %q holds %q, which HAProxy reads as the start of a payload", ErrInvalid, w, payloadMarker)
	}
	return nil
}
