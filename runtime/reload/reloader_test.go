package reload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// setup writes v1 into a new directory and returns a Reloader on it with the fake check binary.
func setup(t *testing.T, m *fakeMaster, extra ...render.File) (*Reloader, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	if err := WriteFiles(dir, version("v1", extra...)); err != nil {
		t.Fatal(err)
	}
	r := &Reloader{Binary: fakeHAProxy(t), Dir: dir, Master: m, WaitTimeout: 5 * time.Second}
	return r, tree(t, dir)
}

func TestReloadSuccess(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *fakeMaster
	}{
		{"2.6", newFakeMaster(reloadOK)},
		{"2.6 connection dropped", func() *fakeMaster { m := newFakeMaster(reloadOK); m.dropConn = true; return m }()},
		{"2.7 sync", newFakeMaster(reloadSyncOK)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.keepOld = true
			r, _ := setup(t, tc.m)
			next := version("v2")
			res, err := r.Reload(context.Background(), next)
			if err != nil {
				t.Fatal(err)
			}
			if res.Worker != 201 || res.OldWorkers != 1 || res.Reloads != 1 {
				t.Errorf("result %+v, want worker 201, 1 old worker, 1 reload", res)
			}
			if res.Sent.IsZero() || res.Duration <= 0 {
				t.Errorf("result %+v: no send time or duration", res)
			}
			if n := len(tc.m.reloadsSent()); n != 1 {
				t.Errorf("%d reload commands, want 1", n)
			}
			want := map[string]string{}
			for _, f := range next {
				want[f.Path] = string(f.Data)
			}
			equalTrees(t, "after reload", tree(t, r.Dir), want)
		})
	}
}

func TestReloadInvalidConfigRestoresLastGood(t *testing.T) {
	for _, tc := range []struct{ name, marker, output string }{
		{"refused", "INVALID", "unknown keyword 'INVALID'"},
		{"crash", "SEGV", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeMaster(reloadOK)
			// v1 has a second certificate that v2 drops; v2 adds a CA file and another file.
			r, before := setup(t, m, render.File{Path: "router/certs/ns:old.pem", Data: []byte("old\n")})
			next := []render.File{
				{Path: "conf/haproxy.cfg", Data: []byte("global\n " + tc.marker + "\n")},
				{Path: "conf/os_http_be.map", Data: []byte("changed\n")},
				{Path: "router/certs/ns:www.pem", Data: []byte("cert v2\n")},
				{Path: "router/cacerts/ns:new.pem", Data: []byte("ca\n")},
				{Path: "conf/notes.txt", Data: []byte("new\n")},
			}
			_, err := r.Reload(context.Background(), next)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v, want ErrInvalidConfig", err)
			}
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is no *CheckError", err)
			}
			if !strings.Contains(ce.Output, tc.output) || !strings.Contains(err.Error(), tc.output) {
				t.Errorf("error %q does not carry HAProxy's output %q", err, tc.output)
			}
			if tc.marker == "SEGV" && !strings.Contains(ce.Status, "signal") {
				t.Errorf("status %q does not name the signal", ce.Status)
			}
			if n := len(m.reloadsSent()); n != 0 {
				t.Errorf("%d reload commands after a refused check, want 0", n)
			}
			equalTrees(t, "after a refused check", tree(t, r.Dir), before)
		})
	}
}

func TestReloadFailureRestoresLastGood(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		m         *fakeMaster
	}{
		{"2.6 failed counter", "failed reloads", newFakeMaster(reloadFail)},
		{"2.7 Success=0", "cannot bind socket", newFakeMaster(reloadSyncFail)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, before := setup(t, tc.m)
			_, err := r.Reload(context.Background(), version("v2", render.File{Path: "conf/extra.map", Data: []byte("k v\n")}))
			if !errors.Is(err, ErrReloadFailed) {
				t.Fatalf("error %v, want ErrReloadFailed", err)
			}
			if !strings.Contains(err.Error(), tc.log) {
				t.Errorf("error %q does not say %q", err, tc.log)
			}
			equalTrees(t, "after a failed reload", tree(t, r.Dir), before)
		})
	}
}

// TestReloadFailureAfterFailure31: on 3.1+ the failed-reload counter stops at 1, so when the reply of a
// second failed reload is lost, the failure shows only as "# workers" empty with the same worker
// serving; the version of the master says to read it so.
func TestReloadFailureAfterFailure31(t *testing.T) {
	m := newFakeMaster(reloadFail31)
	m.dropConn = true
	m.st.Version = socket.Version{Major: 3, Minor: 2, Patch: 26, Text: "3.2.26-1"}
	m.st.Failed = 1 // an earlier failure since the last good reload
	r, before := setup(t, m)
	_, err := r.Reload(context.Background(), version("v2"))
	if !errors.Is(err, ErrReloadFailed) || !strings.Contains(err.Error(), "worker 101 still serving") {
		t.Fatalf("error %v, want ErrReloadFailed naming worker 101", err)
	}
	equalTrees(t, "after a failed reload", tree(t, r.Dir), before)
	if ps, _ := m.ShowProc(context.Background()); ps.Failed != 1 {
		t.Fatalf("fixture: failed counter %d", ps.Failed)
	}
}

