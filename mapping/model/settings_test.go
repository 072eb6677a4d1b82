package model

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheckSyslogAddress(t *testing.T) {
	for _, ok := range []string{
		"127.0.0.1", "127.0.0.1:514", "10.0.0.7:65535", "syslog", "syslog.logging.svc.cluster.local:5140",
		"[::1]", "[fd00::7]:514", "/var/lib/rsyslog/rsyslog.sock", "/dev/log",
	} {
		if err := CheckSyslogAddress(ok); err != nil {
			t.Errorf("CheckSyslogAddress(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{
		"", "::1", "fd00::7:514", "[::1", "[::1]514", "[10.0.0.1]:514", "[fe80::1%eth0]:514", "127.0.0.1:", "127.0.0.1:0",
		"127.0.0.1:65536", "127.0.0.1:+514", "host:port", "-host", "a..b", "host name", "udp@127.0.0.1:514",
		"127.0.0.1:514 local0", "127.0.0.1:514\n  stats socket /tmp/s level admin", "${SYSLOG}", "#x",
		"/var/lib/../x.sock", "/var/lib/x.sock/", "/a b.sock", "/a'b", "/" + strings.Repeat("s", 107), "relative.sock/",
	} {
		if err := CheckSyslogAddress(bad); err == nil {
			t.Errorf("CheckSyslogAddress(%q) accepted", bad)
		}
	}
}

func TestCheckLogFormat(t *testing.T) {
	for _, ok := range []string{
		"%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r",
		`{"route":"%b","status":%ST,"id":"%[capture.req.hdr(0)]"}`, "100%% #not-a-comment $HOME",
	} {
		if err := CheckLogFormat(ok); err != nil {
			t.Errorf("CheckLogFormat(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{
		"", "a'b", `a\b`, "a ${HOME} b", `"unbalanced`, "line\nbreak", "tab\there", "nul\x00", "del\x7f", "caf\xc3\xa9",
		strings.Repeat("%b", MaxLogFormatLength/2+1),
	} {
		if err := CheckLogFormat(bad); err == nil {
			t.Errorf("CheckLogFormat(%q) accepted", bad)
		}
	}
}

func TestParseCaptureHeaders(t *testing.T) {
	hs, err := ParseCaptureHeaders("Host:90,X-Forwarded-For:64,x~y:65535")
	want := []CaptureHeader{{"Host", 90}, {"X-Forwarded-For", 64}, {"x~y", 65535}}
	if err != nil || !reflect.DeepEqual(hs, want) {
		t.Fatalf("got %v, %v; want %v", hs, err, want)
	}
	if s := FormatCaptureHeaders(hs); s != "Host:90,X-Forwarded-For:64,x~y:65535" {
		t.Errorf("FormatCaptureHeaders = %q", s)
	}
	if hs, err := ParseCaptureHeaders(""); err != nil || hs != nil {
		t.Errorf("empty list: %v, %v", hs, err)
	}
	for _, bad := range []string{
		"Host", "Host:", ":5", "Host:0", "Host:65536", "Host:-1", "Host:5,", "Host:5,,X:5", "Ho st:5", "Host:5 ",
		"X#Y:5", "X$Y:5", "X%Y:5", "X'Y:5", `X"Y:5`, "X:Y:5", "X\nY:5", strings.Repeat("H:1,", MaxCaptures) + "H:1",
	} {
		if hs, err := ParseCaptureHeaders(bad); err == nil {
			t.Errorf("ParseCaptureHeaders(%q) accepted: %v", bad, hs)
		}
	}
}

func TestAccessLogValidate(t *testing.T) {
	good := AccessLog{
		Address: "127.0.0.1:514", MaxLength: 1024, Facility: "local1", Level: "info", HTTPFormat: "%b %ST",
		DontLogNull: true, CaptureRequestHeaders: "Host:90", CaptureResponseHeaders: "Content-Type:64",
		CaptureCookie: CaptureCookie{Name: "session", Exact: true, MaxLength: 128},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (AccessLog{}).Validate(); err != nil || (AccessLog{}).Enabled() {
		t.Fatalf("the zero value (no access log): %v", err)
	}
	for name, mutate := range map[string]func(*AccessLog){
		"no address":        func(a *AccessLog) { a.Address = "" },
		"address":           func(a *AccessLog) { a.Address = "127.0.0.1:514 local0" },
		"short lines":       func(a *AccessLog) { a.MaxLength = 79 },
		"long lines":        func(a *AccessLog) { a.MaxLength = 65536 },
		"facility":          func(a *AccessLog) { a.Facility = "local8" },
		"level":             func(a *AccessLog) { a.Level = "info debug" },
		"format":            func(a *AccessLog) { a.HTTPFormat = "%b'\n  stats socket /tmp/s" },
		"request captures":  func(a *AccessLog) { a.CaptureRequestHeaders = "Host:90 X:1" },
		"response captures": func(a *AccessLog) { a.CaptureResponseHeaders = "Content-Type" },
		"cookie name":       func(a *AccessLog) { a.CaptureCookie.Name = "a=b" },
		"cookie without name": func(a *AccessLog) {
			a.CaptureCookie.Name = ""
		},
		"cookie length": func(a *AccessLog) { a.CaptureCookie.MaxLength = 0 },
		"settings without address": func(a *AccessLog) {
			*a = AccessLog{DontLogNull: true}
		},
	} {
		a := good
		mutate(&a)
		if err := a.Validate(); err == nil {
			t.Errorf("%s: accepted %+v", name, a)
		} else if !strings.HasPrefix(err.Error(), "access log: ") {
			t.Errorf("%s: error without context: %v", name, err)
		}
	}
}
