package socket

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var framingReplies = map[string]string{
	"set server b/s weight 7":        "\n",
	"add server b/s 127.0.0.2:80":    "New server registered.\n\n",
	"del server b/s":                 "Server deleted.\n",
	"del ssl cert /x.pem":            "Can't remove the certificate: certificate '/x.pem' doesn't exist!\n\n\n",
	"show map /m.map":                "0x1 k v\n0x2 k2 v2\n\n",
	"add map /m.map <<":              "\n",
	"set ssl cert /c.pem <<":         "Transaction created for certificate /c.pem!\n\n",
	"commit ssl cert /c.pem":         "Committing /c.pem\nSuccess!\n\n",
	"show servers state nonexistent": "Can't find backend.\n\n",
}

// framingWant is what Command returns for each framingReplies command: the reply without the empty
// line that ends it.
var framingWant = map[string]string{
	"set server b/s weight 7":        "",
	"add server b/s 127.0.0.2:80":    "New server registered.\n",
	"del server b/s":                 "Server deleted.\n",
	"del ssl cert /x.pem":            "Can't remove the certificate: certificate '/x.pem' doesn't exist!\n\n",
	"show map /m.map":                "0x1 k v\n0x2 k2 v2\n",
	"commit ssl cert /c.pem":         "Committing /c.pem\nSuccess!\n",
	"show servers state nonexistent": "Can't find backend.\n",
}

func TestCommandFraming(t *testing.T) {
	for _, slow := range []bool{false, true} {
		f := newFake(t, replies(framingReplies))
		f.slow = slow
		f.start()
		a := NewAdmin(f.path, Options{})
		ctx := context.Background()
		for cmd, want := range framingWant {
			got, err := a.Command(ctx, cmd)
			if err != nil {
				t.Fatalf("Command(%q): %v", cmd, err)
			}
			if got != want {
				t.Errorf("Command(%q) = %q, want %q (slow %v)", cmd, got, want, slow)
			}
		}
		if n := f.accepts.Load(); n != int64(len(framingWant)) {
			t.Errorf("%d connections for %d commands, want one each", n, len(framingWant))
		}
		for _, raw := range f.rawInput() {
			if strings.Count(raw, "\n") != 1 || !strings.HasSuffix(raw, "\n") {
				t.Errorf("sent %q, want one command line", raw)
			}
		}
	}
}

func TestPayloadFraming(t *testing.T) {
	f := newFake(t, replies(framingReplies)).start()
	a := NewAdmin(f.path, Options{})
	ctx := context.Background()
	for _, payload := range []string{"k v\nk2 v2\n", "k v\nk2 v2"} {
		got, err := a.Payload(ctx, "add map /m.map", payload)
		if err != nil || got != "" {
			t.Fatalf("Payload = %q, %v; want \"\", nil", got, err)
		}
	}
	for _, raw := range f.rawInput() {
		if want := "add map /m.map <<\nk v\nk2 v2\n\n"; raw != want {
			t.Errorf("sent %q, want %q", raw, want)
		}
	}
	got, err := a.Payload(ctx, "set ssl cert /c.pem", "-----BEGIN X-----\nAAAA\n-----END X-----\n")
	if err != nil || got != "Transaction created for certificate /c.pem!\n" {
		t.Errorf("Payload(set ssl cert) = %q, %v", got, err)
	}
}

func TestRefusedBeforeSending(t *testing.T) {
	f := newFake(t, replies(framingReplies)).start()
	a := NewAdmin(f.path, Options{})
	ctx := context.Background()
	s, err := a.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range []Runner{a, s} {
		for _, cmd := range []string{
			"", "  ", "set server b/s weight 7\nshutdown sessions server b/s",
			"set server b/s weight 7\r", "set server b/s weight 7; shutdown sessions server b/s",
			"show info\x00",
		} {
			if _, err := r.Command(ctx, cmd); !errors.Is(err, ErrInvalid) {
				t.Errorf("%T.Command(%q) error %v, want ErrInvalid", r, cmd, err)
			}
		}
		for _, p := range []struct{ cmd, payload string }{
			{"add map /m.map", "k v\n\nshutdown sessions server b/s\n"},
			{"add map /m.map", "k v\n \t\nx y"},
			{"add map /m.map", ""},
			{"add map /m.map", "\n"},
			{"add map /m.map", "k v\r\nk2 v2"},
			{"add map /m.map <<", "k v"},
			{"add map /m.map;show info", "k v"},
		} {
			if _, err := r.Payload(ctx, p.cmd, p.payload); !errors.Is(err, ErrInvalid) {
				t.Errorf("%T.Payload(%q, %q) error %v, want ErrInvalid", r, p.cmd, p.payload, err)
			}
		}
	}
	if n := f.accepts.Load(); n != 1 {
		t.Errorf("%d connections, want only the session's", n)
	}
	if cmds := f.commands(); len(cmds) != 0 {
		t.Errorf("the server received %q, want nothing", cmds)
	}
}

func TestConnectionClosedWithoutReply(t *testing.T) {
	f := newFake(t, func(string, []string) string { return closeConn }).start()
	a := NewAdmin(f.path, Options{})
	_, err := a.Command(context.Background(), "add map /m.map k v")
	var ce *CommandError
	if !errors.As(err, &ce) || !errors.Is(err, ErrUnexpectedReply) {
		t.Fatalf("error %v, want a *CommandError wrapping ErrUnexpectedReply", err)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Errorf("error %v also wraps ErrUnavailable", err)
	}
}

