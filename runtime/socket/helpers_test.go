package socket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// scripted is a Runner that records what it is sent and answers from a queue of replies (as
// Command returns them: without the trailing empty line).
type scripted struct {
	sent    []string
	replies []string
}

func (s *scripted) next() string {
	if len(s.replies) == 0 {
		return "Unknown command, but maybe one of the following ones is a better match:\n"
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r
}

func (s *scripted) Command(_ context.Context, cmd string) (string, error) {
	if err := checkCommand(cmd); err != nil {
		return "", err
	}
	s.sent = append(s.sent, cmd)
	return s.next(), nil
}

func (s *scripted) Payload(_ context.Context, cmd, payload string) (string, error) {
	if _, _, err := payloadMessage(cmd, payload); err != nil {
		return "", err
	}
	s.sent = append(s.sent, cmd+" <<\n"+strings.TrimSuffix(payload, "\n"))
	return s.next(), nil
}

const help = "Unknown command, but maybe one of the following ones is a better match:\n  help [<command>]                        : list matching or all commands\n"

func TestTypedHelpers(t *testing.T) {
	ctx := context.Background()
	type call func(r Runner) error
	cases := []struct {
		name  string
		call  call
		sent  string
		reply string
		want  error // nil for success
	}{
		{"add server", func(r Runner) error {
			return AddServer(ctx, r, "be_http:ns:r", "pod:p:svc:http:10.0.0.1:8080", "10.0.0.1:8080  weight 5 check inter 5000ms")
		}, "add server be_http:ns:r/pod:p:svc:http:10.0.0.1:8080 10.0.0.1:8080 weight 5 check inter 5000ms", "New server registered.\n", nil},
		{"add server exists", func(r Runner) error { return AddServer(ctx, r, "b", "s", "127.0.0.2:80") },
			"add server b/s 127.0.0.2:80", "Already exists a server with the same name in backend.\n", ErrExists},
		{"add server no backend", func(r Runner) error { return AddServer(ctx, r, "nope", "s", "127.0.0.2:80") },
			"add server nope/s 127.0.0.2:80", "No such backend.\n", ErrNotFound},
		{"add server bad keyword", func(r Runner) error { return AddServer(ctx, r, "b", "s", "127.0.0.2:80 cookie x") },
			"add server b/s 127.0.0.2:80 cookie x", "'cookie' option is not accepted for dynamic server\n", ErrUnexpectedReply},
		{"del server", func(r Runner) error { return DelServer(ctx, r, "b", "s") }, "del server b/s", "Server deleted.\n", nil},
		{"add backend", func(r Runner) error { return AddBackend(ctx, r, "be_http:ns:r", "prof") }, "add backend be_http:ns:r from prof",
			"New backend registered.\n\n", nil},
		{"add backend exists", func(r Runner) error { return AddBackend(ctx, r, "b", "prof") }, "add backend b from prof",
			"\nError during backend creation : name is already used by other proxy 'backend b'.\n\n", ErrExists},
		{"add backend without dynamic servers", func(r Runner) error { return AddBackend(ctx, r, "b", "prof") }, "add backend b from prof",
			"New backend registered (no support for dynamic servers: x).\n", ErrUnexpectedReply},
		{"publish", func(r Runner) error { return PublishBackend(ctx, r, "b") }, "publish backend b", "Backend published.\n", nil},
		{"unpublish", func(r Runner) error { return UnpublishBackend(ctx, r, "b") }, "unpublish backend b", "Backend unpublished.\n", nil},
		{"del backend after messages", func(r Runner) error { return DelBackend(ctx, r, "b") }, "del backend b",
			"Server deleted.\nBackend deleted.\n\n", nil},
		{"del backend busy", func(r Runner) error { return DelBackend(ctx, r, "b") }, "del backend b",
			"Backend still has attached streams on it.\n", ErrBusy},
		{"del backend published", func(r Runner) error { return DelBackend(ctx, r, "b") }, "del backend b",
			"Backend must be unpublished prior to its deletion.\n", ErrUnexpectedReply},
		{"del backend unknown", func(r Runner) error { return DelBackend(ctx, r, "b") }, "del backend b", "No such backend.\n", ErrNotFound},
		{"del server busy", func(r Runner) error { return DelServer(ctx, r, "b", "s") }, "del server b/s",
			"Server still has connections attached to it, cannot remove it.\n", ErrBusy},
		{"del server not in maint", func(r Runner) error { return DelServer(ctx, r, "b", "s") }, "del server b/s",
			"Only servers in maintenance mode can be deleted.\n", ErrUnexpectedReply},
		{"del server unknown", func(r Runner) error { return DelServer(ctx, r, "b", "s") }, "del server b/s", "No such server.\n", ErrNotFound},
		{"weight", func(r Runner) error { return SetServerWeight(ctx, r, "b", "s", 7) }, "set server b/s weight 7", "", nil},
		{"weight unknown", func(r Runner) error { return SetServerWeight(ctx, r, "b", "nope", 1) }, "set server b/nope weight 1", "No such server.\n", ErrNotFound},
		{"weight help", func(r Runner) error { return SetServerWeight(ctx, r, "b", "s", 1) }, "set server b/s weight 1", help, ErrUnexpectedReply},
		{"state", func(r Runner) error { return SetServerState(ctx, r, "b", "s", "maint") }, "set server b/s state maint", "", nil},
		{"health", func(r Runner) error { return EnableHealth(ctx, r, "b", "s") }, "enable health b/s", "", nil},
		{"health not configured", func(r Runner) error { return EnableHealth(ctx, r, "b", "s") }, "enable health b/s",
			"Health check was not configured on this server, cannot enable.\n", ErrUnexpectedReply},
		{"health off", func(r Runner) error { return DisableHealth(ctx, r, "b", "s") }, "disable health b/s", "", nil},
		{"health up", func(r Runner) error { return SetServerHealth(ctx, r, "b", "s", "up") }, "set server b/s health up", "", nil},
		{"port", func(r Runner) error { return SetServerPort(ctx, r, "b", "s", "10.0.0.1", 8) }, "set server b/s addr 10.0.0.1 port 8",
			"no need to change the addr, port changed from '9' to '8' by 'stats socket command'\n", nil},
		{"addr and port", func(r Runner) error { return SetServerPort(ctx, r, "b", "s", "fd00::1", 8) }, "set server b/s addr fd00::1 port 8",
			"IP changed from '10.0.0.1' to 'fd00::1', port changed from '9' to '8' by 'stats socket command'\n", nil},
		{"port unchanged", func(r Runner) error { return SetServerPort(ctx, r, "b", "s", "10.0.0.1", 8) }, "set server b/s addr 10.0.0.1 port 8",
			"no need to change the addr, no need to change the port by 'stats socket command'\n", ErrUnexpectedReply},
		{"port of unknown server", func(r Runner) error { return SetServerPort(ctx, r, "b", "s", "10.0.0.1", 8) }, "set server b/s addr 10.0.0.1 port 8",
			"No such server.\n", ErrNotFound},
		{"add map", func(r Runner) error { return AddMap(ctx, r, "/m.map", "=h/p", "be") }, "add map /m.map =h/p be", "", nil},
		{"add map backslash", func(r Runner) error { return AddMap(ctx, r, "/m.map", `h/a\b`, "be") }, `add map /m.map h/a\\b be`, "", nil},
		{"add map unknown", func(r Runner) error { return AddMap(ctx, r, "/x.map", "k", "v") }, "add map /x.map k v",
			"Unknown map identifier. Please use #<id> or <file>.\n", ErrNotFound},
		{"set map", func(r Runner) error { return SetMap(ctx, r, "/m.map", "k", "v") }, "set map /m.map k v", "", nil},
		{"set map absent", func(r Runner) error { return SetMap(ctx, r, "/m.map", "k", "v") }, "set map /m.map k v", "entry not found.\n", ErrNotFound},
		{"del map", func(r Runner) error { return DelMap(ctx, r, "/m.map", "k") }, "del map /m.map k", "", nil},
		{"del map absent", func(r Runner) error { return DelMap(ctx, r, "/m.map", "k") }, "del map /m.map k", "Key not found.\n", ErrNotFound},
		{"new cert", func(r Runner) error { return NewCert(ctx, r, "/c/ns:r.pem") }, "new ssl cert /c/ns:r.pem",
			"New empty certificate store '/c/ns:r.pem'!\n", nil},
		{"new cert exists", func(r Runner) error { return NewCert(ctx, r, "/c/a.pem") }, "new ssl cert /c/a.pem",
			"Certificate '/c/a.pem' already exists!\n", ErrExists},
		{"new cert other path", func(r Runner) error { return NewCert(ctx, r, "/c/a.pem") }, "new ssl cert /c/a.pem",
			"New empty certificate store '/c/b.pem'!\n", ErrUnexpectedReply},
		{"set cert", func(r Runner) error { return SetCert(ctx, r, "/c/a.pem", "A\n\nB\r\n") }, "set ssl cert /c/a.pem <<\nA\nB",
			"Transaction created for certificate /c/a.pem!\n", nil},
		{"set cert update", func(r Runner) error { return SetCert(ctx, r, "/c/a.pem", "A") }, "set ssl cert /c/a.pem <<\nA",
			"Transaction updated for certificate /c/a.pem!\n", nil},
		{"set cert unknown", func(r Runner) error { return SetCert(ctx, r, "/c/x.pem", "A") }, "set ssl cert /c/x.pem <<\nA",
			"Can't replace a certificate which is not referenced by the configuration!\nCan't update /c/x.pem!\n", ErrNotFound},
		{"set cert bad pem", func(r Runner) error { return SetCert(ctx, r, "/c/a.pem", "A") }, "set ssl cert /c/a.pem <<\nA",
			"unable to load certificate from file '/c/a.pem'.\nCan't load the payload\nCan't update /c/a.pem!\n", ErrUnexpectedReply},
		{"set cert other transaction", func(r Runner) error { return SetCert(ctx, r, "/c/a.pem", "A") }, "set ssl cert /c/a.pem <<\nA",
			"The ongoing transaction is about '/c/b.pem' but you are trying to set '/c/a.pem'\nCan't update /c/a.pem!\n", ErrBusy},
		{"commit cert", func(r Runner) error { return CommitCert(ctx, r, "/c/a.pem") }, "commit ssl cert /c/a.pem",
			"Committing /c/a.pem\nSuccess!\n", nil},
		{"commit used cert", func(r Runner) error { return CommitCert(ctx, r, "/c/a.pem") }, "commit ssl cert /c/a.pem",
			"Committing /c/a.pem...\nSuccess!\n", nil},
		{"commit cert other path", func(r Runner) error { return CommitCert(ctx, r, "/c/a.pem") }, "commit ssl cert /c/a.pem",
			"Committing /c/a.pem.x\nSuccess!\n", ErrUnexpectedReply},
		{"commit cert none", func(r Runner) error { return CommitCert(ctx, r, "/c/a.pem") }, "commit ssl cert /c/a.pem",
			"No ongoing transaction! !\nCan't commit /c/a.pem!\n", ErrNotFound},
		{"commit cert failed", func(r Runner) error { return CommitCert(ctx, r, "/c/a.pem") }, "commit ssl cert /c/a.pem",
			"Committing /c/a.pem\nError!\n", ErrUnexpectedReply},
		{"abort cert", func(r Runner) error { return AbortCert(ctx, r, "/c/a.pem") }, "abort ssl cert /c/a.pem",
			"Transaction aborted for certificate '/c/a.pem'!\n", nil},
		{"abort cert none", func(r Runner) error { return AbortCert(ctx, r, "/c/a.pem") }, "abort ssl cert /c/a.pem", "No ongoing transaction!\n", ErrNotFound},
		{"del cert", func(r Runner) error { return DelCert(ctx, r, "/c/a.pem") }, "del ssl cert /c/a.pem", "Certificate '/c/a.pem' deleted!\n", nil},
		{"del cert in use", func(r Runner) error { return DelCert(ctx, r, "/c/a.pem") }, "del ssl cert /c/a.pem",
			"Can't remove the certificate: certificate '/c/a.pem' in use, can't be deleted!\n\n", ErrBusy},
		{"del cert absent", func(r Runner) error { return DelCert(ctx, r, "/c/a.pem") }, "del ssl cert /c/a.pem",
			"Can't remove the certificate: certificate '/c/a.pem' doesn't exist!\n\n", ErrNotFound},
		{"crt-list add", func(r Runner) error {
			return AddCrtListEntry(ctx, r, "/l.map", "/c/a.pem  [alpn h2,http/1.1] a.example.com *.b.example.com")
		}, "add ssl crt-list /l.map <<\n/c/a.pem [alpn h2,http/1.1] a.example.com *.b.example.com",
			"Inserting certificate '/c/a.pem' in crt-list '/l.map'.\nSuccess!\n", nil},
		{"crt-list add unknown cert", func(r Runner) error { return AddCrtListEntry(ctx, r, "/l.map", "/c/x.pem x") },
			"add ssl crt-list /l.map <<\n/c/x.pem x", "Can't edit the crt-list: certificate '/c/x.pem' does not exist!\n", ErrNotFound},
		{"crt-list del", func(r Runner) error { return DelCrtListEntry(ctx, r, "/l.map", "/c/a.pem") }, "del ssl crt-list /l.map /c/a.pem",
			"Entry '/c/a.pem' deleted in crtlist '/l.map'!\n", nil},
		{"crt-list del line", func(r Runner) error { return DelCrtListEntry(ctx, r, "/l.map", "/c/a.pem:3") }, "del ssl crt-list /l.map /c/a.pem:3",
			"Entry '/c/a.pem' deleted in crtlist '/l.map'!\n", nil},
		{"crt-list del colon", func(r Runner) error { return DelCrtListEntry(ctx, r, "/l.map", "/c/ns:r.pem") }, "del ssl crt-list /l.map /c/ns:r.pem",
			"Can't delete the entry: wrong line number after colons in '/c/ns:r.pem'!\n", ErrUnsupported},
		{"crt-list del absent", func(r Runner) error { return DelCrtListEntry(ctx, r, "/l.map", "/c/a.pem") }, "del ssl crt-list /l.map /c/a.pem",
			"Can't delete the entry: certificate '/c/a.pem' can't be found in crt-list '/l.map'!\n", ErrNotFound},
		{"new ca", func(r Runner) error { return NewCAFile(ctx, r, "/ca/x.pem") }, "new ssl ca-file /ca/x.pem", "New CA file created '/ca/x.pem'!\n", nil},
		{"new ca exists", func(r Runner) error { return NewCAFile(ctx, r, "/ca/x.pem") }, "new ssl ca-file /ca/x.pem", "CA file '/ca/x.pem' already exists!\n", ErrExists},
		{"set ca", func(r Runner) error { return SetCAFile(ctx, r, "/ca/x.pem", "C") }, "set ssl ca-file /ca/x.pem <<\nC", "transaction created for CA /ca/x.pem!\n", nil},
		{"set ca update", func(r Runner) error { return SetCAFile(ctx, r, "/ca/x.pem", "C") }, "set ssl ca-file /ca/x.pem <<\nC", "transaction updated for CA /ca/x.pem!\n", nil},
		{"set ca invalid", func(r Runner) error { return SetCAFile(ctx, r, "/ca/x.pem", "C") }, "set ssl ca-file /ca/x.pem <<\nC",
			"Invalid payload\nCan't update /ca/x.pem!\n", ErrUnexpectedReply},
		{"commit ca", func(r Runner) error { return CommitCAFile(ctx, r, "/ca/x.pem") }, "commit ssl ca-file /ca/x.pem", "Committing /ca/x.pem\nSuccess!\n", nil},
		{"abort ca", func(r Runner) error { return AbortCAFile(ctx, r, "/ca/x.pem") }, "abort ssl ca-file /ca/x.pem", "Transaction aborted for certificate '/ca/x.pem'!\n", nil},
		{"del ca", func(r Runner) error { return DelCAFile(ctx, r, "/ca/x.pem") }, "del ssl ca-file /ca/x.pem", "CA file '/ca/x.pem' deleted!\n", nil},
		{"del ca absent", func(r Runner) error { return DelCAFile(ctx, r, "/ca/x.pem") }, "del ssl ca-file /ca/x.pem",
			"Can't remove the CA file: CA file '/ca/x.pem' doesn't exist!\n\n", ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &scripted{replies: []string{c.reply}}
			err := c.call(r)
			if len(r.sent) != 1 || r.sent[0] != c.sent {
				t.Errorf("sent %q, want [%q]", r.sent, c.sent)
			}
			if c.want == nil {
				if err != nil {
					t.Errorf("error %v, want success", err)
				}
				return
			}
			var ce *CommandError
			if !errors.Is(err, c.want) || !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *CommandError wrapping %v", err, c.want)
			}
			if ce.Reply != c.reply || ce.Command == "" {
				t.Errorf("CommandError %+v does not carry the command and reply", ce)
			}
			// The success answer of one command is not accepted for another.
			if errors.Is(c.want, ErrUnexpectedReply) {
				return
			}
			r2 := &scripted{replies: []string{help}}
			if err := c.call(r2); !errors.Is(err, ErrUnexpectedReply) {
				t.Errorf("help text answered: error %v, want ErrUnexpectedReply", err)
			}
		})
	}
}

