package socket

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The replies the parser fuzz targets start from: every reply recorded from a real HAProxy, of every
// series, with the command it answers. testdata/ holds 2.6.12's (and two 3.2 `show proc`); the
// inspection transcripts of inspect/views hold each series' answers to the views' commands.

// Reply kinds: the command a reply answers, without its arguments.
const (
	kindShowProc     = "show proc"
	kindServersState = "show servers state"
	kindShowMap      = "show map"
	kindCertPaths    = "show ssl cert"
	kindCert         = "show ssl cert <path>"
	kindCrtList      = "show ssl crt-list"
	kindInfo         = "show info"
	kindGetMap       = "get map"
	kindHelp         = "help" // the help text of an unknown command: a seed of every parser
)

// transcriptsDir holds inspect/views's recorded CLI transcripts, one folder per HAProxy series.
var transcriptsDir = filepath.Join("..", "..", "inspect", "views", "testdata", "transcripts")

// recordedReply is one reply HAProxy gave, as Command returns it (normalized).
type recordedReply struct {
	source, kind, reply string
}

// testdataKinds names the command each file of testdata/ answers (by file name prefix).
var testdataKinds = []struct{ prefix, kind string }{
	{"show_proc", kindShowProc},
	{"servers_state", kindServersState},
	{"map", kindShowMap},
	{"certs", kindCertPaths},
	{"cert", kindCert},
	{"crt_list", kindCrtList},
	{"info", kindInfo},
	{"help", kindHelp},
}

// recordedReplies returns every recorded reply; a file of testdata/ that testdataKinds does not know,
// or a transcript exchange whose command replyKindOf does not know, fails the test, so that a new
// recording cannot be left out of the fuzz targets' seeds.
func recordedReplies(tb testing.TB) []recordedReply {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no recorded replies under testdata (%v)", err)
	}
	var out []recordedReply
	for _, p := range files {
		name := filepath.Base(p)
		i := slices.IndexFunc(testdataKinds, func(k struct{ prefix, kind string }) bool { return strings.HasPrefix(name, k.prefix) })
		if i < 0 {
			tb.Fatalf("testdata/%s: no reply kind for it in testdataKinds", name)
		}
		out = append(out, recordedReply{source: p, kind: testdataKinds[i].kind, reply: normalize(string(readTestFile(tb, p)))})
	}
	out = append(out,
		recordedReply{source: "inspect_test.go certChain26", kind: kindCert, reply: certChain26},
		recordedReply{source: "inspect_test.go cert34", kind: kindCert, reply: cert34})

	transcripts, err := filepath.Glob(filepath.Join(transcriptsDir, "*", "*.txt"))
	if err != nil || len(transcripts) < 8 {
		tb.Fatalf("found %d transcripts under %s (%v), want the admin and master ones of 4 series", len(transcripts), transcriptsDir, err)
	}
	for _, p := range transcripts {
		for cmd, reply := range transcriptExchanges(tb, p) {
			kind := replyKindOf(cmd)
			if kind == "" {
				tb.Fatalf("%s: no reply kind for the command %q (replyKindOf)", p, cmd)
			}
			out = append(out, recordedReply{source: p + ": " + cmd, kind: kind, reply: normalize(reply)})
		}
	}
	return out
}

// repliesOf returns the recorded replies of one kind (and the help text); it fails when there are
// none of that kind.
func repliesOf(tb testing.TB, all []recordedReply, kind string) (own, other []recordedReply) {
	tb.Helper()
	for _, r := range all {
		if r.kind == kind {
			own = append(own, r)
		} else {
			other = append(other, r)
		}
	}
	if len(own) == 0 {
		tb.Fatalf("no recorded reply of %q", kind)
	}
	return own, other
}

// replyKindOf returns the kind of reply a transcript's command gets, "" for an unknown command.
func replyKindOf(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if at, rest, ok := strings.Cut(cmd, " "); ok && strings.HasPrefix(at, "@") {
		cmd = rest // a master CLI prefix ("@!<pid>") routes the command to a worker
	}
	switch {
	case cmd == "show proc":
		return kindShowProc
	case strings.HasPrefix(cmd, "show servers state"):
		return kindServersState
	case strings.HasPrefix(cmd, "show map "):
		return kindShowMap
	case cmd == "show ssl cert":
		return kindCertPaths
	case strings.HasPrefix(cmd, "show ssl cert "):
		return kindCert
	case strings.HasPrefix(cmd, "show ssl crt-list "):
		return kindCrtList
	case cmd == "show info":
		return kindInfo
	case strings.HasPrefix(cmd, "get map "):
		return kindGetMap
	}
	return ""
}

// exchangeMark starts an exchange in a transcript: "### <command>", then the raw reply (see
// inspect/views/transcript_test.go).
const exchangeMark = "### "

// transcriptExchanges returns the command → raw reply exchanges of one transcript.
func transcriptExchanges(tb testing.TB, p string) map[string]string {
	tb.Helper()
	text := string(readTestFile(tb, p))
	out := map[string]string{}
	var cmd string
	var reply strings.Builder
	flush := func() {
		if cmd != "" {
			out[cmd] = reply.String()
		}
		reply.Reset()
	}
	for l := range strings.SplitAfterSeq(text, "\n") {
		if c, ok := strings.CutPrefix(l, exchangeMark); ok {
			flush()
			cmd = strings.TrimRight(c, "\n")
			continue
		}
		if cmd != "" {
			reply.WriteString(l)
		}
	}
	flush()
	if len(out) == 0 {
		tb.Fatalf("%s: no exchange", p)
	}
	return out
}

func readTestFile(tb testing.TB, p string) []byte {
	tb.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
