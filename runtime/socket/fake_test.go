package socket

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// closeConn, returned by a fake handler, closes the connection without a reply.
const closeConn = "\x00close"

// hang, returned by a fake handler, keeps the connection open without a reply until the test ends.
const hang = "\x00hang"

// fakeCLI emulates HAProxy's CLI framing on a unix socket: non-interactive mode (one command, the
// reply, close — or, with master set, keep the connection until "quit"), interactive mode after
// "prompt" (every reply followed by "> ", "+ " for every payload line), payloads ended by an empty
// line. The handler returns the raw reply as HAProxy writes it in non-interactive mode, e.g. "\n",
// "New server registered.\n\n" or "Server deleted.\n".
type fakeCLI struct {
	t       testing.TB
	path    string
	master  bool
	handler func(cmd string, payload []string) string
	// slow writes replies one byte at a time, so replies arrive in many reads.
	slow bool

	accepts atomic.Int64
	mu      sync.Mutex
	raw     []string // what each connection sent, in order of connection end
	cmds    []string // commands in order ("cmd <<" with payload lines after "\n")
	done    chan struct{}
	wg      sync.WaitGroup
}

// shortDir returns a short temporary directory (unix socket paths are limited to 107 bytes).
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func newFake(t testing.TB, handler func(cmd string, payload []string) string) *fakeCLI {
	t.Helper()
	f := &fakeCLI{t: t, path: filepath.Join(shortDir(t), "s.sock"), handler: handler, done: make(chan struct{})}
	return f
}

// start listens on f.path and serves until the test ends.
func (f *fakeCLI) start() *fakeCLI {
	f.t.Helper()
	l, err := net.Listen("unix", f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		close(f.done)
		l.Close()
		f.wg.Wait()
	})
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.accepts.Add(1)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.serve(c)
			}()
		}
	}()
	return f
}

func (f *fakeCLI) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

func (f *fakeCLI) rawInput() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.raw...)
}

type recordingReader struct {
	r   io.Reader
	buf strings.Builder
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf.Write(p[:n])
	return n, err
}

func (f *fakeCLI) serve(c net.Conn) {
	defer c.Close()
	rec := &recordingReader{r: c}
	defer func() {
		f.mu.Lock()
		f.raw = append(f.raw, rec.buf.String())
		f.mu.Unlock()
	}()
	go func() { <-f.done; c.Close() }()
	r := bufio.NewReader(rec)
	interactive := false
	// A write fails only when the client has gone; the read below then ends the session.
	write := func(s string) {
		if !f.slow {
			_, _ = io.WriteString(c, s)
			return
		}
		for i := range len(s) {
			_, _ = io.WriteString(c, s[i:i+1])
		}
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		var payload []string
		if strings.HasSuffix(line, "<<") {
			if interactive {
				write("+ ")
			}
			for {
				pl, err := r.ReadString('\n')
				if err != nil {
					return
				}
				pl = strings.TrimSuffix(pl, "\n")
				if pl == "" {
					break
				}
				payload = append(payload, pl)
				if interactive {
					write("+ ")
				}
			}
		}
		switch line {
		case "prompt":
			interactive = !interactive
			if interactive {
				write("\n> ")
			}
			continue
		case "quit":
			return
		}
		f.mu.Lock()
		f.cmds = append(f.cmds, strings.Join(append([]string{line}, payload...), "\n"))
		f.mu.Unlock()
		reply := f.handler(line, payload)
		switch reply {
		case closeConn:
			return
		case hang:
			<-f.done
			return
		}
		write(reply)
		if interactive {
			write("> ")
		} else if !f.master {
			return
		}
	}
}

// replies is a handler answering from a table (unknown commands get HAProxy's help text).
func replies(table map[string]string) func(string, []string) string {
	return func(cmd string, _ []string) string {
		if r, ok := table[cmd]; ok {
			return r
		}
		return "Unknown command, but maybe one of the following ones is a better match:\n  help [<command>]                        : list matching or all commands\n\n"
	}
}
