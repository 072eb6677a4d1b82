package socket

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture returns a reply captured from HAProxy 2.6.12 (testdata/README.md) as Command returns it.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return normalize(string(b))
}

func TestParseServersState(t *testing.T) {
	got, err := ParseServersState(fixture(t, "servers_state.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ServerState{
		{BackendID: 4, Backend: "b1", ServerID: 1, Server: "s1", Addr: "127.0.0.1", OpState: 0, AdminState: 0,
			UserWeight: 10, InitWeight: 10, CheckStatus: 8, CheckState: 6, Port: 18081},
		{BackendID: 5, Backend: "b2", ServerID: 1, Server: "dyn", Addr: "127.0.0.2", OpState: 0, AdminState: 1,
			UserWeight: 5, InitWeight: 5, CheckStatus: 1, CheckState: 2, Port: 8080},
		{BackendID: 5, Backend: "b2", ServerID: 2, Server: "tls", Addr: "127.0.0.3", OpState: 2, AdminState: 8,
			UserWeight: 1, InitWeight: 1, CheckStatus: 1, CheckState: 0, Port: 8443, UseSSL: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseServersState =\n%+v\nwant\n%+v", got, want)
	}
	one, err := ParseServersState(fixture(t, "servers_state_b2.txt"))
	if err != nil || !reflect.DeepEqual(one, want[1:]) {
		t.Errorf("ParseServersState(b2) = %+v, %v", one, err)
	}
	// Columns are found by name: a reordered header still parses.
	moved := "1\n# srv_name be_id be_name srv_id srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_check_status srv_check_state srv_port srv_use_ssl\n" +
		"s1 4 b1 1 127.0.0.1 0 0 10 10 8 6 18081 0\n"
	if got, err := ParseServersState(moved); err != nil || !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("reordered header: %+v, %v", got, err)
	}
	empty := strings.SplitAfter(fixture(t, "servers_state.txt"), "\n")
	if got, err := ParseServersState(empty[0] + empty[1]); err != nil || len(got) != 0 {
		t.Errorf("header only: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "Can't find backend.\n", fixture(t, "help.txt"), "1\n# be_id be_name\n1 b\n",
		strings.Replace(fixture(t, "servers_state_b2.txt"), " 8080 ", " x ", 1),
		strings.Replace(fixture(t, "servers_state_b2.txt"), " 8080 ", " ", 1)} {
		if _, err := ParseServersState(bad); err == nil {
			t.Errorf("ParseServersState(%.60q) accepted", bad)
		}
	}
}

func TestParseMap(t *testing.T) {
	got, err := ParseMap(fixture(t, "map.txt"))
	want := []MapEntry{
		{Key: "=www.example.com/api", Value: "be_http:ns:api"},
		{Key: "www.example.com/api/", Value: "be_http:ns:api"},
		{Key: "*.example.com/", Value: "be_edge_http:ns:wild"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMap = %+v, %v; want %+v", got, err, want)
	}
	if got, err := ParseMap(""); err != nil || len(got) != 0 {
		t.Errorf("ParseMap(empty) = %+v, %v", got, err)
	}
	for _, bad := range []string{fixture(t, "help.txt"), "Unknown map identifier. Please use #<id> or <file>.\n", "0x1\n"} {
		if _, err := ParseMap(bad); err == nil {
			t.Errorf("ParseMap(%.60q) accepted", bad)
		}
	}
}

func TestParseCrtList(t *testing.T) {
	got, err := ParseCrtList(fixture(t, "crt_list.txt"))
	want := []string{
		"/tmp/hx/conf/a.pem a.example.com",
		"/tmp/hx/conf/b.pem [alpn h2,http/1.1] b.example.com *.w.example.com",
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCrtList = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"didn't find the specified filename\n", fixture(t, "help.txt"), ""} {
		if _, err := ParseCrtList(bad); err == nil {
			t.Errorf("ParseCrtList(%.60q) accepted", bad)
		}
	}
}

func TestParseCert(t *testing.T) {
	got, err := ParseCert(fixture(t, "cert.txt"))
	want := CertInfo{
		Filename: "/tmp/hx/conf/a.pem", Status: "Used", Serial: "4989E55360C4DD8C0AB0D8206D341FA4D96E6003",
		NotBefore: "Nov 22 05:44:05 2026 GMT", NotAfter: "Nov 24 05:44:05 2026 GMT", SAN: "DNS:a.example.com",
		Fingerprint: "D6293B01B503EBD89B247EAA390E7FF7ABC21932", Subject: "/CN=a.example.com", Issuer: "/CN=a.example.com",
	}
	if err != nil || got != want {
		t.Errorf("ParseCert = %+v, %v; want %+v", got, err, want)
	}
	if _, err := ParseCert("Can't display the certificate: Not found or the certificate is a bundle!\n"); err == nil {
		t.Error("ParseCert accepted the not-found answer")
	}
}

func TestParseInfo(t *testing.T) {
	got, err := ParseInfo(fixture(t, "info.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Name": "HAProxy", "Version": "2.6.12-1+deb12u4", "Pid": "16967",
		"Uptime": "0d 0h00m09s", "Unstoppable Jobs": "1", "Build info": "2.6.12-1+deb12u4"} {
		if got[k] != v {
			t.Errorf("ParseInfo[%q] = %q, want %q", k, got[k], v)
		}
	}
	if _, err := ParseInfo(fixture(t, "help.txt")); err == nil {
		t.Error("ParseInfo accepted help text")
	}
}

func TestParseShowProc(t *testing.T) {
	v26 := Version{Major: 2, Minor: 6, Patch: 12, Text: "2.6.12-1+deb12u4"}
	v32 := Version{Major: 3, Minor: 2, Patch: 26, Text: "3.2.26-1"}
	cases := map[string]struct {
		want             ProcState
		serving          int // PID, 0: none
		draining         []int
		currentAfterFail bool
	}{
		"show_proc.txt": {want: ProcState{
			Master:  Proc{PID: 11497, Type: "master", Reloads: 6},
			Version: v26,
			Workers: []Proc{{PID: 14216, Type: "worker", Reloads: 0}},
		}, serving: 14216},
		"show_proc_old_workers.txt": {want: ProcState{
			Master:  Proc{PID: 11497, Type: "master", Reloads: 7},
			Version: v26,
			Workers: []Proc{{PID: 16967, Type: "worker"}, {PID: 14216, Type: "worker", Reloads: 1, Old: true}},
		}, serving: 16967, draining: []int{14216}},
		"show_proc_failed.txt": {want: ProcState{
			Master:  Proc{PID: 11497, Type: "master", Reloads: 8},
			Version: v26,
			Workers: []Proc{{PID: 16967, Type: "worker", Reloads: 1}, {PID: 14216, Type: "worker", Reloads: 2, Old: true}},
			Failed:  1,
		}, serving: 16967, draining: []int{14216}},
		"show_proc_3.2_old_workers.txt": {want: ProcState{
			Master:  Proc{PID: 2211, Type: "master", Reloads: 1},
			Version: v32,
			Workers: []Proc{{PID: 2216, Type: "worker"}, {PID: 2213, Type: "worker", Reloads: 1, Old: true}},
		}, serving: 2216, draining: []int{2213}},
		// 3.1+: after a failed reload the serving worker is listed as old and "# workers" is empty.
		"show_proc_3.2_failed.txt": {want: ProcState{
			Master:  Proc{PID: 2211, Type: "master", Reloads: 2},
			Version: v32,
			Workers: []Proc{{PID: 2216, Type: "worker", Reloads: 1, Old: true}, {PID: 2213, Type: "worker", Reloads: 2, Old: true}},
			Failed:  1,
		}, serving: 2216, draining: []int{2213}},
	}
	for name, tc := range cases {
		got, err := ParseShowProc(fixture(t, name))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseShowProc(%s) = %+v, %v; want %+v", name, got, err, tc.want)
			continue
		}
		w, ok := got.Serving()
		if !ok || w.PID != tc.serving {
			t.Errorf("%s: Serving() = %+v, %v; want PID %d", name, w, ok, tc.serving)
		}
		var draining []int
		for _, d := range got.Draining() {
			draining = append(draining, d.PID)
		}
		if !reflect.DeepEqual(draining, tc.draining) {
			t.Errorf("%s: Draining() = %v, want %v", name, draining, tc.draining)
		}
	}
	// The same lists under a 2.6 master: no worker serves (2.6 never lists the serving worker as old).
	failed := fixture(t, "show_proc_3.2_failed.txt")
	ps, _ := ParseShowProc(failed)
	ps.Version = v26
	if w, ok := ps.Serving(); ok {
		t.Errorf("Serving() under a 2.6 master with no current worker = %+v, want none", w)
	}
	for _, bad := range []string{"", "Unknown command.\n", "# workers\n12 worker 0 0d 2.6\n", "#<PID> <type>\nx master 0\n"} {
		if _, err := ParseShowProc(bad); err == nil {
			t.Errorf("ParseShowProc(%q) accepted", bad)
		}
	}
}

func TestParseReload(t *testing.T) {
	cases := map[string]ReloadReply{
		"":                                     {},
		"Success=1\n--\n[NOTICE] loaded\n":     {Sync: true, Success: true, Log: "[NOTICE] loaded"},
		"Success=0\n--\n[ALERT] parse error\n": {Sync: true, Log: "[ALERT] parse error"},
		// 3.1+ refuses a reload while the previous worker still starts (mworker.c).
		"Success=0\n--\nAnother reload is still in progress.\n": {Sync: true, InProgress: true, Log: "Another reload is still in progress."},
	}
	for in, want := range cases {
		if got, err := ParseReload(in); err != nil || got != want {
			t.Errorf("ParseReload(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := ParseReload("Unknown command.\n"); err == nil {
		t.Error("ParseReload accepted an unknown answer")
	}
}

func TestMasterFraming(t *testing.T) {
	proc := string(mustRead(t, "show_proc_failed.txt"))
	reload := ""
	f := newFake(t, func(cmd string, _ []string) string {
		switch cmd {
		case "show proc":
			return proc
		case "reload":
			return reload
		}
		return "Unknown command.\n"
	})
	f.master = true
	f.start()
	m := NewMaster(f.path, Options{})
	ctx := context.Background()
	ps, err := m.ShowProc(ctx)
	if err != nil || ps.Failed != 1 || ps.Master.Reloads != 8 || len(ps.Workers) != 2 {
		t.Errorf("ShowProc = %+v, %v", ps, err)
	}
	for _, raw := range f.rawInput() {
		if raw != "show proc\nquit\n" {
			t.Errorf("sent %q, want the command and quit", raw)
		}
	}
	if rr, err := m.Reload(ctx); err != nil || rr != (ReloadReply{}) {
		t.Errorf("Reload (2.6) = %+v, %v", rr, err)
	}
	reload = "Success=1\n--\nlog line\n\n"
	if rr, err := m.Reload(ctx); err != nil || rr != (ReloadReply{Sync: true, Success: true, Log: "log line"}) {
		t.Errorf("Reload (2.7) = %+v, %v", rr, err)
	}
	reload = "Unknown command.\n\n"
	if _, err := m.Reload(ctx); !errors.Is(err, ErrUnexpectedReply) {
		t.Errorf("Reload of an unknown answer: %v, want ErrUnexpectedReply", err)
	}
	proc = "garbage\n\n"
	if _, err := m.ShowProc(ctx); !errors.Is(err, ErrUnexpectedReply) {
		t.Errorf("ShowProc of garbage: %v, want ErrUnexpectedReply", err)
	}
	if _, err := m.Command(ctx, "show proc; reload"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Command with ';': %v, want ErrInvalid", err)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShowHelpersClassify checks that the show helpers turn refusals into typed errors.
func TestShowHelpersClassify(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		reply string
		call  func(r Runner) error
		want  error
	}{
		{"servers state unknown", "Can't find backend.\n", func(r Runner) error { _, err := ShowServersState(ctx, r, "x"); return err }, ErrNotFound},
		{"servers state help", help, func(r Runner) error { _, err := ShowServersState(ctx, r, ""); return err }, ErrUnexpectedReply},
		{"map unknown", "Unknown map identifier. Please use #<id> or <file>.\n", func(r Runner) error { _, err := ShowMap(ctx, r, "/x"); return err }, ErrNotFound},
		{"crt-list unknown", "didn't find the specified filename\n", func(r Runner) error { _, err := ShowCrtList(ctx, r, "/x"); return err }, ErrNotFound},
		{"cert unknown", "Can't display the certificate: Not found or the certificate is a bundle!\n", func(r Runner) error { _, _, err := ShowCert(ctx, r, "/x"); return err }, ErrNotFound},
		{"certs help", help, func(r Runner) error { _, err := ShowCertPaths(ctx, r); return err }, ErrUnexpectedReply},
		{"info help", help, func(r Runner) error { _, err := ShowInfo(ctx, r); return err }, ErrUnexpectedReply},
	}
	for _, c := range cases {
		if err := c.call(&scripted{replies: []string{c.reply}}); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	r := &scripted{replies: []string{fixture(t, "cert.txt")}}
	fp, subj, err := ShowCert(ctx, r, "/tmp/hx/conf/a.pem")
	if err != nil || fp != "D6293B01B503EBD89B247EAA390E7FF7ABC21932" || subj != "/CN=a.example.com" {
		t.Errorf("ShowCert = %q, %q, %v", fp, subj, err)
	}
	r = &scripted{replies: []string{fixture(t, "certs_transaction.txt")}}
	if got, err := ShowCertPaths(ctx, r); err != nil || len(got) != 3 {
		t.Errorf("ShowCertPaths = %q, %v", got, err)
	}
}

// TestParseServersStateRefusesRepeatedColumn: a header that names a column twice (found by
// FuzzParseServersState: it made the parser index past a row's end) is an error, not a panic.
func TestParseServersStateRefusesRepeatedColumn(t *testing.T) {
	reply := "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_check_status srv_check_state srv_port srv_use_ssl srv_use_ssl\n" +
		"1 b 1 s 127.0.0.1 2 0 1 1 6 1 80 0\n"
	if _, err := ParseServersState(reply); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("ParseServersState = %v, want an error naming the repeated column", err)
	}
}
