package socket

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// wireRunner is a Runner that keeps what an Admin would write for each call (the command and its
// line feed, or payloadMessage's text), after the same checks, and answers each command with
// HAProxy's success answer to the command as the CLI model reads it, so that builders of several
// commands go on.
type wireRunner struct {
	msgs []string
}

func (w *wireRunner) Command(_ context.Context, cmd string) (string, error) {
	if err := checkCommand(cmd); err != nil {
		return "", err
	}
	w.msgs = append(w.msgs, cmd+"\n")
	return successReply(cmd + "\n"), nil
}

func (w *wireRunner) Payload(_ context.Context, cmd, payload string) (string, error) {
	msg, _, err := payloadMessage(cmd, payload)
	if err != nil {
		return "", err
	}
	w.msgs = append(w.msgs, msg)
	return successReply(msg), nil
}

// successReply is HAProxy's success answer to the command msg holds (an empty one when there is
// none to give).
func successReply(msg string) string {
	cmds, err := readCLI(msg, cli30)
	if err != nil || len(cmds) != 1 {
		return ""
	}
	w := append(cmds[0].words, "", "", "", "", "")
	verb, arg := strings.Join(w[:3], " "), w[3]
	switch {
	case w[0] == "add" && w[1] == "server":
		return replyServerAdded + "\n"
	case w[0] == "del" && w[1] == "server":
		return replyServerDeleted + "\n"
	case w[0] == "set" && w[1] == "server" && w[3] == "addr":
		return fmt.Sprintf("port changed from '1' to '%s' by 'stats socket command'\n", w[6])
	case w[0] == "prepare" && w[1] == "map":
		return replyMapVersion + "1\n"
	case verb == "new ssl cert":
		return fmt.Sprintf(fmtCertCreated, arg) + "\n"
	case verb == "set ssl cert":
		return fmt.Sprintf(fmtCertTxCreated, arg) + "\n"
	case verb == "new ssl ca-file":
		return fmt.Sprintf(fmtCACreated, arg) + "\n"
	case verb == "set ssl ca-file":
		return fmt.Sprintf(fmtCATxCreated, arg) + "\n"
	case verb == "commit ssl cert", verb == "commit ssl ca-file":
		return fmt.Sprintf(fmtCommitted, arg) + "\n"
	case verb == "abort ssl cert", verb == "abort ssl ca-file":
		return fmt.Sprintf(fmtAborted, arg) + "\n"
	case verb == "del ssl cert":
		return fmt.Sprintf(fmtCertDeleted, arg) + "\n"
	case verb == "del ssl ca-file":
		return fmt.Sprintf(fmtCADeleted, arg) + "\n"
	case verb == "add ssl crt-list":
		first, _, _ := strings.Cut(cmds[0].payload, " ")
		return fmt.Sprintf(fmtCrtListAdded, strings.TrimSuffix(first, "\n"), arg) + "\n"
	case verb == "del ssl crt-list":
		return fmt.Sprintf(fmtCrtListDeleted, stripLineNumber(w[4]), arg) + "\n"
	}
	return ""
}

// wantCommand is a command a builder is asked to send: its words and, for a payload, the payload.
type wantCommand struct {
	words      []string
	hasPayload bool
	payload    string
}

func cmdOf(words ...string) wantCommand { return wantCommand{words: words} }

func payloadCmd(payload string, words ...string) wantCommand {
	return wantCommand{words: words, hasPayload: true, payload: payload}
}

// builder is one command builder under fuzzing: call runs it with the fuzzed strings a, b, c; want
// returns the commands it is asked to send for them.
type builder struct {
	name string
	call func(r Runner, a, b, c string) error
	want func(a, b, c string) []wantCommand
}

