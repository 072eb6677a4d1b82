package views_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/socket"
)

// TestTranscriptFormat: every recorded transcript reads back into the same bytes, and the writer
// refuses an exchange the format cannot hold.
func TestTranscriptFormat(t *testing.T) {
	for _, series := range seriesList(t) {
		for _, file := range []string{adminFile, masterFile} {
			path := filepath.Join(transcriptDir(series), file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := parseTranscript(path, data)
			if err != nil {
				t.Fatal(err)
			}
			again, err := tr.format()
			if err != nil || !bytes.Equal(again, data) {
				t.Errorf("%s does not read back into the same bytes (err %v):\n%s", path, err, testkit.LineDiff(string(data), string(again)))
			}
			if len(tr.commands()) == 0 {
				t.Errorf("%s holds no exchange", path)
			}
		}
	}
	for _, bad := range []struct{ cmd, reply string }{
		{"show info", "no line break"},
		{"show info", "a\n### b\n"},
		{"show info", "### b\n"},
		{"show\ninfo", "x\n"},
	} {
		tr := newTranscript()
		tr.add(bad.cmd, bad.reply)
		if _, err := tr.format(); err == nil {
			t.Errorf("format of %q → %q: no error", bad.cmd, bad.reply)
		}
	}
}

// errorSink is a testing.TB whose Errorf is collected instead of failing the test, to check that
// the replay fails loudly.
type errorSink struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (s *errorSink) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

func (s *errorSink) errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// TestReplaySockets: the replay answers runtime/socket's clients as HAProxy does, one command per
// connection, the master until "quit", and the interactive mode of an admin Session; a command the
// transcript lacks fails the test (here: is reported) and the client gets no reply.
func TestReplaySockets(t *testing.T) {
	series := seriesList(t)[0]
	rec, err := readRecording(series)
	if err != nil {
		t.Fatal(err)
	}
	sink := &errorSink{TB: t}
	src := replay(sink, rec)
	ctx := context.Background()
	opts := socket.Options{RetryFor: -1}
	want, _ := rec.admin.reply("show info")
	want = strings.TrimSuffix(want, "\n") // the clients drop HAProxy's final empty line

	admin := socket.NewAdmin(src.Admin, opts)
	if got, err := admin.Command(ctx, "show info"); err != nil || got != want {
		t.Errorf("admin show info: %v\n%s", err, got)
	}
	sess, err := admin.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for range 2 {
		if got, err := sess.Command(ctx, "show info"); err != nil || got != want {
			t.Errorf("session show info: %v\n%s", err, got)
		}
	}
	if _, err := socket.NewMaster(src.Master, opts).ShowProc(ctx); err != nil {
		t.Errorf("master show proc: %v", err)
	}
	if len(sink.errors()) != 0 {
		t.Fatalf("recorded commands reported as unrecorded: %q", sink.errors())
	}

	if got, err := admin.Command(ctx, "show stat"); err == nil {
		t.Errorf("an unrecorded command got a reply: %q", got)
	}
	if _, err := sess.Command(ctx, "show sess"); err == nil {
		t.Error("an unrecorded command in a session got a reply")
	}
	// The master closes without a reply: an empty reply, or a reset when "quit" was left unread.
	if got, err := socket.NewMaster(src.Master, opts).Command(ctx, "show threads"); err == nil && got != "" {
		t.Errorf("an unrecorded master command got a reply: %q", got)
	}
	errs := strings.Join(sink.errors(), "\n")
	for _, cmd := range []string{`"show stat"`, `"show sess"`, `"show threads"`} {
		if !strings.Contains(errs, cmd) || !strings.Contains(errs, "re-record") {
			t.Errorf("the unrecorded %s was not reported with the way to record it:\n%s", cmd, errs)
		}
	}
}
