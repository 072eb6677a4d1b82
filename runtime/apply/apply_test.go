package apply

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// fakeHAProxy is a socket.Runner that records commands and answers with HAProxy 2.6's success
// replies, or with the reply set in fail for a command.
type fakeHAProxy struct {
	sent []string
	fail map[string]string
	// ver is the version show info reports (2.6.12 when empty).
	ver string
}

func (f *fakeHAProxy) version() string {
	if f.ver == "" {
		return "2.6.12-1+deb12u4"
	}
	return f.ver
}

func (f *fakeHAProxy) Command(_ context.Context, cmd string) (string, error) {
	f.sent = append(f.sent, cmd)
	return f.reply(cmd, ""), nil
}

func (f *fakeHAProxy) Payload(_ context.Context, cmd, payload string) (string, error) {
	f.sent = append(f.sent, cmd+" <<\n"+strings.TrimSuffix(payload, "\n"))
	return f.reply(cmd, payload), nil
}

func (f *fakeHAProxy) reply(cmd, payload string) string {
	if r, ok := f.fail[cmd]; ok {
		return r
	}
	w := strings.Fields(cmd)
	last := w[len(w)-1]
	switch {
	case cmd == "show info":
		return "Name: HAProxy\nVersion: " + f.version() + "\nPid: 1\n"
	case strings.HasPrefix(cmd, "add server"):
		return "New server registered.\n"
	case strings.HasPrefix(cmd, "set server") && w[3] == "addr":
		return fmt.Sprintf("no need to change the addr, port changed from '1' to '%s' by 'stats socket command'\n", last)
	case strings.HasPrefix(cmd, "del server"):
		return "Server deleted.\n"
	case strings.HasPrefix(cmd, "prepare map"):
		return "New version created: 7\n"
	case strings.HasPrefix(cmd, "new ssl cert"):
		return fmt.Sprintf("New empty certificate store '%s'!\n", last)
	case strings.HasPrefix(cmd, "set ssl cert"):
		return fmt.Sprintf("Transaction created for certificate %s!\n", w[3])
	case strings.HasPrefix(cmd, "commit ssl"):
		return fmt.Sprintf("Committing %s\nSuccess!\n", last)
	case strings.HasPrefix(cmd, "abort ssl"):
		return fmt.Sprintf("Transaction aborted for certificate '%s'!\n", last)
	case strings.HasPrefix(cmd, "del ssl cert"):
		return fmt.Sprintf("Certificate '%s' deleted!\n", last)
	case strings.HasPrefix(cmd, "add ssl crt-list"):
		return fmt.Sprintf("Inserting certificate '%s' in crt-list '%s'.\nSuccess!\n", strings.Fields(payload)[0], w[3])
	case strings.HasPrefix(cmd, "del ssl crt-list"):
		return fmt.Sprintf("Entry '%s' deleted in crtlist '%s'!\n", last, w[3])
	case strings.HasPrefix(cmd, "new ssl ca-file"):
		return fmt.Sprintf("New CA file created '%s'!\n", last)
	case strings.HasPrefix(cmd, "set ssl ca-file"):
		return fmt.Sprintf("transaction created for CA %s!\n", w[3])
	case strings.HasPrefix(cmd, "add ssl ca-file"):
		return fmt.Sprintf("transaction updated for CA %s!\n", w[3])
	case strings.HasPrefix(cmd, "del ssl ca-file"):
		return fmt.Sprintf("CA file '%s' deleted!\n", last)
	}
	return "" // set server, enable ..., add/set/del map, add map @ver, commit map
}

const dir = "/h"

// testConfig is a small target state: one reencrypt backend with a server, a certificate, a CA file.
func testConfig() *model.Config {
	return &model.Config{
		Settings: model.Settings{BufSize: 16384 + payloadMargin + 100},
		Maps:     []model.MapFile{{Name: model.MapHTTP}},
		Backends: []*model.Backend{{
			Name: "be_secure:ns:r", Kind: model.KindReencrypt, Mode: model.ModeHTTP, Route: "ns/r", Balance: "roundrobin",
			CheckInterval: "5000ms", TLS: &model.BackendTLS{CAFile: "ns:r.ca.pem"},
			Servers: []model.Server{{Name: "pod:p:svc:https:10.0.0.1:8443", ID: 17, Addr: "10.0.0.1", Port: 8443, Weight: 3,
				State: model.StateReady, VerifyHost: "svc.ns.svc"}},
		}},
		Certificates: []model.Certificate{{Name: "ns:r.pem", PEM: "CERT\nKEY\n", SNI: []string{"*.w.example.com", "r.example.com"}, ALPN: "h2,http/1.1"}},
		CAFiles:      []model.CAFile{{Name: "ns:r.ca.pem", PEM: "CA\n"}},
	}
}