// builders are every helper of the package that builds a command from its arguments.
func builders() []builder {
	ctx := context.Background()
	ref := func(a, b string) string { return a + "/" + b }
	return []builder{
		{"AddMap", func(r Runner, a, b, c string) error { return AddMap(ctx, r, a, b, c) },
			func(a, b, c string) []wantCommand { return []wantCommand{cmdOf("add", "map", a, b, c)} }},
		{"SetMap", func(r Runner, a, b, c string) error { return SetMap(ctx, r, a, b, c) },
			func(a, b, c string) []wantCommand { return []wantCommand{cmdOf("set", "map", a, b, c)} }},
		{"DelMap", func(r Runner, a, b, _ string) error { return DelMap(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand { return []wantCommand{cmdOf("del", "map", a, b)} }},
		{"GetMap", func(r Runner, a, b, _ string) error { _, err := GetMap(ctx, r, a, b); return err },
			func(a, b, _ string) []wantCommand { return []wantCommand{cmdOf("get", "map", a, b)} }},
		{"ShowMap", func(r Runner, a, _, _ string) error { _, err := ShowMap(ctx, r, a); return err },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("show", "map", a)} }},
		{"ReplaceMap", func(r Runner, a, b, c string) error { return ReplaceMap(ctx, r, a, fuzzEntries(b), 64+len(c)) },
			func(a, b, c string) []wantCommand { return replaceMapCommands(a, fuzzEntries(b), 64+len(c)) }},
		{"AddServer", func(r Runner, a, b, c string) error { return AddServer(ctx, r, a, b, c) },
			func(a, b, c string) []wantCommand {
				return []wantCommand{cmdOf(append([]string{"add", "server", ref(a, b)}, strings.Fields(c)...)...)}
			}},
		{"DelServer", func(r Runner, a, b, _ string) error { return DelServer(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand { return []wantCommand{cmdOf("del", "server", ref(a, b))} }},
		{"SetServerWeight", func(r Runner, a, b, c string) error { return SetServerWeight(ctx, r, a, b, len(c)) },
			func(a, b, c string) []wantCommand {
				return []wantCommand{cmdOf("set", "server", ref(a, b), "weight", strconv.Itoa(len(c)))}
			}},
		{"SetServerState", func(r Runner, a, b, c string) error { return SetServerState(ctx, r, a, b, c) },
			func(a, b, c string) []wantCommand {
				return []wantCommand{cmdOf("set", "server", ref(a, b), "state", c)}
			}},
		{"EnableHealth", func(r Runner, a, b, _ string) error { return EnableHealth(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand { return []wantCommand{cmdOf("enable", "health", ref(a, b))} }},
		{"DisableHealth", func(r Runner, a, b, _ string) error { return DisableHealth(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand { return []wantCommand{cmdOf("disable", "health", ref(a, b))} }},
		{"SetServerHealth", func(r Runner, a, b, _ string) error { return SetServerHealth(ctx, r, a, b, "up") },
			func(a, b, _ string) []wantCommand {
				return []wantCommand{cmdOf("set", "server", ref(a, b), "health", "up")}
			}},
		{"SetServerPort", func(r Runner, a, b, c string) error { return SetServerPort(ctx, r, a, b, c, 1+len(c)) },
			func(a, b, c string) []wantCommand {
				return []wantCommand{cmdOf("set", "server", ref(a, b), "addr", c, "port", strconv.Itoa(1+len(c)))}
			}},
		{"ShowServersState", func(r Runner, a, _, _ string) error { _, err := ShowServersState(ctx, r, a); return err },
			func(a, _, _ string) []wantCommand {
				if a == "" {
					return []wantCommand{cmdOf("show", "servers", "state")}
				}
				return []wantCommand{cmdOf("show", "servers", "state", a)}
			}},
		{"NewCert", func(r Runner, a, _, _ string) error { return NewCert(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("new", "ssl", "cert", a)} }},
		{"SetCert", func(r Runner, a, b, _ string) error { return SetCert(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand {
				return []wantCommand{payloadCmd(pemLines(b), "set", "ssl", "cert", a)}
			}},
		{"CommitCert", func(r Runner, a, _, _ string) error { return CommitCert(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("commit", "ssl", "cert", a)} }},
		{"AbortCert", func(r Runner, a, _, _ string) error { return AbortCert(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("abort", "ssl", "cert", a)} }},
		{"DelCert", func(r Runner, a, _, _ string) error { return DelCert(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("del", "ssl", "cert", a)} }},
		{"ShowCertDetails", func(r Runner, a, _, _ string) error { _, err := ShowCertDetails(ctx, r, a); return err },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("show", "ssl", "cert", a)} }},
		{"NewCAFile", func(r Runner, a, _, _ string) error { return NewCAFile(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("new", "ssl", "ca-file", a)} }},
		{"SetCAFile", func(r Runner, a, b, _ string) error { return SetCAFile(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand {
				return []wantCommand{payloadCmd(pemLines(b), "set", "ssl", "ca-file", a)}
			}},
		{"CommitCAFile", func(r Runner, a, _, _ string) error { return CommitCAFile(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("commit", "ssl", "ca-file", a)} }},
		{"AbortCAFile", func(r Runner, a, _, _ string) error { return AbortCAFile(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("abort", "ssl", "ca-file", a)} }},
		{"DelCAFile", func(r Runner, a, _, _ string) error { return DelCAFile(ctx, r, a) },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("del", "ssl", "ca-file", a)} }},
		{"AddCrtListEntry", func(r Runner, a, b, _ string) error { return AddCrtListEntry(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand {
				return []wantCommand{payloadCmd(strings.Join(strings.Fields(b), " ")+"\n", "add", "ssl", "crt-list", a)}
			}},
		{"DelCrtListEntry", func(r Runner, a, b, _ string) error { return DelCrtListEntry(ctx, r, a, b) },
			func(a, b, _ string) []wantCommand { return []wantCommand{cmdOf("del", "ssl", "crt-list", a, b)} }},
		{"ShowCrtList", func(r Runner, a, _, _ string) error { _, err := ShowCrtList(ctx, r, a); return err },
			func(a, _, _ string) []wantCommand { return []wantCommand{cmdOf("show", "ssl", "crt-list", a)} }},
	}
}

// pemLines is a PEM bundle as it must reach HAProxy: its lines without blank ones and carriage
// returns (PEM ignores both).
func pemLines(pem string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(strings.ReplaceAll(pem, "\r", ""), "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// fuzzEntries turns one fuzzed string into map entries: one per line, the key before the first
// space and the value after it (the key alone when there is none).
func fuzzEntries(s string) []MapEntry {
	var out []MapEntry
	for l := range strings.SplitSeq(s, "\n") {
		k, v, ok := strings.Cut(l, " ")
		if !ok {
			v = k
		}
		out = append(out, MapEntry{Key: k, Value: v})
	}
	return out
}

// replaceMapCommands is what ReplaceMap is asked to send: prepare, the entries as "key value" lines in
// payloads of at most maxPayload bytes, commit.
func replaceMapCommands(mapPath string, entries []MapEntry, maxPayload int) []wantCommand {
	out := []wantCommand{cmdOf("prepare", "map", mapPath)}
	var b strings.Builder
	for _, e := range entries {
		l := e.Key + " " + e.Value + "\n"
		if b.Len()+len(l) > maxPayload {
			out = append(out, payloadCmd(b.String(), "add", "map", "@1", mapPath))
			b.Reset()
		}
		b.WriteString(l)
	}
	if b.Len() > 0 {
		out = append(out, payloadCmd(b.String(), "add", "map", "@1", mapPath))
	}
	return append(out, cmdOf("commit", "map", "@1", mapPath))
}

// FuzzCommandBuilders runs one builder (op selects it) with fuzzed arguments and reads what it sends
// with the model of HAProxy's CLI of each series (cli_model_fuzz_test.go). Either the builder refuses
// the arguments (ErrInvalid) before sending anything, or each message it sends reads back as exactly
// one command, whole, with exactly the words and payload it was asked for: no argument can end a
// command early, start a second one, hide in a payload or leave HAProxy waiting for the rest.
func FuzzCommandBuilders(f *testing.F) {
	bs := builders()
	const (
		mapPath = "/var/lib/haproxy/conf/os_http_be.map"
		backend = "be_http:ns:web"
		server  = "pod:web-0:web:http:10.0.0.1:8080"
		cert    = "/var/lib/haproxy/router/certs/ns_web.pem"
		pem     = "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHBfpegPjMCMA0GCSqGSIb3DQEBCwUAMBExDzANBgNVBAMMBnVu\n-----END CERTIFICATE-----\n"
	)
	for op, b := range bs {
		var args [3]string
		switch {
		case strings.Contains(b.name, "Map"):
			args = [3]string{mapPath, "=www.example.com/api", "be_http:ns:api"}
			if b.name == "ReplaceMap" {
				args[1] = "=www.example.com/api be_http:ns:api\nwww.example.com/api/ be_http:ns:api\n*.example.com 1"
			}
		case strings.Contains(b.name, "Server"), strings.HasSuffix(b.name, "Health"):
			args = [3]string{backend, server, "10.0.0.1:8080 id 5 weight 1 check inter 5000ms"}
			if b.name == "SetServerState" {
				args[2] = "ready"
			}
		case strings.Contains(b.name, "CrtList"):
			args = [3]string{"/var/lib/haproxy/conf/cert_config.map", cert + " [alpn h2,http/1.1] www.example.com", ""}
		default:
			args = [3]string{cert, pem + "\r\n\n" + pem, ""}
		}
		f.Add(uint8(op), args[0], args[1], args[2])
		// Arguments HAProxy would read otherwise, each in every position.
		for _, hostile := range []string{"a;b", "a\nb", "a b", `a\`, `a\;b`, "a\r", "", "\x00", "a\\\nb", "\xc2\x85", "a<<", "<<a"} {
			for i := range args {
				bad := args
				bad[i] = hostile
				f.Add(uint8(op), bad[0], bad[1], bad[2])
			}
		}
	}
	f.Fuzz(func(t *testing.T, op uint8, a, b, c string) {
		bl := bs[int(op)%len(bs)]
		w := &wireRunner{}
		err := bl.call(w, a, b, c)
		want := bl.want(a, b, c)
		if errors.Is(err, ErrInvalid) {
			if len(w.msgs) > 0 {
				t.Fatalf("%s refused its arguments (%v) after sending %q", bl.name, err, w.msgs)
			}
			return
		}
		if len(w.msgs) == 0 {
			t.Fatalf("%s sent nothing and returned %v", bl.name, err)
		}
		if err == nil && len(w.msgs) != len(want) {
			t.Fatalf("%s sent %d commands, want %d: %q", bl.name, len(w.msgs), len(want), w.msgs)
		}
		if err := checkMessages(w.msgs, want); err != nil {
			t.Fatalf("%s: %v", bl.name, err)
		}
	})
}

// checkMessages reads each message with the model of both series and returns an error unless each is
// exactly one whole command with the words and payload of its wanted command.
func checkMessages(msgs []string, want []wantCommand) error {
	for i, msg := range msgs {
		if i >= len(want) {
			return fmt.Errorf("sent more than its %d commands: %q", len(want), msgs)
		}
		wc := want[i]
		for _, s := range []cliSeries{cli26, cli30} {
			got, err := readCLI(msg, s)
			if err != nil || len(got) != 1 {
				return fmt.Errorf("message %q: HAProxy %s reads %d commands (%v), want 1", msg, s, len(got), err)
			}
			g := got[0]
			if !reflect.DeepEqual(g.words, wc.words) || g.hasPayload != wc.hasPayload || g.payload != wc.payload {
				return fmt.Errorf("message %q: HAProxy %s reads words %q payload %v %q, want words %q payload %v %q",
					msg, s, g.words, g.hasPayload, g.payload, wc.words, wc.hasPayload, wc.payload)
			}
		}
	}
	return nil
}

// TestCheckMessages shows that FuzzCommandBuilders' check fails on what a broken builder would send.
func TestCheckMessages(t *testing.T) {
	del := cmdOf("del", "map", "/m", "a;b")
	set := payloadCmd("A\nB\n", "set", "ssl", "cert", "/c")
	cases := []struct {
		msg  string
		want wantCommand
		ok   bool
	}{
		{`del map /m a\;b` + "\n", del, true},
		{"del map /m a;b\n", del, false},                               // a second command
		{"del map /m a\\\n", cmdOf("del", "map", "/m", `a\`), false},   // the line feed escaped
		{"del map /m a\n", cmdOf("del", "map", "/m", "a", "b"), false}, // a word lost
		{"set ssl cert /c <<\nA\nB\n\n", set, true},
		{"set ssl cert /c <<\nA\n\nB\n\n", set, false},            // a blank line ends the payload
		{"set ssl cert /c <<\nA\nB\n", set, false},                // no end
		{"set ssl cert /c <<\nA\nB\n\nshow map /m\n", set, false}, // a command after it
		{"set ssl cert /c\nA\nB\n\n", set, false},                 // no payload marker
	}
	for _, c := range cases {
		err := checkMessages([]string{c.msg}, []wantCommand{c.want})
		if (err == nil) != c.ok {
			t.Errorf("checkMessages(%q) = %v, want ok %v", c.msg, err, c.ok)
		}
	}
}
