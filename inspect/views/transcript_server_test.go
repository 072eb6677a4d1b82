package views_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/inspect/views"
)

// connTimeout bounds one connection to a test socket server: the views' own timeout is 5 s.
const connTimeout = 10 * time.Second

// rerecordHint says how to record a command the transcripts lack.
const rerecordHint = "re-record the transcripts (see TestRecordTranscripts), then run go test ./inspect/views/ -run '^TestGolden' -update"

// answerFunc answers one CLI command with HAProxy's raw non-interactive reply; false closes the
// connection without a reply (the function has reported why).
type answerFunc func(cmd string) (string, bool)

// cliServer answers on a unix socket with the framing of HAProxy's CLI, as runtime/socket's clients
// expect it:
//
//   - admin socket, non-interactive: one command line, the reply, then the connection closes
//     (socket.Admin.Command);
//   - master CLI, non-interactive: the connection stays open after each reply until "quit" (the
//     client sends "<command>\nquit\n" and reads to the end, socket.Master.Command);
//   - interactive mode after "prompt" on either (socket.Session): "prompt" is answered with "\n> ",
//     every reply is followed by the prompt "> ", and the connection stays open; a second "prompt"
//     leaves the mode.
//
// Commands with a payload ("<command> <<") are refused as unrecorded: the views only read.
type cliServer struct {
	t      testing.TB
	name   string // "admin" or "master", for messages
	master bool
	answer answerFunc
	l      net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
}

// serveCLI listens on path and answers until the test ends.
func serveCLI(t testing.TB, name, path string, master bool, answer answerFunc) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("%s socket: %v", name, err)
	}
	s := &cliServer{t: t, name: name, master: master, answer: answer, l: l, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.stop)
}

func (s *cliServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// stop closes the listener and every open connection, and waits for their goroutines.
func (s *cliServer) stop() {
	_ = s.l.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *cliServer) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(connTimeout))
	r := bufio.NewReader(c)
	interactive := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if line != "" {
				s.t.Errorf("%s socket: command %q without its line break", s.name, line)
			}
			return
		}
		cmd := strings.TrimSuffix(line, "\n")
		switch {
		case cmd == "prompt":
			interactive = !interactive
			if interactive {
				_, _ = io.WriteString(c, "\n> ")
			}
			continue
		case cmd == "quit":
			return
		case strings.HasSuffix(strings.TrimRight(cmd, " "), "<<"):
			s.t.Errorf("%s socket: payload command %q: the views only read, and the transcripts hold no payloads", s.name, cmd)
			return
		}
		reply, ok := s.answer(cmd)
		if !ok {
			return
		}
		if interactive {
			reply += "> "
		}
		if _, err := io.WriteString(c, reply); err != nil {
			s.t.Errorf("%s socket: reply to %q: %v", s.name, cmd, err)
			return
		}
		if !interactive && !s.master {
			return
		}
	}
}

// replayAnswer answers from a transcript and fails the test on a command it lacks.
func replayAnswer(t testing.TB, name string, tr *transcript) answerFunc {
	return func(cmd string) (string, bool) {
		reply, ok := tr.reply(cmd)
		if !ok {
			t.Errorf("%s socket: the views sent %q, which the transcript does not hold: %s", name, cmd, rerecordHint)
		}
		return reply, ok
	}
}

// serveState serves GET /state on a unix socket with what answer returns (nil: the request fails
// with 500, answer has reported why); any other request fails the test.
func serveState(t testing.TB, path string, answer func() []byte) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("state socket: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/state" {
			t.Errorf("state socket: the views sent %s %s, which the transcript does not hold: %s", r.Method, r.URL.Path, rerecordHint)
			http.Error(w, "not recorded", http.StatusNotFound)
			return
		}
		body := answer()
		if body == nil {
			http.Error(w, "no state", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: connTimeout}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), connTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("state socket: shutdown: %v", err)
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("state socket: %v", err)
		}
	})
}

// socketDir returns a new short temporary directory for unix sockets (their paths are limited to
// 107 bytes, which t.TempDir's names can exceed), removed when the test ends.
func socketDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "inspect-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// serveRecording starts the three sockets of a recording in a new directory (CLI commands answered
// by answer's functions, the state by state) and returns them as the views' sources.
func serveRecording(t testing.TB, admin, master answerFunc, state func() []byte) views.Sources {
	t.Helper()
	dir := socketDir(t)
	src := views.Sources{
		State:  filepath.Join(dir, "state.sock"),
		Admin:  filepath.Join(dir, "admin.sock"),
		Master: filepath.Join(dir, "master.sock"),
	}
	serveCLI(t, "admin", src.Admin, false, admin)
	serveCLI(t, "master", src.Master, true, master)
	serveState(t, src.State, state)
	return src
}

// replay serves a recording's transcripts and returns the sockets.
func replay(t testing.TB, rec recording) views.Sources {
	t.Helper()
	return serveRecording(t, replayAnswer(t, "admin", rec.admin), replayAnswer(t, "master", rec.master), func() []byte {
		body, ok := rec.state.get()
		if !ok {
			t.Errorf("state socket: no recorded state: %s", rerecordHint)
			return nil
		}
		return body
	})
}