func TestRetryUntilSocketAppears(t *testing.T) {
	f := newFake(t, replies(framingReplies))
	go func() {
		time.Sleep(150 * time.Millisecond)
		f.start()
	}()
	a := NewAdmin(f.path, Options{RetryFor: 5 * time.Second})
	// The socket appears only after the first attempts failed: success proves the retries.
	got, err := a.Command(context.Background(), "del server b/s")
	if err != nil || got != "Server deleted.\n" {
		t.Fatalf("Command = %q, %v", got, err)
	}
}

func TestRetryGivesUp(t *testing.T) {
	dir := shortDir(t)
	missing := filepath.Join(dir, "missing.sock")
	// A socket file nobody listens on: bound, then closed without unlinking (ECONNREFUSED).
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("stale socket file: %v", err)
	}
	for _, path := range []string{missing, stale} {
		a := NewAdmin(path, Options{RetryFor: 300 * time.Millisecond})
		_, err := a.Command(context.Background(), "show info")
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: error %v, want ErrUnavailable", path, err)
		}
		// It retried (more than one attempt) and then gave up on its own (the call returned).
		var attempts int
		if i := strings.Index(err.Error(), " attempts"); i < 0 {
			t.Errorf("%s: error %q does not say it retried", path, err)
		} else if f := strings.Fields(err.Error()[:i]); len(f) == 0 {
			t.Errorf("%s: error %q has no attempt count", path, err)
		} else if attempts, _ = strconv.Atoi(f[len(f)-1]); attempts < 2 {
			t.Errorf("%s: %d attempts, want retries: %v", path, attempts, err)
		}
	}
	// Retries disabled: one attempt, so the error reports no retries.
	if _, err := NewAdmin(missing, Options{RetryFor: -1}).Command(context.Background(), "show info"); !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "attempts") {
		t.Errorf("error %v, want ErrUnavailable after a single attempt", err)
	}
	// The context bounds the retries too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := NewAdmin(missing, Options{RetryFor: time.Minute}).Command(ctx, "show info"); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want ErrUnavailable and DeadlineExceeded", err)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	f := newFake(t, func(string, []string) string { return hang }).start()
	a := NewAdmin(f.path, Options{Timeout: 150 * time.Millisecond})
	if _, err := a.Command(context.Background(), "show info"); !errors.Is(err, ErrUnavailable) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("error %v, want ErrUnavailable from the read deadline", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := NewAdmin(f.path, Options{Timeout: time.Minute}).Command(ctx, "show info")
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want ErrUnavailable and Canceled", err)
	}
}

func TestSessionFraming(t *testing.T) {
	for _, slow := range []bool{false, true} {
		f := newFake(t, replies(framingReplies))
		f.slow = slow
		f.start()
		a := NewAdmin(f.path, Options{})
		ctx := context.Background()
		s, err := a.Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			for cmd, want := range framingWant {
				got, err := s.Command(ctx, cmd)
				if err != nil {
					t.Fatalf("Session.Command(%q): %v", cmd, err)
				}
				if got != want {
					t.Errorf("Session.Command(%q) = %q, want %q", cmd, got, want)
				}
			}
			got, err := s.Payload(ctx, "add map /m.map", "k v\nk2 v2\nk3 v3")
			if err != nil || got != "" {
				t.Errorf("Session.Payload = %q, %v", got, err)
			}
			got, err = s.Payload(ctx, "set ssl cert /c.pem", "-----BEGIN X-----\nAAAA\n-----END X-----")
			if err != nil || got != "Transaction created for certificate /c.pem!\n" {
				t.Errorf("Session.Payload(set ssl cert) = %q, %v", got, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if n := f.accepts.Load(); n != 1 {
			t.Errorf("%d connections, want 1", n)
		}
		if _, err := s.Command(ctx, "show info"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("command after Close: %v, want ErrUnavailable", err)
		}
	}
}

func TestSessionBrokenAfterConnectionLoss(t *testing.T) {
	f := newFake(t, func(cmd string, _ []string) string {
		if cmd == "show info" {
			return closeConn
		}
		return "\n"
	}).start()
	ctx := context.Background()
	s, err := NewAdmin(f.path, Options{}).Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Command(ctx, "set server b/s weight 1"); err != nil || got != "" {
		t.Fatalf("Command = %q, %v", got, err)
	}
	if _, err := s.Command(ctx, "show info"); err == nil {
		t.Fatal("no error for a connection closed without a reply")
	}
	if _, err := s.Command(ctx, "set server b/s weight 1"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("command on a broken session: %v, want ErrUnavailable", err)
	}
	if n := len(f.commands()); n != 2 {
		t.Errorf("the server received %d commands, want 2", n)
	}
}

func TestSessionUnavailable(t *testing.T) {
	a := NewAdmin(filepath.Join(shortDir(t), "none.sock"), Options{RetryFor: 50 * time.Millisecond})
	if _, err := a.Session(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Session error %v, want ErrUnavailable", err)
	}
}
