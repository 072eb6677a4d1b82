package socket

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A model of how HAProxy's CLI reads commands from a connection (cli.c: cli_io_handler and
// cli_snd_buf read, cli_parse_request splits words), for FuzzCommandBuilders: what the builders send
// must read back as exactly the command they were asked for.
//
// Outside a payload, HAProxy reads up to a line feed or a ';' that no backslash escapes, drops a
// trailing "\r", and checks whether the line opens a payload; the two series decide that differently
// (checked against Debian's 2.6.12, 3.0.11, 3.2.26 and 3.4.7 over the admin socket):
//
//   - 2.6: a line that ends with "<<" opens a payload ("del map m k<<" waits for one), ended by an
//     empty line; the words are those before the first "<<" of the line;
//   - 3.0+: a line whose last word starts with "<<" opens a payload ended by a line equal to what
//     follows the "<<" ("del map m <<x" waits for a line "x"; 3.2 takes at most 7 characters there,
//     3.4 more, so the model takes any); the words are those before the last one.
//
// Inside a payload, lines are read whole (no escape, ';' is data) until the ending line; 2.6 drops
// the "\r" of each line first, so "\r" alone ends a 2.6 payload too. Words are split at spaces and
// tabs; a backslash makes the next character part of the word, and is dropped unless it is doubled.

// cliSeries are the two readers the model knows.
type cliSeries int

const (
	cli26 cliSeries = iota
	cli30
)

func (s cliSeries) String() string {
	if s == cli26 {
		return "2.6"
	}
	return "3.0+"
}

// cliCommand is one command as HAProxy reads it.
type cliCommand struct {
	words      []string
	hasPayload bool
	payload    string // the payload lines, each ended by "\n"
}

// errUnterminated is a command HAProxy has not finished reading when the message ends: it waits for
// more (the end of a line, or of a payload), and takes the next message as part of this command.
var errUnterminated = errors.New("unterminated")

// readCLI reads msg (what a client writes for its commands) as HAProxy of series s does.
func readCLI(msg string, s cliSeries) ([]cliCommand, error) {
	var out []cliCommand
	for msg != "" {
		line, rest, ok := cutCommandLine(msg)
		if !ok {
			return out, fmt.Errorf("line %q: %w (no line end)", msg, errUnterminated)
		}
		msg = rest
		line = strings.TrimSuffix(line, "\r")
		end, words, opens := payloadOpening(line, s)
		if !opens {
			out = append(out, cliCommand{words: splitWords(line)})
			continue
		}
		var payload strings.Builder
		for {
			pl, rest, ok := strings.Cut(msg, "\n")
			if !ok {
				return out, fmt.Errorf("payload of %q: %w (no line %q)", line, errUnterminated, end)
			}
			msg = rest
			if s == cli26 {
				pl = strings.TrimSuffix(pl, "\r")
			}
			if pl == end {
				break
			}
			payload.WriteString(pl)
			payload.WriteByte('\n')
		}
		out = append(out, cliCommand{words: splitWords(words), hasPayload: true, payload: payload.String()})
	}
	return out, nil
}

// cutCommandLine returns the text up to the first line feed or ';' that no backslash escapes.
func cutCommandLine(msg string) (line, rest string, ok bool) {
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '\\':
			i++
		case '\n', ';':
			return msg[:i], msg[i+1:], true
		}
	}
	return "", "", false
}

// payloadOpening reports whether line opens a payload, the line that ends it, and the part of line
// that holds the command's words.
func payloadOpening(line string, s cliSeries) (end, words string, opens bool) {
	if s == cli26 {
		if !strings.HasSuffix(line, payloadPattern) {
			return "", "", false
		}
		words, _, _ = strings.Cut(line, payloadPattern)
		return "", words, true
	}
	last := line[strings.LastIndexAny(line, " \t")+1:]
	if !strings.HasPrefix(last, payloadPattern) {
		return "", "", false
	}
	return strings.TrimPrefix(last, payloadPattern), strings.TrimSuffix(line, last), true
}

// payloadPattern opens a payload.
const payloadPattern = "<<"

// splitWords splits a command line into words as cli_parse_request does.
func splitWords(line string) []string {
	var words []string
	for {
		line = strings.TrimLeft(line, " \t")
		if line == "" {
			return words
		}
		var w strings.Builder
		i := 0
		for ; i < len(line) && line[i] != ' ' && line[i] != '\t'; i++ {
			if line[i] == '\\' {
				i++
				if i == len(line) {
					break
				}
				if line[i] == '\\' {
					w.WriteByte('\\')
					continue
				}
			}
			w.WriteByte(line[i])
		}
		words = append(words, w.String())
		line = line[min(i, len(line)):]
	}
}

// TestCLIModel pins the model to what HAProxy was seen doing (see the comment at the top).
func TestCLIModel(t *testing.T) {
	both := []cliSeries{cli26, cli30}
	cases := []struct {
		msg    string
		series []cliSeries
		want   []cliCommand
		err    error
	}{
		{"show map /m\n", both, []cliCommand{{words: []string{"show", "map", "/m"}}}, nil},
		{"del map /m a;add map /m b c\n", both, []cliCommand{{words: []string{"del", "map", "/m", "a"}}, {words: []string{"add", "map", "/m", "b", "c"}}}, nil},
		{`del map /m a\;b` + "\n", both, []cliCommand{{words: []string{"del", "map", "/m", "a;b"}}}, nil},
		{`del map /m a\\` + "\n", both, []cliCommand{{words: []string{"del", "map", "/m", `a\`}}}, nil},
		{"del map /m a\\\nb\n", both, []cliCommand{{words: []string{"del", "map", "/m", "a\nb"}}}, nil},
		{"del map /m a\r\n", both, []cliCommand{{words: []string{"del", "map", "/m", "a"}}}, nil},
		{"show map /m", both, nil, errUnterminated},
		{"add map /m <<\nk v\n;x y\n\n", both, []cliCommand{{words: []string{"add", "map", "/m"}, hasPayload: true, payload: "k v\n;x y\n"}}, nil},
		{"add map /m <<\nk v\n", both, nil, errUnterminated},
		// 2.6 reads "\r" alone as the empty line that ends a payload; 3.0+ does not.
		{"add map /m <<\nk v\n\r\n", []cliSeries{cli26}, []cliCommand{{words: []string{"add", "map", "/m"}, hasPayload: true, payload: "k v\n"}}, nil},
		{"add map /m <<\nk v\n\r\n", []cliSeries{cli30}, nil, errUnterminated},
		// A last word that ends with "<<" opens a payload on 2.6, one that starts with it on 3.0+.
		{"del map /m k<<\n", []cliSeries{cli26}, nil, errUnterminated},
		{"del map /m k<<\n", []cliSeries{cli30}, []cliCommand{{words: []string{"del", "map", "/m", "k<<"}}}, nil},
		{"del map /m <<x\nadd map /m k v\nx\n", []cliSeries{cli30}, []cliCommand{{words: []string{"del", "map", "/m"}, hasPayload: true, payload: "add map /m k v\n"}}, nil},
		{"set map /m b <<j\n", []cliSeries{cli26}, []cliCommand{{words: []string{"set", "map", "/m", "b", "<<j"}}}, nil},
	}
	for _, c := range cases {
		for _, s := range c.series {
			got, err := readCLI(c.msg, s)
			if !errors.Is(err, c.err) || (c.err == nil && !reflect.DeepEqual(got, c.want)) {
				t.Errorf("readCLI(%q, %s) = %+v, %v; want %+v, %v", c.msg, s, got, err, c.want, c.err)
			}
		}
	}
}