func TestOpCommands(t *testing.T) {
	next := testConfig()
	paths, err := render.PathsFor(next, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, s := *next.Backends[0], next.Backends[0].Servers[0]
	cert, ca := next.Certificates[0], next.CAFiles[0]
	httpMap := "/h/conf/os_http_be.map"
	cases := []struct {
		op   plan.Op
		want []string
	}{
		{plan.AddServer{Backend: b, Server: s}, []string{"show info", "add server be_secure:ns:r/pod:p:svc:https:10.0.0.1:8443 10.0.0.1:8443 id 17 weight 3 check inter 5000ms ssl verify required ca-file /h/router/cacerts/ns:r.ca.pem verifyhost svc.ns.svc alpn h2,http/1.1 pool-max-conn -1 pool-purge-delay 5s"}},
		{plan.DelServer{Backend: "b", Server: "s"}, []string{"del server b/s"}},
		{plan.SetServerWeight{Backend: "b", Server: "s", Weight: 9}, []string{"set server b/s weight 9"}},
		{plan.SetServerState{Backend: "b", Server: "s", State: model.StateDrain}, []string{"set server b/s state drain"}},
		{plan.EnableHealth{Backend: "b", Server: "s"}, []string{"enable health b/s"}},
		{plan.DisableHealth{Backend: "b", Server: "s"}, []string{"disable health b/s", "set server b/s health up"}},
		// With a cookie, on 2.6: added on a placeholder port, then moved to its own (HAProxy
		// computes the server's dynamic cookie on that change).
		{plan.AddServer{Backend: withCookie(b), Server: s}, []string{"show info",
			"add server be_secure:ns:r/pod:p:svc:https:10.0.0.1:8443 10.0.0.1:8444 id 17 weight 3 check inter 5000ms ssl verify required ca-file /h/router/cacerts/ns:r.ca.pem verifyhost svc.ns.svc alpn h2,http/1.1 pool-max-conn -1 pool-purge-delay 5s",
			"set server be_secure:ns:r/pod:p:svc:https:10.0.0.1:8443 addr 10.0.0.1 port 8443"}},
		{plan.AddMapEntry{Map: model.MapHTTP, Key: "=h/p", Value: "be"}, []string{"add map " + httpMap + " =h/p be"}},
		{plan.SetMapEntry{Map: model.MapHTTP, Key: "h/", Value: "be"}, []string{"set map " + httpMap + " h/ be"}},
		{plan.DelMapEntry{Map: model.MapTCP, Key: "h"}, []string{"del map /h/conf/os_tcp_be.map h"}},
		{plan.ReplaceMap{Map: model.MapHTTP, Entries: []model.MapEntry{{Key: "a/", Value: "x"}, {Key: "b/", Value: "y"}}},
			[]string{"prepare map " + httpMap, "add map @7 " + httpMap + " <<\na/ x\nb/ y", "commit map @7 " + httpMap}},
		{plan.ReplaceMap{Map: model.MapHTTP}, []string{"prepare map " + httpMap, "commit map @7 " + httpMap}},
		{plan.SetCertificate{Cert: cert, New: true}, []string{"new ssl cert /h/router/certs/ns:r.pem",
			"set ssl cert /h/router/certs/ns:r.pem <<\nCERT\nKEY", "commit ssl cert /h/router/certs/ns:r.pem"}},
		{plan.SetCertificate{Cert: cert}, []string{"set ssl cert /h/router/certs/ns:r.pem <<\nCERT\nKEY", "commit ssl cert /h/router/certs/ns:r.pem"}},
		{plan.AddCrtListEntry{Cert: cert}, []string{"add ssl crt-list /h/conf/cert_config.map <<\n/h/router/certs/ns:r.pem [alpn h2,http/1.1] *.w.example.com r.example.com"}},
		{plan.AddCrtListEntry{Cert: model.Certificate{Name: "a.pem"}}, []string{"add ssl crt-list /h/conf/cert_config.map <<\n/h/router/certs/a.pem"}},
		{plan.DelCrtListEntry{Cert: "a.pem"}, []string{"del ssl crt-list /h/conf/cert_config.map /h/router/certs/a.pem"}},
		{plan.DelCertificate{Cert: "ns:r.pem"}, []string{"del ssl cert /h/router/certs/ns:r.pem"}},
		{plan.SetCAFile{CA: ca, New: true}, []string{"new ssl ca-file /h/router/cacerts/ns:r.ca.pem",
			"set ssl ca-file /h/router/cacerts/ns:r.ca.pem <<\nCA", "commit ssl ca-file /h/router/cacerts/ns:r.ca.pem"}},
		{plan.SetCAFile{CA: ca}, []string{"set ssl ca-file /h/router/cacerts/ns:r.ca.pem <<\nCA", "commit ssl ca-file /h/router/cacerts/ns:r.ca.pem"}},
		{plan.DelCAFile{CA: "ns:r.ca.pem"}, []string{"del ssl ca-file /h/router/cacerts/ns:r.ca.pem"}},
	}
	for _, c := range cases {
		f := &fakeHAProxy{}
		res, err := Apply(context.Background(), f, next, paths, dir, []plan.Op{c.op})
		if err != nil {
			t.Errorf("%s: %v", c.op, err)
			continue
		}
		if !reflect.DeepEqual(f.sent, c.want) {
			t.Errorf("%s sent\n%q\nwant\n%q", c.op, f.sent, c.want)
		}
		if res.Applied != 1 || res.Counts[OpName(c.op)] != 1 || len(res.Counts) != 1 || res.Session {
			t.Errorf("%s: result %+v", c.op, res)
		}
	}
}

// TestAddServerWithCookieByVersion: 3.0+ computes a runtime server's dynamic cookie in add server, so
// the placeholder port is only used on 2.6; the version is asked once per Apply.
func TestAddServerWithCookieByVersion(t *testing.T) {
	next := testConfig()
	paths, _ := render.PathsFor(next, dir)
	b := withCookie(*next.Backends[0])
	s1, s2 := b.Servers[0], b.Servers[0]
	s2.Name, s2.ID = "pod:q:svc:https:10.0.0.2:8443", 18
	s2.Addr = "10.0.0.2"
	ops := []plan.Op{plan.AddServer{Backend: b, Server: s1}, plan.AddServer{Backend: b, Server: s2}}
	for ver, want := range map[string][]string{
		"2.6.12-1+deb12u4": {"show info", "add server", "set server", "add server", "set server"},
		"3.0.11-1+deb13u4": {"show info", "add server", "add server"},
		"3.4.7-1":          {"show info", "add server", "add server"},
	} {
		f := &fakeHAProxy{ver: ver}
		if _, err := Apply(context.Background(), f, next, paths, dir, ops); err != nil {
			t.Fatalf("%s: %v", ver, err)
		}
		var got []string
		for _, c := range f.sent {
			w := strings.Fields(c)
			got = append(got, strings.Join(w[:min(2, len(w))], " "))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: sent %q, want %q", ver, f.sent, want)
		}
	}
	// A version HAProxy does not tell makes the op fail (the caller reloads).
	f := &fakeHAProxy{fail: map[string]string{"show info": "Unknown command.\n"}}
	if _, err := Apply(context.Background(), f, next, paths, dir, ops); !errors.Is(err, ErrReloadRequired) {
		t.Fatalf("without a version: %v, want ErrReloadRequired", err)
	}
}

// TestAddTLSServerByVersion: from HAProxy 3.3 a TLS server is added with no-sni-auto, as the
// configuration writes it, with its cookie value from 3.0; 3.3 refuses no-sni-auto in add server, so
// the op asks for a reload there.
func TestAddTLSServerByVersion(t *testing.T) {
	next := testConfig()
	paths, _ := render.PathsFor(next, dir)
	b := withCookie(*next.Backends[0])
	s := b.Servers[0]
	const line = "add server be_secure:ns:r/pod:p:svc:https:10.0.0.1:8443 10.0.0.1:8443 id 17 weight 3 check inter 5000ms ssl verify required ca-file /h/router/cacerts/ns:r.ca.pem verifyhost svc.ns.svc alpn h2,http/1.1 pool-max-conn -1 pool-purge-delay 5s"
	cookie := " cookie " + model.ServerCookie(s.Name)
	for ver, want := range map[string]string{
		"3.2.26-1": line + cookie,
		"3.4.7-1":  line + " no-sni-auto" + cookie,
	} {
		f := &fakeHAProxy{ver: ver}
		if _, err := Apply(context.Background(), f, next, paths, dir, []plan.Op{plan.AddServer{Backend: b, Server: s}}); err != nil {
			t.Fatalf("%s: %v", ver, err)
		}
		if len(f.sent) != 2 || f.sent[1] != want {
			t.Errorf("%s: sent %q, want %q", ver, f.sent, want)
		}
	}
	f := &fakeHAProxy{ver: "3.3.0-1"}
	if _, err := Apply(context.Background(), f, next, paths, dir, []plan.Op{plan.AddServer{Backend: b, Server: s}}); !errors.Is(err, ErrReloadRequired) {
		t.Fatalf("3.3: %v, want ErrReloadRequired", err)
	}
}

func TestStopsAtFirstFailure(t *testing.T) {
	next := testConfig()
	paths, _ := render.PathsFor(next, dir)
	ops := []plan.Op{
		plan.SetServerWeight{Backend: "b", Server: "s1", Weight: 1},
		plan.DelServer{Backend: "b", Server: "busy"},
		plan.SetServerWeight{Backend: "b", Server: "nope", Weight: 1},
		plan.SetServerWeight{Backend: "b", Server: "s2", Weight: 1},
	}
	f := &fakeHAProxy{fail: map[string]string{
		"del server b/busy":          "Server still has connections attached to it, cannot remove it.\n",
		"set server b/nope weight 1": "No such server.\n",
	}}
	res, err := Apply(context.Background(), f, next, paths, dir, ops)
	var oe *OpError
	if !errors.As(err, &oe) || oe.Index != 2 || !errors.Is(err, ErrReloadRequired) || !errors.Is(err, socket.ErrNotFound) {
		t.Fatalf("error %v, want an OpError at index 2 wrapping ErrReloadRequired and ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "op 3 of 4 (set server b/nope weight 1)") || !strings.Contains(err.Error(), "reload") {
		t.Errorf("error %q does not name the op and the reload", err)
	}
	if len(f.sent) != 3 {
		t.Errorf("sent %q, want nothing after the failure", f.sent)
	}
	if res.Applied != 1 || !reflect.DeepEqual(res.Deferred, []plan.DelServer{{Backend: "b", Server: "busy"}}) ||
		res.Counts["set_server_weight"] != 1 || res.Counts["del_server"] != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestFailedCommitIsAborted(t *testing.T) {
	next := testConfig()
	paths, _ := render.PathsFor(next, dir)
	for _, op := range []plan.Op{plan.SetCertificate{Cert: next.Certificates[0]}, plan.SetCAFile{CA: next.CAFiles[0]}} {
		f := &fakeHAProxy{fail: map[string]string{
			"commit ssl cert /h/router/certs/ns:r.pem":         "Committing /h/router/certs/ns:r.pem\nError!\n",
			"commit ssl ca-file /h/router/cacerts/ns:r.ca.pem": "Committing /h/router/cacerts/ns:r.ca.pem\nError!\n",
		}}
		_, err := Apply(context.Background(), f, next, paths, dir, []plan.Op{op})
		if !errors.Is(err, socket.ErrUnexpectedReply) {
			t.Errorf("%s: error %v, want ErrUnexpectedReply", op, err)
		}
		if last := f.sent[len(f.sent)-1]; !strings.HasPrefix(last, "abort ssl") {
			t.Errorf("%s: sent %q, want an abort last", op, f.sent)
		}
	}
}

func TestInvalidOps(t *testing.T) {
	next := testConfig()
	paths, _ := render.PathsFor(next, dir)
	bad := []plan.Op{
		plan.AddMapEntry{Map: "nope.map", Key: "k", Value: "v"},
		plan.DelCertificate{Cert: "../x.pem"},
		plan.AddServer{Backend: model.Backend{Name: "b", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "roundrobin"},
			Server: model.Server{Name: "s", Addr: "not an address", Port: 80, State: model.StateReady}},
	}
	for _, op := range bad {
		f := &fakeHAProxy{}
		_, err := Apply(context.Background(), f, next, paths, dir, []plan.Op{op})
		if !errors.Is(err, ErrReloadRequired) {
			t.Errorf("%s: error %v, want ErrReloadRequired", op, err)
		}
		if len(f.sent) != 0 {
			t.Errorf("%s: sent %q", op, f.sent)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeHAProxy{}
	if _, err := Apply(ctx, f, next, paths, dir, []plan.Op{plan.EnableHealth{Backend: "b", Server: "s"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if res, err := Apply(context.Background(), f, nil, paths, dir, nil); err != nil || res.Applied != 0 {
		t.Errorf("no ops: %+v, %v", res, err)
	}
}

func TestMaxPayload(t *testing.T) {
	if got := maxPayload(0); got != defaultBufSize-payloadMargin {
		t.Errorf("maxPayload(0) = %d", got)
	}
	if got := maxPayload(32768); got != 32768-payloadMargin || got < 16384 {
		t.Errorf("maxPayload(32768) = %d", got)
	}
}

func withCookie(b model.Backend) model.Backend {
	b.Cookie = &model.Cookie{Name: "c", Key: "k"}
	return b
}
