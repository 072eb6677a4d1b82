package supervise

import (
	"log/slog"
	"slices"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		line  string
		level slog.Level
		attrs []any
	}{
		{"[WARNING]  (1234) : Proxy be_http:demo:web stopped (cumulated conns: FE: 0, BE: 3).", slog.LevelDebug, nil},
		{"[WARNING]  (1233) : Reexecuting Master process", slog.LevelDebug, nil},
		{"[NOTICE]   (1233) : New worker (1240) forked", slog.LevelDebug, nil},
		{"[NOTICE]   (1233) : Loading success.", slog.LevelDebug, nil},
		{"[WARNING]  (1233) : Former worker (1234) exited with code 0 (Exit)", slog.LevelDebug, nil},
		{"[ALERT]    (1240) : backend 'be_http:demo:web' has no server available!", slog.LevelWarn, []any{"backend", "be_http:demo:web", "route", "demo/web"}},
		{"[ALERT]    (1240) : backend 'be_http:_spare:random-03' has no server available!", slog.LevelWarn, []any{"backend", "be_http:_spare:random-03"}},
		{"[WARNING]  (1240) : Server be_http:demo:web/pod:a is DOWN, reason: Layer4 connection problem.", slog.LevelWarn, nil},
		// The servers haroute (or an operator) takes out, drains or puts back: asked for, debug.
		{"[WARNING]  (1240) : Server be_http:demo:web/pod:a:web:http:10.0.0.1:8080 is going DOWN for maintenance. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.", slog.LevelDebug, nil},
		{"[WARNING]  (1240) : Server be_http:demo:web/pod:a:web:http:10.0.0.1:8080 is UP/READY (leaving forced maintenance).", slog.LevelDebug, nil},
		{"[WARNING]  (1240) : Server be_http:demo:web/pod:a enters drain state.", slog.LevelDebug, nil},
		{"[WARNING]  (1240) : Server be_http:demo:web/pod:a is UP (leaving forced drain).", slog.LevelDebug, nil},
		{"[WARNING]  (1240) : Server be_http:demo:web/pod:a was DOWN and now enters maintenance.", slog.LevelDebug, nil},
		// A health check that brings a server back: nobody asked, a warning as HAProxy has it.
		{"[WARNING]  (1240) : Server be_http:demo:web/pod:a is UP, reason: Layer4 check passed, check duration: 0ms.", slog.LevelWarn, nil},
		{"[ALERT]    (1233) : config : parsing [haproxy.cfg:12] : unknown keyword 'bogus'.", slog.LevelError, nil},
		{"[ALERT]    (2753) : [/usr/sbin/haproxy.main()] FD limit (20000) too low for maxconn=4750/maxsock=29544. Please raise 'ulimit-n' to 29544 or more to avoid any trouble.", slog.LevelWarn, nil},
		{"something else", slog.LevelInfo, nil},
	} {
		level, attrs := classify(tc.line)
		if level != tc.level || !slices.Equal(attrs, tc.attrs) {
			t.Errorf("classify(%q) = %v %v, want %v %v", tc.line, level, attrs, tc.level, tc.attrs)
		}
	}
}
