package mapping_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

func TestFromEnvAccessLogDefaults(t *testing.T) {
	o, err := mapping.FromEnv(envOf(nil))
	if err != nil || o.AccessLog != (model.AccessLog{}) {
		t.Fatalf("without ROUTER_SYSLOG_ADDRESS: %+v, %v; want no access log", o.AccessLog, err)
	}
	o, err = mapping.FromEnv(envOf(map[string]string{"ROUTER_SYSLOG_ADDRESS": " 10.0.0.7:514 "}))
	want := model.AccessLog{Address: "10.0.0.7:514", MaxLength: 1024, Facility: "local1", Level: "warning"}
	if err != nil || o.AccessLog != want || mapping.DefaultAccessLog("10.0.0.7:514") != want {
		t.Fatalf("OpenShift's defaults: got %+v, %v; want %+v", o.AccessLog, err, want)
	}
	// The other variables mean nothing without an address (OpenShift logs nothing then), but a
	// malformed one is still an error.
	o, err = mapping.FromEnv(envOf(map[string]string{"ROUTER_LOG_LEVEL": "info", "ROUTER_DONT_LOG_NULL": "true"}))
	if err != nil || o.AccessLog != (model.AccessLog{}) {
		t.Fatalf("settings without an address: %+v, %v; want no access log", o.AccessLog, err)
	}
	if _, err := mapping.FromEnv(envOf(map[string]string{"ROUTER_LOG_LEVEL": "loud"})); err == nil {
		t.Fatal("a malformed ROUTER_LOG_LEVEL without an address was accepted")
	}
}

