package observe

import (
	"reflect"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

func TestStateOf(t *testing.T) {
	for admin, want := range map[int]model.ServerState{
		0: model.StateReady, 0x01: model.StateMaint, 0x02: model.StateMaint, 0x04: model.StateMaint,
		0x20: model.StateMaint, 0x08: model.StateDrain, 0x10: model.StateDrain, 0x09: model.StateMaint,
		0x40: model.StateReady,
	} {
		if got := stateOf(admin); got != want {
			t.Errorf("stateOf(%#x) = %s, want %s", admin, got, want)
		}
	}
}

func TestParseCrtListLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want crtListLine
		bad  bool
	}{
		{line: "/d/router/certs/ns:a.pem [alpn h2,http/1.1 ] www.example.com *.foo.com",
			want: crtListLine{Path: "/d/router/certs/ns:a.pem", ALPN: "h2,http/1.1", SNI: []string{"*.foo.com", "www.example.com"}}},
		{line: "/d/router/certs/ns:a.pem b.example.com", want: crtListLine{Path: "/d/router/certs/ns:a.pem", SNI: []string{"b.example.com"}}},
		{line: "/d/router/certs/ns:a.pem [verify none]", want: crtListLine{Path: "/d/router/certs/ns:a.pem", SNI: []string{}}},
		{line: "/d/x.pem [alpn h2", bad: true},
		{line: "", bad: true},
	} {
		got, err := parseCrtListLine(tc.line)
		if tc.bad {
			if err == nil {
				t.Errorf("%q accepted: %+v", tc.line, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if got.Path != tc.want.Path || got.ALPN != tc.want.ALPN || len(got.SNI) != len(tc.want.SNI) ||
			(len(got.SNI) > 0 && !reflect.DeepEqual(got.SNI, tc.want.SNI)) {
			t.Errorf("%q = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

func TestParseCAFiles(t *testing.T) {
	got, err := parseCAFiles("# filename\n/d/router/cacerts/ns:ca.pem - 1 certificate(s)\n@system-ca - 145 certificate(s)\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"/d/router/cacerts/ns:ca.pem": 1, "@system-ca": 145}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseCAFiles = %v, want %v", got, want)
	}
	for _, bad := range []string{"Unknown command\n", "# filename\n/x.pem - many certificate(s)\n", "# filename\n/x.pem\n"} {
		if _, err := parseCAFiles(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseBackends(t *testing.T) {
	got, err := parseBackends("# name\nbe_http:ns:a\nopenshift_default\n")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, map[string]bool{"be_http:ns:a": true, "openshift_default": true}) {
		t.Errorf("parseBackends = %v", got)
	}
	for _, bad := range []string{"Unknown command, but maybe one of the following\n", "# name\na b\n"} {
		if _, err := parseBackends(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
