package views_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Recorded socket transcripts: testdata/transcripts/<series>/ holds, for one HAProxy series, what
// the inspection views asked and what they were answered, recorded by TestRecordTranscripts
// (transcript_record_test.go) and replayed by TestGoldenViews (golden_views_test.go):
//
//   - admin.txt: HAProxy's admin socket (the worker's CLI);
//   - master.txt: HAProxy's master CLI;
//   - state.json: haroute's answer to GET /state on its state socket, with its times fixed.
//
// A CLI transcript is text: comment lines ("# ...") first, then one exchange per command, a line
// "### <command>" followed by HAProxy's raw reply byte for byte, as HAProxy writes it in
// non-interactive mode (so it ends with HAProxy's empty line). A reply therefore has to end with a
// line break and may not hold a line starting with "### "; the recorder refuses to write one that
// does not fit. Each command appears once: the first reply recorded is the one replayed.
const (
	transcriptsDir = "testdata/transcripts"
	adminFile      = "admin.txt"
	masterFile     = "master.txt"
	stateFile      = "state.json"
	// exchangeMark starts an exchange in a CLI transcript.
	exchangeMark = "### "
)

// transcriptDir returns the transcripts of one HAProxy series.
func transcriptDir(series string) string {
	return filepath.Join(filepath.FromSlash(transcriptsDir), series)
}

// recordedSeries returns the HAProxy series that have transcripts (their folder names), sorted.
func recordedSeries() ([]string, error) {
	entries, err := os.ReadDir(filepath.FromSlash(transcriptsDir))
	if err != nil {
		return nil, fmt.Errorf("transcripts: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// transcript is the exchanges of one CLI socket, in the order they were first made; safe for
// concurrent use (a socket server answers each connection on its own goroutine).
type transcript struct {
	mu      sync.Mutex
	header  []string // comment lines, without "# "
	cmds    []string
	replies map[string]string
}

func newTranscript(header ...string) *transcript {
	return &transcript{header: header, replies: map[string]string{}}
}

// reply returns the recorded reply to cmd.
func (tr *transcript) reply(cmd string) (string, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	r, ok := tr.replies[cmd]
	return r, ok
}

// add records the reply to cmd unless cmd already has one, and returns the reply that stays.
func (tr *transcript) add(cmd, reply string) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if r, ok := tr.replies[cmd]; ok {
		return r
	}
	tr.cmds = append(tr.cmds, cmd)
	tr.replies[cmd] = reply
	return reply
}

// commands returns the recorded commands in order.
func (tr *transcript) commands() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.cmds)
}

// format returns the transcript's text, or an error naming an exchange the format cannot hold.
func (tr *transcript) format() ([]byte, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var b bytes.Buffer
	for _, h := range tr.header {
		b.WriteString(strings.TrimRight("# "+h, " ") + "\n")
	}
	for _, cmd := range tr.cmds {
		reply := tr.replies[cmd]
		switch {
		case strings.ContainsAny(cmd, "\n\r"):
			return nil, fmt.Errorf("command %q holds a line break", cmd)
		case !strings.HasSuffix(reply, "\n"):
			return nil, fmt.Errorf("the reply to %q does not end with a line break: %q", cmd, reply)
		case strings.HasPrefix(reply, exchangeMark) || strings.Contains(reply, "\n"+exchangeMark):
			return nil, fmt.Errorf("the reply to %q holds a line starting with %q", cmd, exchangeMark)
		}
		b.WriteString(exchangeMark + cmd + "\n" + reply)
	}
	return b.Bytes(), nil
}

// parseTranscript reads a CLI transcript (see transcriptsDir).
func parseTranscript(name string, data []byte) (*transcript, error) {
	tr := newTranscript()
	text := string(data)
	for text != "" && !strings.HasPrefix(text, exchangeMark) {
		line, rest, _ := strings.Cut(text, "\n")
		if !strings.HasPrefix(line, "#") {
			return nil, fmt.Errorf("%s: line %q before the first exchange is not a comment", name, line)
		}
		tr.header = append(tr.header, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
		text = rest
	}
	for text != "" {
		head, rest, ok := strings.Cut(text, "\n")
		if !ok {
			return nil, fmt.Errorf("%s: exchange %q has no reply", name, head)
		}
		cmd := strings.TrimPrefix(head, exchangeMark)
		reply := rest
		if i := strings.Index(rest, "\n"+exchangeMark); i >= 0 {
			reply, text = rest[:i+1], rest[i+1:]
		} else {
			text = ""
		}
		if _, dup := tr.replies[cmd]; dup {
			return nil, fmt.Errorf("%s: command %q recorded twice", name, cmd)
		}
		tr.add(cmd, reply)
	}
	return tr, nil
}

// readTranscript reads the CLI transcript file of a series.
func readTranscript(series, file string) (*transcript, error) {
	path := filepath.Join(transcriptDir(series), file)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return parseTranscript(path, data)
}

// recording is what one series answered: both CLI transcripts and the state.
type recording struct {
	admin, master *transcript
	state         *stateRecord
}

// readRecording reads the transcripts of a series.
func readRecording(series string) (recording, error) {
	admin, err := readTranscript(series, adminFile)
	if err != nil {
		return recording{}, err
	}
	master, err := readTranscript(series, masterFile)
	if err != nil {
		return recording{}, err
	}
	state, err := os.ReadFile(filepath.Join(transcriptDir(series), stateFile))
	if err != nil {
		return recording{}, fmt.Errorf("transcript: %w", err)
	}
	return recording{admin: admin, master: master, state: &stateRecord{body: state}}, nil
}

// write replaces the transcripts of series with rec (the folder then holds exactly these files).
func (rec recording) write(series string) error {
	admin, err := rec.admin.format()
	if err != nil {
		return fmt.Errorf("admin transcript: %w", err)
	}
	master, err := rec.master.format()
	if err != nil {
		return fmt.Errorf("master transcript: %w", err)
	}
	state, ok := rec.state.get()
	if !ok {
		return fmt.Errorf("state transcript: GET /state was never asked")
	}
	dir := transcriptDir(series)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("transcripts: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("transcripts: %w", err)
	}
	for file, data := range map[string][]byte{adminFile: admin, masterFile: master, stateFile: state} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			return fmt.Errorf("transcripts: %w", err)
		}
	}
	return nil
}

// stateRecord is the recorded answer of the state socket (nil body: not asked yet).
type stateRecord struct {
	mu   sync.Mutex
	body []byte
}

func (s *stateRecord) get() ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.body, s.body != nil
}

// set records body unless an answer is recorded already, and returns the answer that stays.
func (s *stateRecord) set(body []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.body == nil {
		s.body = body
	}
	return s.body
}