func TestFromEnvAccessLog(t *testing.T) {
	o, err := mapping.FromEnv(envOf(map[string]string{
		"ROUTER_SYSLOG_ADDRESS":                "/var/lib/rsyslog/rsyslog.sock",
		"ROUTER_LOG_MAX_LENGTH":                "4096",
		"ROUTER_LOG_FACILITY":                  "LOCAL3",
		"ROUTER_LOG_LEVEL":                     "info",
		"ROUTER_SYSLOG_FORMAT":                 strconv.Quote(`%ci "%HM %HU" %b %ST`),
		"ROUTER_DONT_LOG_NULL":                 "true",
		"ROUTER_CAPTURE_HTTP_REQUEST_HEADERS":  "Host:90,X-Request-Id:64",
		"ROUTER_CAPTURE_HTTP_RESPONSE_HEADERS": "Content-Type:32",
		"ROUTER_CAPTURE_HTTP_COOKIE":           "session=:256",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := model.AccessLog{
		Address: "/var/lib/rsyslog/rsyslog.sock", MaxLength: 4096, Facility: "local3", Level: "info",
		HTTPFormat: `%ci "%HM %HU" %b %ST`, DontLogNull: true,
		CaptureRequestHeaders: "Host:90,X-Request-Id:64", CaptureResponseHeaders: "Content-Type:32",
		CaptureCookie: model.CaptureCookie{Name: "session", Exact: true, MaxLength: 256},
	}
	if o.AccessLog != want {
		t.Fatalf("got  %+v\nwant %+v", o.AccessLog, want)
	}
	c, err := mapping.ParseCaptureCookie("JSESSION:32")
	if err != nil || c != (model.CaptureCookie{Name: "JSESSION", MaxLength: 32}) {
		t.Errorf("prefix cookie: %+v, %v", c, err)
	}
}

// TestFromEnvRejectsHostileAccessLog: no value that could break or extend a haproxy.cfg line, nor a
// number out of HAProxy's bounds, gets through; each error names its variable.
func TestFromEnvRejectsHostileAccessLog(t *testing.T) {
	for name, values := range map[string][]string{
		"ROUTER_SYSLOG_ADDRESS": {
			"127.0.0.1:514\n  stats socket /tmp/admin.sock level admin", "127.0.0.1:514 local0", "::1", "[::1",
			"127.0.0.1:0", "127.0.0.1:65536", "udp@127.0.0.1:514", "/var/lib/../x.sock", "${SYSLOG}", "a#b",
		},
		"ROUTER_LOG_MAX_LENGTH": {"79", "65536", "1k", "-1"},
		"ROUTER_LOG_FACILITY":   {"local8", "local1 debug", "local1\nlog-send-hostname"},
		"ROUTER_LOG_LEVEL":      {"verbose", "info debug", "info\nlog-send-hostname"},
		"ROUTER_SYSLOG_FORMAT": {
			`"%b`, `"%b" x`, `"%b\n"`, `"%b $HOME"`, `"%b\tx"`, "%b'", `%b\ %s`, "%b ${HOME}", `%b "x`,
			"%b\n  stats socket /tmp/admin.sock level admin", "'%b", "'%b'x'", "%b\x01", strings.Repeat("%b", 5000),
		},
		"ROUTER_DONT_LOG_NULL":                 {"sometimes"},
		"ROUTER_CAPTURE_HTTP_REQUEST_HEADERS":  {"Host", "Host:0", "Host:65536", "Host:5,", "Ho st:5", "X#Y:5", "X'Y:5"},
		"ROUTER_CAPTURE_HTTP_RESPONSE_HEADERS": {"Content-Type", "Content-Type:x", "A:1\nB:2"},
		"ROUTER_CAPTURE_HTTP_COOKIE":           {"session", "session:", ":5", "=:5", "a b:5", "s:0", "s:65536", "s:1:2"},
	} {
		for _, v := range values {
			_, err := mapping.FromEnv(envOf(map[string]string{"ROUTER_SYSLOG_ADDRESS": "127.0.0.1:514", name: v}))
			if err == nil {
				t.Errorf("%s=%q accepted", name, v)
			} else if !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), "access log") {
				t.Errorf("%s=%q: error does not name the setting: %v", name, v, err)
			}
		}
	}
}

func TestParseLogFormat(t *testing.T) {
	for in, want := range map[string]string{
		`%ci:%cp %b %ST`:                    `%ci:%cp %b %ST`,
		`"%ci:%cp %b %ST"`:                  `%ci:%cp %b %ST`,
		`"{\"route\":\"%b\"}"`:              `{"route":"%b"}`,
		`'{"route":"%b","status":%ST}'`:     `{"route":"%b","status":%ST}`,
		`"100%% of %[var(txn.be)]"`:         `100%% of %[var(txn.be)]`,
		strconv.Quote(`%b "%HU" # not a c`): `%b "%HU" # not a c`,
	} {
		if got, err := mapping.ParseLogFormat(in); err != nil || got != want {
			t.Errorf("ParseLogFormat(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestAccessLogChangeIsGlobalChanged: the planner compares every access-log field, so turning the log
// on or off or changing any of its settings is a reload with a GlobalChanged reason naming the field.
func TestAccessLogChangeIsGlobalChanged(t *testing.T) {
	base := mapping.DefaultOptions()
	base.AccessLog = mapping.DefaultAccessLog("127.0.0.1:514")
	base.AccessLog.CaptureCookie = model.CaptureCookie{Name: "s", MaxLength: 9}
	applied := plan.Compute(nil, translateOpts(t, base)).Next
	for subject, mutate := range map[string]func(*model.AccessLog){
		"AccessLog.Address":                 func(a *model.AccessLog) { a.Address = "127.0.0.1:515" },
		"AccessLog.MaxLength":               func(a *model.AccessLog) { a.MaxLength = 2048 },
		"AccessLog.Facility":                func(a *model.AccessLog) { a.Facility = "local2" },
		"AccessLog.Level":                   func(a *model.AccessLog) { a.Level = "info" },
		"AccessLog.HTTPFormat":              func(a *model.AccessLog) { a.HTTPFormat = "%b" },
		"AccessLog.DontLogNull":             func(a *model.AccessLog) { a.DontLogNull = true },
		"AccessLog.CaptureRequestHeaders":   func(a *model.AccessLog) { a.CaptureRequestHeaders = "Host:9" },
		"AccessLog.CaptureResponseHeaders":  func(a *model.AccessLog) { a.CaptureResponseHeaders = "Server:9" },
		"AccessLog.CaptureCookie.Name":      func(a *model.AccessLog) { a.CaptureCookie.Name = "t" },
		"AccessLog.CaptureCookie.Exact":     func(a *model.AccessLog) { a.CaptureCookie.Exact = true },
		"AccessLog.CaptureCookie.MaxLength": func(a *model.AccessLog) { a.CaptureCookie.MaxLength = 10 },
	} {
		o := base
		mutate(&o.AccessLog)
		p := plan.Compute(applied, translateOpts(t, o))
		if !p.NeedsReload() || !hasReason(p, plan.GlobalChanged, subject) {
			t.Errorf("%s changed: reasons %v, want GlobalChanged %s", subject, p.Structural, subject)
		}
	}
	off := base
	off.AccessLog = model.AccessLog{}
	if p := plan.Compute(applied, translateOpts(t, off)); !hasReason(p, plan.GlobalChanged, "AccessLog.Address") {
		t.Errorf("access log turned off: reasons %v, want GlobalChanged AccessLog.Address", p.Structural)
	}
	if p := plan.Compute(applied, translateOpts(t, base)); p.NeedsReload() {
		t.Errorf("same access log: reasons %v, want none", p.Structural)
	}
}

func translateOpts(t *testing.T, o mapping.Options) *model.Config {
	t.Helper()
	if err := o.Validate(); err != nil {
		t.Fatalf("options: %v", err)
	}
	cfg, problems := mapping.Translate(mapping.Input{}, o)
	if len(problems) > 0 || cfg.Validate() != nil {
		t.Fatalf("translate: %v, %v", problems, cfg.Validate())
	}
	return cfg
}

func hasReason(p plan.Plan, kind plan.ReasonKind, subject string) bool {
	for _, r := range p.Structural {
		if r.Kind == kind && r.Subject == subject {
			return true
		}
	}
	return false
}