func TestHelpersRefuseArguments(t *testing.T) {
	ctx := context.Background()
	r := &scripted{}
	calls := map[string]func() error{
		"server with space":  func() error { return SetServerWeight(ctx, r, "b", "s x", 1) },
		"backend with slash": func() error { return SetServerWeight(ctx, r, "b/c", "s", 1) },
		"empty backend":      func() error { return SetServerPort(ctx, r, "", "s", "10.0.0.1", 1) },
		"port zero":          func() error { return SetServerPort(ctx, r, "b", "s", "10.0.0.1", 0) },
		"weight too big":     func() error { return SetServerWeight(ctx, r, "b", "s", 257) },
		"negative weight":    func() error { return SetServerWeight(ctx, r, "b", "s", -1) },
		"bad state":          func() error { return SetServerState(ctx, r, "b", "s", "up") },
		"key with semicolon": func() error { return AddMap(ctx, r, "/m", "a;show info", "v") },
		"value with space":   func() error { return SetMap(ctx, r, "/m", "k", "v w") },
		"key with tab":       func() error { return DelMap(ctx, r, "/m", "k\tx") },
		"empty spec":         func() error { return AddServer(ctx, r, "b", "s", "  ") },
		"key with <<":        func() error { return DelMap(ctx, r, "/m", "k<<") },
		"spec with <<":       func() error { return AddServer(ctx, r, "b", "s", "1.2.3.4:80 <<x") },
		"crt-list 2 lines":   func() error { return AddCrtListEntry(ctx, r, "/l", "/a.pem a\n/b.pem b") },
		"crt-list empty":     func() error { return AddCrtListEntry(ctx, r, "/l", " ") },
		"empty pem":          func() error { return SetCert(ctx, r, "/a.pem", "\n\n") },
		"map entry space": func() error {
			return ReplaceMap(ctx, r, "/m", []MapEntry{{Key: "a b", Value: "v"}}, 1000)
		},
		"map entry too long": func() error {
			return ReplaceMap(ctx, r, "/m", []MapEntry{{Key: strings.Repeat("k", 100), Value: "v"}}, 50)
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if len(r.sent) != 0 {
		t.Errorf("sent %q, want nothing", r.sent)
	}
}

// TestSemicolonIsEscaped: a ';' inside an argument (RFC 3986 allows it in Route paths) is sent as
// "\;", which HAProxy reads as part of the word, not as the end of the command.
func TestSemicolonIsEscaped(t *testing.T) {
	ctx := context.Background()
	r := &scripted{replies: []string{"", "", "", "Unknown command"}}
	if err := AddMap(ctx, r, "/m", "shop.example.com/a;b", "be_http:ns:r"); err != nil {
		t.Fatal(err)
	}
	if err := DelMap(ctx, r, "/m", `x\;y`); err != nil {
		t.Fatal(err)
	}
	if err := SetMap(ctx, r, "/m", "k;", "v;"); err != nil {
		t.Fatal(err)
	}
	_ = AddServer(ctx, r, "b", "s", "1.2.3.4:80;show info")
	want := []string{
		`add map /m shop.example.com/a\;b be_http:ns:r`,
		`del map /m x\\\;y`,
		`set map /m k\; v\;`,
		`add server b/s 1.2.3.4:80\;show info`,
	}
	if !slices.Equal(r.sent, want) {
		t.Errorf("sent %q, want %q", r.sent, want)
	}
	for _, cmd := range []string{"show info;show stat", `show info\`, "show map <<", "del map /m <<x"} {
		if err := checkCommand(cmd); !errors.Is(err, ErrInvalid) {
			t.Errorf("checkCommand(%q) = %v, want ErrInvalid", cmd, err)
		}
	}
}

func TestReplaceMap(t *testing.T) {
	ctx := context.Background()
	var entries []MapEntry
	for i := range 100 {
		entries = append(entries, MapEntry{Key: fmt.Sprintf("h%03d.example.com/", i), Value: fmt.Sprintf("be_http:ns:r%03d", i)})
	}
	const maxPayload = 300
	r := &scripted{replies: []string{"New version created: 12\n"}}
	for range 20 {
		r.replies = append(r.replies, "")
	}
	if err := ReplaceMap(ctx, r, "/m.map", entries, maxPayload); err != nil {
		t.Fatalf("ReplaceMap: %v", err)
	}
	if r.sent[0] != "prepare map /m.map" || r.sent[len(r.sent)-1] != "commit map @12 /m.map" {
		t.Errorf("sent %q, want prepare first and commit @12 last", r.sent)
	}
	var got []MapEntry
	for _, s := range r.sent[1 : len(r.sent)-1] {
		cmd, payload, _ := strings.Cut(s, "\n")
		if cmd != "add map @12 /m.map <<" {
			t.Fatalf("sent %q, want add map @12 /m.map <<", cmd)
		}
		if len(payload)+1 > maxPayload {
			t.Errorf("payload of %d bytes, over %d", len(payload)+1, maxPayload)
		}
		for l := range strings.SplitSeq(payload, "\n") {
			k, v, _ := strings.Cut(l, " ")
			got = append(got, MapEntry{Key: k, Value: v})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(entries) {
		t.Errorf("payloads carry %v, want %v", got, entries)
	}
	if n := len(r.sent) - 2; n < 100*36/maxPayload {
		t.Errorf("%d payloads, too few for %d bytes each", n, maxPayload)
	}

	// Empty: prepare and commit an empty version.
	r = &scripted{replies: []string{"New version created: 3\n", ""}}
	if err := ReplaceMap(ctx, r, "/m.map", nil, maxPayload); err != nil {
		t.Fatalf("ReplaceMap(empty): %v", err)
	}
	if fmt.Sprint(r.sent) != "[prepare map /m.map commit map @3 /m.map]" {
		t.Errorf("sent %q", r.sent)
	}

	// A failed payload stops before commit.
	r = &scripted{replies: []string{"New version created: 4\n", "Version number out of range.\n"}}
	err := ReplaceMap(ctx, r, "/m.map", entries, maxPayload)
	if !errors.Is(err, ErrUnexpectedReply) {
		t.Errorf("error %v, want ErrUnexpectedReply", err)
	}
	for _, s := range r.sent {
		if strings.HasPrefix(s, "commit") {
			t.Errorf("committed after a failed payload: %q", r.sent)
		}
	}
	// An unknown map.
	r = &scripted{replies: []string{"Unknown map identifier. Please use #<id> or <file>.\n"}}
	if err := ReplaceMap(ctx, r, "/x.map", entries, maxPayload); !errors.Is(err, ErrNotFound) {
		t.Errorf("error %v, want ErrNotFound", err)
	}
}

func TestStripLineNumber(t *testing.T) {
	for in, want := range map[string]string{
		"/c/a.pem": "/c/a.pem", "/c/a.pem:3": "/c/a.pem", "/c/ns:r.pem": "/c/ns:r.pem", "/c/ns:r.pem:12": "/c/ns:r.pem", "/c/a:": "/c/a:",
	} {
		if got := stripLineNumber(in); got != want {
			t.Errorf("stripLineNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDelBackendCutReply: HAProxy 3.4.7 may cut a long repetition of earlier messages before `del
// backend`'s own answer; `show backend` then says whether the backend went.
func TestDelBackendCutReply(t *testing.T) {
	ctx := context.Background()
	cut := "Server b/s1 is going DOWN for maintenance.\nServer deleted.\nServer b/s2 is going DOWN for maintenance.\n"
	for _, tc := range []struct {
		list string
		want error
	}{
		{"# name\nother\n", nil},
		{"# name\nb\nother\n", ErrUnexpectedReply},
	} {
		r := &scripted{replies: []string{cut, tc.list}}
		err := DelBackend(ctx, r, "b")
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("backend list %q: error %v, want %v", tc.list, err, tc.want)
		}
		if len(r.sent) != 2 || r.sent[1] != "show backend" {
			t.Errorf("sent %q", r.sent)
		}
	}
}
