package reload

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// fakeCheckScript stands in for `haproxy -c -f CFG -f BACKENDS`: a configuration (haproxy.cfg or
// a backend file) containing SEGV crashes it, one containing INVALID is refused, anything else is
// valid.
const fakeCheckScript = `#!/bin/sh
if grep -rqs SEGV "$3" "$5"; then kill -SEGV $$; fi
if grep -rqs INVALID "$3" "$5"; then echo "[ALERT] parsing [$3:1]: unknown keyword 'INVALID'" >&2; exit 1; fi
echo "Configuration file is valid"
`

// fakeHAProxy writes the fake check binary and returns its path.
func fakeHAProxy(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "haproxy")
	if err := os.WriteFile(p, []byte(fakeCheckScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// outcome is what the fake master does with a reload command.
type outcome int

const (
	reloadOK       outcome = iota // 2.6: counter +1, a new worker
	reloadFail                    // 2.6: counter +1, failed +1, the old worker stays
	reloadNever                   // nothing happens
	reloadSyncOK                  // 2.7+: Success=1
	reloadSyncFail                // 2.7+: Success=0
	// reloadFail31 is a 3.1+ master's failed reload whose reply was lost: the counter rises, the
	// failed counter stays at most 1, and the serving worker moves under "# old workers".
	reloadFail31
)

// fakeMaster simulates the master CLI: a reload takes effect after `delay` show proc calls.
type fakeMaster struct {
	mu      sync.Mutex
	st      socket.ProcState
	outcome outcome
	delay   int
	// keepOld keeps the previous worker as an old worker after a successful reload.
	keepOld bool
	// dropConn makes Reload return an error although the command went through.
	dropConn bool
	// gate, when set, blocks Reload until it is closed; reached, when set, is closed when Reload is
	// called.
	gate, reached chan struct{}
	// busy makes the next Reload calls answer "Another reload is still in progress." (3.1+).
	busy    int
	pending int
	nextPID int
	sent    []time.Time
}

func newFakeMaster(o outcome) *fakeMaster {
	return &fakeMaster{
		outcome: o,
		delay:   3,
		nextPID: 200,
		st: socket.ProcState{
			Master:  socket.Proc{PID: 100, Type: "master"},
			Workers: []socket.Proc{{PID: 101, Type: "worker"}},
		},
	}
}

func (f *fakeMaster) ShowProc(ctx context.Context) (socket.ProcState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending > 0 {
		f.pending--
		if f.pending == 0 {
			f.apply()
		}
	}
	st := f.st
	st.Workers = slices.Clone(f.st.Workers)
	return st, nil
}

func (f *fakeMaster) Reload(ctx context.Context) (socket.ReloadReply, error) {
	if f.reached != nil {
		close(f.reached)
		f.reached = nil
	}
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, time.Now())
	if f.busy > 0 {
		f.busy--
		return socket.ReloadReply{Sync: true, InProgress: true, Log: "Another reload is still in progress."}, nil
	}
	switch f.outcome {
	case reloadSyncOK:
		f.apply()
		return socket.ReloadReply{Sync: true, Success: true, Log: "Loading success."}, nil
	case reloadSyncFail:
		return socket.ReloadReply{Sync: true, Success: false, Log: "[ALERT] cannot bind socket"}, nil
	case reloadNever:
	default:
		f.pending = f.delay
	}
	if f.dropConn {
		return socket.ReloadReply{}, errors.New("connection reset by peer")
	}
	return socket.ReloadReply{}, nil
}

// apply carries out a reload (f.mu held).
func (f *fakeMaster) apply() {
	f.st.Master.Reloads++
	var cur socket.Proc
	var old []socket.Proc
	for _, w := range f.st.Workers {
		if w.Old {
			old = append(old, w)
		} else {
			cur = w
		}
	}
	cur.Reloads++
	switch f.outcome {
	case reloadFail:
		f.st.Failed++
		f.st.Workers = append([]socket.Proc{cur}, old...)
	case reloadFail31:
		f.st.Failed = 1
		if cur.PID != 0 {
			cur.Old = true
			old = append([]socket.Proc{cur}, old...)
		}
		f.st.Workers = old
	default:
		f.nextPID++
		if f.keepOld {
			cur.Old = true
			old = append([]socket.Proc{cur}, old...)
		}
		f.st.Workers = append([]socket.Proc{{PID: f.nextPID, Type: "worker"}}, old...)
	}
}

func (f *fakeMaster) reloadsSent() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// version returns a complete file set tagged v; extra files are added.
func version(v string, extra ...render.File) []render.File {
	files := []render.File{
		{Path: "conf/haproxy.cfg", Data: []byte("global # " + v + "\n")},
		{Path: "conf/os_http_be.map", Data: []byte("www.example.com/ be_http:ns:" + v + "\n")},
		{Path: "router/certs/ns:www.pem", Data: []byte("cert " + v + "\n")},
	}
	return append(files, extra...)
}

// tree returns every regular file under dir (relative slash path → content), temporary files included.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			// A temporary file that a writer running meanwhile renamed: not part of the tree.
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalTrees(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s missing", what, p)
		} else if g != w {
			t.Errorf("%s: %s = %q, want %q", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: unexpected file %s", what, p)
		}
	}
}