// TestReloadInProgressIsSentAgain: a 3.1+ master refuses a reload while another one's worker still
// starts; the Reloader sends it again and the reload goes through.
func TestReloadInProgressIsSentAgain(t *testing.T) {
	m := newFakeMaster(reloadSyncOK)
	m.busy = 2
	r, _ := setup(t, m)
	res, err := r.Reload(context.Background(), version("v2"))
	if err != nil || res.Worker == 101 {
		t.Fatalf("reload: %+v, %v", res, err)
	}
	if n := len(m.reloadsSent()); n != 3 {
		t.Fatalf("%d reload commands, want 3 (two refused)", n)
	}
}

func TestReloadTimeoutKeepsNewFiles(t *testing.T) {
	m := newFakeMaster(reloadNever)
	r, _ := setup(t, m)
	r.WaitTimeout = 150 * time.Millisecond
	next := version("v2")
	_, err := r.Reload(context.Background(), next)
	if !errors.Is(err, ErrReloadTimeout) {
		t.Fatalf("error %v, want ErrReloadTimeout", err)
	}
	if got := tree(t, r.Dir)["conf/haproxy.cfg"]; got != string(next[0].Data) {
		t.Errorf("haproxy.cfg = %q after a timeout, want the new file", got)
	}
}

func TestReloadCancelledWhileWaiting(t *testing.T) {
	m := newFakeMaster(reloadNever)
	r, _ := setup(t, m)
	r.outcomeGrace = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := r.Reload(ctx, version("v2"))
	if !errors.Is(err, ErrReloadTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want ErrReloadTimeout wrapping the context's error", err)
	}
}

// TestReloadRefusedWhileStopping: the caller's context ends while the master has the reload command
// (haroute stopping); the reload is still followed to its outcome, and HAProxy's refusal puts the
// last good files back instead of leaving the refused ones for HAProxy's next start.
func TestReloadRefusedWhileStopping(t *testing.T) {
	for _, o := range []outcome{reloadSyncFail, reloadFail} {
		m := newFakeMaster(o)
		m.gate, m.reached = make(chan struct{}), make(chan struct{})
		reached := m.reached
		r, before := setup(t, m)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select { // the master has the command: the check is over
			case <-reached:
			case <-time.After(10 * time.Second):
			}
			cancel()
			time.Sleep(50 * time.Millisecond)
			close(m.gate) // the master answers after the caller gave up
		}()
		_, err := r.Reload(ctx, version("v2"))
		if !errors.Is(err, ErrReloadFailed) {
			t.Fatalf("outcome %v: error %v, want ErrReloadFailed", o, err)
		}
		equalTrees(t, "after a reload refused while stopping", tree(t, r.Dir), before)
	}
}

func TestReloadMinInterval(t *testing.T) {
	m := newFakeMaster(reloadOK)
	r, _ := setup(t, m)
	r.MinInterval = 200 * time.Millisecond
	var results []Result
	for _, v := range []string{"v2", "v3", "v4"} {
		res, err := r.Reload(context.Background(), version(v))
		if err != nil {
			t.Fatalf("reload %s: %v", v, err)
		}
		results = append(results, res)
	}
	sent := m.reloadsSent()
	if len(sent) != 3 {
		t.Fatalf("%d reload commands, want 3", len(sent))
	}
	for i := 1; i < len(results); i++ {
		if gap := results[i].Sent.Sub(results[i-1].Sent); gap < r.MinInterval {
			t.Errorf("reload %d sent %v after the previous one, before MinInterval %v", i+1, gap, r.MinInterval)
		}
		if results[i].Reloads != results[i-1].Reloads+1 {
			t.Errorf("reload counters %d then %d", results[i-1].Reloads, results[i].Reloads)
		}
	}

	// A context that ends during the wait sends nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.Reload(ctx, version("v5")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", err)
	}
	if n := len(m.reloadsSent()); n != 3 {
		t.Errorf("%d reload commands after a cancelled wait, want 3", n)
	}
}

func TestHoldOpsDelaysReload(t *testing.T) {
	m := newFakeMaster(reloadOK)
	r, before := setup(t, m)
	release := r.HoldOps()
	done := make(chan error, 1)
	go func() {
		_, err := r.Reload(context.Background(), version("v2"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("reload finished while ops were held: %v", err)
	case <-time.After(150 * time.Millisecond):
	}
	if n := len(m.reloadsSent()); n != 0 {
		t.Errorf("%d reload commands while ops were held", n)
	}
	equalTrees(t, "while ops are held", tree(t, r.Dir), before)
	release()
	release() // a second call is harmless
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reload did not finish after ops were released")
	}
}

func TestHoldOpsWaitsForReload(t *testing.T) {
	m := newFakeMaster(reloadOK)
	m.gate = make(chan struct{})
	r, _ := setup(t, m)
	done := make(chan error, 1)
	go func() {
		_, err := r.Reload(context.Background(), version("v2"))
		done <- err
	}()
	// Wait until the reload has written its files (it holds the ops from then on).
	deadline := time.Now().Add(10 * time.Second)
	for tree(t, r.Dir)["conf/haproxy.cfg"] != "global # v2\n" {
		if time.Now().After(deadline) {
			t.Fatal("reload did not write its files")
		}
		time.Sleep(5 * time.Millisecond)
	}
	held := make(chan struct{})
	go func() {
		release := r.HoldOps()
		close(held)
		release()
	}()
	select {
	case <-held:
		t.Fatal("HoldOps returned while a reload was in flight")
	case <-time.After(150 * time.Millisecond):
	}
	close(m.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("HoldOps still blocked after the reload")
	}
}
