package supervise

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
)

// TestDiagnose: HAProxy's alerts at a failed start (recorded from 2.6 and 3.4) name a cause and a fix.
func TestDiagnose(t *testing.T) {
	for _, c := range []struct {
		name   string
		alerts []string
		err    error
		cause  string
	}{
		{"fd limit", []string{"[ALERT]    (9665) : [/usr/sbin/haproxy.main()] Cannot raise FD limit to 101044, limit is 20000."}, nil, "file-descriptor limit"},
		{"port in use", []string{"[ALERT]    (12770) : Binding [h.cfg:9] for frontend f: cannot bind socket (Address already in use) for [127.0.0.1:18999]",
			"[ALERT]    (12770) : [/usr/sbin/haproxy.main()] Some protocols failed to start their listeners! Exiting."}, nil, "already in use"},
		{"privileged port 2.6", []string{"[ALERT]    (12807) : Binding [p80.cfg:8] for frontend f: cannot bind socket (Permission denied) for [127.0.0.1:80]"}, nil, "below 1024"},
		{"privileged port 3.4", []string{"[ALERT]    (12810) : Binding [p80.cfg:8] for frontend f: protocol tcpv4: cannot bind socket (Permission denied) for [127.0.0.1:80]."}, nil, "below 1024"},
		{"missing certificate", []string{"[ALERT]    (12772) : config : parsing [c.cfg:8] : 'bind 127.0.0.1:18997' in section 'frontend' : unable to stat SSL certificate from file '/nonexistent.pem' : No such file or directory.",
			"[ALERT]    (12772) : config : Error(s) found in configuration file : c.cfg"}, nil, "certificate file is missing"},
		{"bad template", []string{"[ALERT]    (12775) : config : parsing [k.cfg:2] : unknown keyword 'bogus-keyword' in 'global' section",
			"[ALERT]    (12775) : config : Error(s) found in configuration file : k.cfg"}, nil, "refuses the configuration"},
		{"no binary", nil, errors.New("starting /x/haproxy: fork/exec /x/haproxy: no such file or directory"), "cannot be run"},
		{"no answer", nil, errors.New("master socket not answering after 60s"), "not answering"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var lines []string
			for _, a := range c.alerts {
				lines = append(lines, alertText(a))
			}
			f := diagnose(lines, c.err)
			if !strings.Contains(f.Cause, c.cause) || f.Fix == "" {
				t.Fatalf("diagnose = %+v, want a cause with %q and a fix", f, c.cause)
			}
			if len(lines) > 0 && f.Alert != lines[0] {
				t.Errorf("alert %q, want the first one %q", f.Alert, lines[0])
			}
		})
	}
}

// TestRepeatedFailureSaysWhyOnce: a start that fails again and again for the same cause is one error
// line naming cause and fix; the later attempts and HAProxy's repeated alerts are at debug; Failure
// tells it for the readiness endpoint.
func TestRepeatedFailureSaysWhyOnce(t *testing.T) {
	dir := testkit.TempDir(t)
	bin := fakeBinary(t, `echo "[ALERT]    ($$) : [haproxy.main()] Cannot raise FD limit to 101044, limit is 20000." >&2
exit 1`)
	rec := newRecorder(t)
	s := New(bin, dir, slog.New(rec))
	r := startRun(t, s)
	waitFor(t, "three failed starts", func() bool { return len(rec.find(msgStartFailed)) >= 3 })
	if err := r.stop(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	failed := rec.find(msgStartFailed)
	if failed[0].Level != slog.LevelError || !strings.Contains(failed[0].Attrs["cause"], "file-descriptor") || failed[0].Attrs["fix"] == "" {
		t.Fatalf("first failed start %+v, want an error with cause and fix", failed[0])
	}
	for _, f := range failed[1:] {
		if f.Level != slog.LevelDebug {
			t.Errorf("a repeated failed start logged at %v", f.Level)
		}
	}
	errorAlerts := 0
	for _, o := range rec.find(msgOutput) {
		if o.Level == slog.LevelError {
			errorAlerts++
		}
	}
	if errorAlerts != 1 {
		t.Errorf("HAProxy's alert logged as an error %d times, want once", errorAlerts)
	}
	if f, ok := s.Failure(); !ok || !strings.Contains(f.Cause, "file-descriptor") {
		t.Errorf("Failure() = %+v, %v", f, ok)
	}
}

func TestKilledWorkerIsNoFailedStart(t *testing.T) {
	cases := []struct {
		alerts []string
		want   bool
	}{
		{[]string{"Current worker (22537) exited with code 137 (Killed)"}, true},
		{[]string{"Current worker (22537) exited with code 143 (Terminated)", "exit-on-failure: killing every processes with SIGTERM"}, true},
		{[]string{"Current worker (22537) exited with code 139 (Segmentation fault)"}, false},
		{[]string{"Starting frontend public: cannot bind socket (Address already in use) [0.0.0.0:80]", "Current worker (22537) exited with code 1 (Exit)"}, false},
		{[]string{"Current worker (22537) exited with code 137 (Killed)", "config : parsing [haproxy.cfg:3] : unknown keyword 'x'"}, false},
		{nil, false},
	}
	for _, c := range cases {
		if got := killedWorker(c.alerts); got != c.want {
			t.Errorf("killedWorker(%q) = %v, want %v", c.alerts, got, c.want)
		}
	}
}
