package render

import (
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// testAccessLog is an access log with every setting the template renders.
func testAccessLog() model.AccessLog {
	return model.AccessLog{
		Address: "[fd00::7]:5140", MaxLength: 2048, Facility: "local2", Level: "info",
		HTTPFormat: `{"route":"%b","status":%ST} #%[capture.req.hdr(0)] $HOME`, DontLogNull: true,
		CaptureRequestHeaders: "X-Request-Id:64,User-Agent:128", CaptureResponseHeaders: "Content-Type:32",
		CaptureCookie: model.CaptureCookie{Name: "session", Exact: true, MaxLength: 100},
	}
}

func TestRenderAccessLog(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	cfg.Settings.AccessLog = testAccessLog()
	out := renderConfig(t, cfg, defaultOpts(f, t))

	for header, lines := range map[string][]string{
		"global": {"  log [fd00::7]:5140 len 2048 local2 info", "  log-send-hostname", "  tune.http.cookielen 100"},
		"defaults": {
			`  log-format '{"route":"%b","status":%ST} #%[capture.req.hdr(0)] $HOME'`, "  log global", "  option dontlognull",
		},
		"frontend public_ssl": {"  option tcplog"},
	} {
		sec := section(t, out, header)
		for _, line := range lines {
			if !hasLine(sec, line) {
				t.Errorf("%s has no line %q:\n%s", header, line, sec)
			}
		}
	}
	captures := []string{
		"  capture request header X-Request-Id len 64", "  capture request header User-Agent len 128",
		"  capture response header Content-Type len 32", "  capture cookie session= len 100",
	}
	for _, fe := range []string{"frontend public", "frontend fe_sni", "frontend fe_no_sni"} {
		sec := section(t, out, fe)
		// In this order, right after the bind line: capture slots are numbered in declaration order.
		if want := strings.Join(captures, "\n") + "\n"; !strings.Contains(sec, want) {
			t.Errorf("%s lacks the captures in order:\n%s", fe, sec)
		}
	}
	if strings.Contains(section(t, out, "defaults"), "option httplog") || strings.Contains(section(t, out, "frontend public_ssl"), "capture") {
		t.Error("httplog with a custom format, or captures on public_ssl")
	}

	// Without a custom format: httplog. A short prefix cookie: no tune.http.cookielen.
	cfg.Settings.AccessLog.HTTPFormat = ""
	cfg.Settings.AccessLog.CaptureCookie = model.CaptureCookie{Name: "sess", MaxLength: 63}
	out = renderConfig(t, cfg, defaultOpts(f, t))
	if !hasLine(section(t, out, "defaults"), "  option httplog") || strings.Contains(out, "log-format") ||
		strings.Contains(out, "cookielen") || !hasLine(section(t, out, "frontend public"), "  capture cookie sess len 63") {
		t.Errorf("httplog, prefix cookie:\n%s", out)
	}
}

// TestRenderWithoutAccessLog: the zero AccessLog (OpenShift's default) renders no line of it.
func TestRenderWithoutAccessLog(t *testing.T) {
	f := newFixture(t)
	out := renderConfig(t, f.model(t), defaultOpts(f, t))
	for _, bad := range []string{"log ", "log-", "httplog", "tcplog", "dontlognull", "capture", "cookielen"} {
		if strings.Contains(out, "\n  "+bad) {
			t.Errorf("config without access log contains %q", bad)
		}
	}
}

// TestRenderRefusesHostileAccessLog: a hand-made model whose access log would break or extend a line
// of haproxy.cfg is refused before the template runs.
func TestRenderRefusesHostileAccessLog(t *testing.T) {
	f := newFixture(t)
	opts := defaultOpts(f, t)
	for name, mutate := range map[string]func(*model.AccessLog){
		"address with newline":     func(a *model.AccessLog) { a.Address = "127.0.0.1:514\n  stats socket /tmp/s level admin" },
		"address with words":       func(a *model.AccessLog) { a.Address = "127.0.0.1:514 local0" },
		"address with env":         func(a *model.AccessLog) { a.Address = "${SYSLOG}" },
		"level with words":         func(a *model.AccessLog) { a.Level = "info\n  log-send-hostname" },
		"facility":                 func(a *model.AccessLog) { a.Facility = "local1 debug" },
		"length":                   func(a *model.AccessLog) { a.MaxLength = 70000 },
		"format with quote":        func(a *model.AccessLog) { a.HTTPFormat = "%b' \n  stats socket /tmp/s level admin" },
		"format with newline":      func(a *model.AccessLog) { a.HTTPFormat = "%b\n  stats socket /tmp/s level admin" },
		"format with backslash":    func(a *model.AccessLog) { a.HTTPFormat = `%b\'` },
		"format with env":          func(a *model.AccessLog) { a.HTTPFormat = "${HOME}" },
		"capture name with space":  func(a *model.AccessLog) { a.CaptureRequestHeaders = "X-A len 1\n  stats socket /tmp/s:5" },
		"capture name with hash":   func(a *model.AccessLog) { a.CaptureResponseHeaders = "X#A:5" },
		"cookie name with equals":  func(a *model.AccessLog) { a.CaptureCookie.Name = "a=b" },
		"cookie length":            func(a *model.AccessLog) { a.CaptureCookie.MaxLength = -1 },
		"settings without address": func(a *model.AccessLog) { a.Address = "" },
	} {
		cfg := f.model(t)
		cfg.Settings.AccessLog = testAccessLog()
		mutate(&cfg.Settings.AccessLog)
		if _, err := Render(cfg, opts); err == nil {
			t.Errorf("%s: Render succeeded", name)
		} else if !strings.HasPrefix(err.Error(), "render: ") {
			t.Errorf("%s: error without context: %v", name, err)
		}
	}
}

func TestQuoteLogFormat(t *testing.T) {
	if q, err := quoteLogFormat(`%ci "%r" #1 $X`); err != nil || q != `'%ci "%r" #1 $X'` {
		t.Errorf("quoteLogFormat = %s, %v", q, err)
	}
	for _, bad := range []string{"", "a'b", "a\nb", `a\b`, "${X}"} {
		if q, err := quoteLogFormat(bad); err == nil {
			t.Errorf("quoteLogFormat(%q) = %s", bad, q)
		}
	}
}
