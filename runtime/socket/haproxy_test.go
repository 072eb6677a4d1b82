package socket_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// handConfig is a small configuration in haroute's shape (admin socket under run/, files by absolute
// path, servers with every option on their line) with the proxies the socket tests need.
const handConfig = `global
    stats socket {{dir}}/run/haproxy.sock mode 600 level admin expose-fd listeners
    stats timeout 2m
    tune.bufsize 32768
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend public
    bind 127.0.0.1:{{http}}
    http-request set-var(txn.be) req.hdr(host),field(1,:),lower,map_str({{dir}}/conf/hosts.map)
    use_backend %[var(txn.be)] if { var(txn.be) -m found }
    default_backend be_default
frontend fe_tls
    bind 127.0.0.1:{{https}} ssl crt {{dir}}/conf/default.pem crt-list {{dir}}/conf/cert_config.map
    default_backend be_default
frontend fe_tcp
    mode tcp
    bind 127.0.0.1:{{tcp}}
    default_backend be_tcp
backend be_default
backend be_http
    balance roundrobin
    cookie SERVERID insert indirect nocache dynamic
    dynamic-cookie-key testkey
    server s1 {{backend}} weight 10 check inter 5s
backend be_tcp
    mode tcp
    balance roundrobin
backend be_secure
    balance roundrobin
defaults prof_http
    mode http
    balance roundrobin
    timeout connect 5s
    timeout client 30s
    timeout server 30s
`

// startHAProxy writes files under dir and starts HAProxy on them as the product lays the directory
// out (mapping/layout; render.ConfigArgs). The neutral kit runs the process, so these tests need no
// harness above the socket.
func startHAProxy(t testing.TB, dir string, files []render.File) *testkit.HAProxy {
	t.Helper()
	tree := make(map[string][]byte, len(files))
	for _, f := range files {
		tree[f.Path] = f.Data
	}
	testkit.WriteTree(t, dir, tree)
	l := layout.For(dir)
	return testkit.RunHAProxy(t, testkit.HAProxyPaths{
		Dir: dir, ConfigArgs: render.ConfigArgs(dir), ConfigPath: l.Config(),
		AdminSocket: l.AdminSocket(), MasterSocket: l.MasterSocket(), Dirs: []string{l.RunDir(), l.BackendsDir()},
	})
}

type bed struct {
	h        *testkit.HAProxy
	admin    *socket.Admin
	dir      string
	ca       *testkit.CA
	client   *testkit.Client
	tcpPort  int
	tlsPort  int
	hostsMap string
	crtList  string
	s1       *testkit.Backend
	// caps are the capabilities of the HAProxy under test (from its show info): the replies the
	// tests expect differ by version.
	caps socket.Capabilities
}

// startBed starts HAProxy on handConfig with a crt-list of two certificates: "ns:a.pem" (a
// production-style name with a colon) for a.example.com and "b.pem" for b.example.com.
func startBed(t testing.TB) *bed {
	t.Helper()
	ca := testkit.NewCA(t, "socket test CA")
	s1 := testkit.StartHTTPBackend(t, "127.0.0.2", "s1")
	dir := testkit.TempDir(t)
	httpPort, httpsPort, tcpPort := testkit.FreePort(t), testkit.FreePort(t), testkit.FreePort(t)
	cfg := strings.NewReplacer("{{dir}}", dir, "{{http}}", fmt.Sprint(httpPort), "{{https}}", fmt.Sprint(httpsPort),
		"{{tcp}}", fmt.Sprint(tcpPort), "{{backend}}", s1.Addr()).Replace(handConfig)
	crtList := filepath.Join(dir, "conf", "cert_config.map")
	h := startHAProxy(t, dir, []render.File{
		{Path: "conf/haproxy.cfg", Data: []byte(cfg)},
		{Path: "conf/default.pem", Data: ca.IssueBundle(t, "default.example.com")},
		{Path: "conf/hosts.map", Data: []byte("s1.example.com be_http\n")},
		{Path: "conf/ns:a.pem", Data: ca.IssueBundle(t, "a.example.com")},
		{Path: "conf/b.pem", Data: ca.IssueBundle(t, "b.example.com")},
		{Path: "conf/cert_config.map", Data: []byte(filepath.Join(dir, "conf", "ns:a.pem") + " a.example.com\n" +
			filepath.Join(dir, "conf", "b.pem") + " [alpn h2,http/1.1] b.example.com\n")},
	})
	admin := socket.NewAdmin(h.AdminSocket, socket.Options{})
	caps, err := socket.DetectCapabilities(context.Background(), admin)
	if err != nil {
		t.Fatalf("capabilities: %v", err)
	}
	return &bed{
		h: h, admin: admin, dir: dir, ca: ca,
		client: testkit.NewClient(t, httpPort, httpsPort, ca.Pool()), tcpPort: tcpPort, tlsPort: httpsPort,
		hostsMap: filepath.Join(dir, "conf", "hosts.map"), crtList: crtList, s1: s1, caps: caps,
	}
}

func (b *bed) path(name string) string { return filepath.Join(b.dir, "conf", name) }

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return
	}
	var ce *socket.CommandError
	if !errors.Is(err, want) || !errors.As(err, &ce) {
		t.Fatalf("%s: error %v, want a *CommandError wrapping %v", what, err, want)
	}
}

func serverState(t *testing.T, r socket.Runner, backend, server string) (socket.ServerState, bool) {
	t.Helper()
	states, err := socket.ShowServersState(context.Background(), r, backend)
	if err != nil {
		t.Fatalf("show servers state %s: %v", backend, err)
	}
	for _, s := range states {
		if s.Server == server {
			return s, true
		}
	}
	return socket.ServerState{}, false
}

// runners returns the admin client and a session on it, so that every helper is checked on both.
func runners(t *testing.T, b *bed) map[string]socket.Runner {
	t.Helper()
	s, err := b.admin.Session(context.Background())
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return map[string]socket.Runner{"admin": b.admin, "session": s}
}

func TestServersOnHAProxy(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	for name, r := range runners(t, b) {
		t.Run(name, func(t *testing.T) {
			dyn := testkit.StartHTTPBackend(t, "127.0.0.3", "dyn-"+name)
			srv := "pod:dyn:svc:http:" + name
			wantErr(t, "add server", socket.AddServer(ctx, r, "be_http", srv, dyn.Addr()+" weight 5 check inter 5s"), nil)
			wantErr(t, "add server again", socket.AddServer(ctx, r, "be_http", srv, dyn.Addr()), socket.ErrExists)
			wantErr(t, "add server to an unknown backend", socket.AddServer(ctx, r, "nope", srv, dyn.Addr()), socket.ErrNotFound)
			// 2.6 refuses `cookie` on add server ("'cookie' option is not accepted for dynamic
			// server"), 3.0+ accepts it; 3.0+ refuses `enabled`, which 2.6 takes (and starts the
			// server outside maintenance, which is why haroute never sends it).
			if b.caps.AddServerCookie {
				wantErr(t, "add server with cookie", socket.AddServer(ctx, r, "be_http", srv+"c", dyn.Addr()+" cookie x"), nil)
			} else {
				wantErr(t, "add server with cookie", socket.AddServer(ctx, r, "be_http", srv+"c", dyn.Addr()+" cookie x"), socket.ErrUnexpectedReply)
			}
			if b.caps.AddServerRefusesEnabled {
				wantErr(t, "add server enabled", socket.AddServer(ctx, r, "be_http", srv+"e", dyn.Addr()+" enabled"), socket.ErrUnexpectedReply)
			} else {
				wantErr(t, "add server enabled", socket.AddServer(ctx, r, "be_http", srv+"e", dyn.Addr()+" enabled"), nil)
				if st, _ := serverState(t, r, "be_http", srv+"e"); st.AdminState&1 != 0 {
					t.Errorf("2.6 add server … enabled: admin state %d, want outside maintenance", st.AdminState)
				}
			}
			// A custom id twice is refused on every version.
			id := map[string]string{"admin": "9001", "session": "9002"}[name]
			wantErr(t, "add server with id", socket.AddServer(ctx, r, "be_http", srv+"i", dyn.Addr()+" id "+id), nil)
			wantErr(t, "add server with a used id", socket.AddServer(ctx, r, "be_http", srv+"j", dyn.Addr()+" id "+id), socket.ErrExists)
			st, ok := serverState(t, r, "be_http", srv)
			if !ok || st.AdminState&1 == 0 || st.UserWeight != 5 || st.Addr != "127.0.0.3" || st.Port != dyn.Port {
				t.Fatalf("new server state %+v (found %v), want in maint with weight 5 at %s", st, ok, dyn.Addr())
			}
			wantErr(t, "enable health", socket.EnableHealth(ctx, r, "be_http", srv), nil)
			wantErr(t, "enable health unknown", socket.EnableHealth(ctx, r, "be_http", "nope"), socket.ErrNotFound)
			// Checks off again, and the server marked up whatever they said: as a server whose
			// checks never ran.
			wantErr(t, "disable health", socket.DisableHealth(ctx, r, "be_http", srv), nil)
			if st, _ := serverState(t, r, "be_http", srv); st.CheckState&socket.CheckEnabled != 0 {
				t.Errorf("after disable health: check state %#x, want the enabled bit (%#x) clear", st.CheckState, socket.CheckEnabled)
			}
			wantErr(t, "ready", socket.SetServerState(ctx, r, "be_http", srv, "ready"), nil)
			for _, h := range []struct {
				health string
				op     int
			}{{"down", 0}, {"up", 2}} {
				wantErr(t, "set health "+h.health, socket.SetServerHealth(ctx, r, "be_http", srv, h.health), nil)
				if st, _ := serverState(t, r, "be_http", srv); st.OpState != h.op {
					t.Errorf("after set server health %s: operational state %d, want %d", h.health, st.OpState, h.op)
				}
			}
			wantErr(t, "back to maint", socket.SetServerState(ctx, r, "be_http", srv, "maint"), nil)
			if err := socket.SetServerHealth(ctx, r, "be_http", srv, "sideways"); !errors.Is(err, socket.ErrInvalid) {
				t.Errorf("set health sideways: %v, want ErrInvalid", err)
			}
			wantErr(t, "disable health unknown", socket.DisableHealth(ctx, r, "be_http", "nope"), socket.ErrNotFound)
			wantErr(t, "enable health again", socket.EnableHealth(ctx, r, "be_http", srv), nil)
			if st, _ := serverState(t, r, "be_http", srv); st.CheckState&socket.CheckEnabled == 0 {
				t.Errorf("after enable health: check state %#x, want the enabled bit (%#x) set", st.CheckState, socket.CheckEnabled)
			}
			wantErr(t, "add server without check", socket.AddServer(ctx, r, "be_http", srv+"-nc", dyn.Addr()), nil)
			wantErr(t, "enable health without check", socket.EnableHealth(ctx, r, "be_http", srv+"-nc"), socket.ErrUnexpectedReply)
			wantErr(t, "set port", socket.SetServerPort(ctx, r, "be_http", srv+"-nc", "127.0.0.3", dyn.Port+1), nil)
			// 3.4 may apply the change a moment after answering: a second identical command
			// sent before then reports the change again.
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if st, _ := serverState(t, r, "be_http", srv+"-nc"); st.Port == dyn.Port+1 {
					break
				}
			}
			err := socket.SetServerPort(ctx, r, "be_http", srv+"-nc", "127.0.0.3", dyn.Port+1)
			wantErr(t, "set port unchanged", err, socket.ErrUnexpectedReply)
			unchanged := "no need to change the addr, no need to change the port by 'stats socket command'"
			if b.caps.NothingChangedReply {
				unchanged = "nothing changed"
			}
			if ce := (*socket.CommandError)(nil); errors.As(err, &ce) && strings.TrimSpace(ce.Reply) != unchanged {
				t.Errorf("set port unchanged answered %q, want %q on %s", ce.Reply, unchanged, b.caps.Version)
			}
			wantErr(t, "set port unknown", socket.SetServerPort(ctx, r, "be_http", "nope", "127.0.0.3", dyn.Port), socket.ErrNotFound)
			wantErr(t, "weight", socket.SetServerWeight(ctx, r, "be_http", srv, 7), nil)
			wantErr(t, "weight unknown", socket.SetServerWeight(ctx, r, "be_http", "nope", 7), socket.ErrNotFound)
			wantErr(t, "weight unknown backend", socket.SetServerWeight(ctx, r, "nope", srv, 7), socket.ErrNotFound)
			for state, admin := range map[string]int{"drain": 8, "ready": 0, "maint": 1} {
				wantErr(t, "state "+state, socket.SetServerState(ctx, r, "be_http", srv, state), nil)
				if st, _ := serverState(t, r, "be_http", srv); st.AdminState != admin || st.UserWeight != 7 {
					t.Errorf("after state %s: %+v, want admin state %d and weight 7", state, st, admin)
				}
			}
			wantErr(t, "state unknown", socket.SetServerState(ctx, r, "be_http", "nope", "ready"), socket.ErrNotFound)

			// The new server serves once ready, the static one is in maint.
			wantErr(t, "s1 maint", socket.SetServerState(ctx, r, "be_http", "s1", "maint"), nil)
			wantErr(t, "ready", socket.SetServerState(ctx, r, "be_http", srv, "ready"), nil)
			if status, backend, _ := b.client.Get(t, "http://s1.example.com/x"); status != http.StatusOK || backend != dyn.Name {
				t.Errorf("GET = %d from %q, want 200 from %s", status, backend, dyn.Name)
			}
			wantErr(t, "s1 ready", socket.SetServerState(ctx, r, "be_http", "s1", "ready"), nil)

			wantErr(t, "del server not in maint", socket.DelServer(ctx, r, "be_http", srv), socket.ErrUnexpectedReply)
			for _, s := range []string{srv, srv + "-nc"} {
				wantErr(t, "maint", socket.SetServerState(ctx, r, "be_http", s, "maint"), nil)
				// Idle connections HAProxy keeps for reuse make del server refuse for a moment.
				var err error
				for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
					if err = socket.DelServer(ctx, r, "be_http", s); !errors.Is(err, socket.ErrBusy) {
						break
					}
				}
				wantErr(t, "del server "+s, err, nil)
			}
			wantErr(t, "del server again", socket.DelServer(ctx, r, "be_http", srv), socket.ErrNotFound)
			wantErr(t, "del server unknown backend", socket.DelServer(ctx, r, "nope", srv), socket.ErrNotFound)
			if _, ok := serverState(t, r, "be_http", srv); ok {
				t.Errorf("server %s still listed after del server", srv)
			}
			if _, err := socket.ShowServersState(ctx, r, "nope"); !errors.Is(err, socket.ErrNotFound) {
				t.Errorf("show servers state nope: %v, want ErrNotFound", err)
			}
		})
	}
}

// holdConn adds server "hold" to be_tcp, pointing to a listener that accepts and holds connections,
// and opens a client connection through fe_tcp; it returns once HAProxy has connected to the
// listener. Closing the returned function's connections is left to the caller (release) or cleanup.
func holdConn(t *testing.T, b *bed) (release func()) {
	t.Helper()
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.4:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	wantErr(t, "add server", socket.AddServer(ctx, b.admin, "be_tcp", "hold", l.Addr().String()), nil)
	wantErr(t, "ready", socket.SetServerState(ctx, b.admin, "be_tcp", "hold", "ready"), nil)
	client, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", b.tcpPort), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if _, err := client.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	var server net.Conn
	select {
	case server = <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("HAProxy did not connect to the server")
	}
	// The cleanup keeps the server side reachable until the test ends: a caller that drops release
	// would otherwise let the garbage collector close it (net.Conn has a finalizer), ending the held
	// connection at a random moment.
	t.Cleanup(func() { server.Close() })
	return func() {
		client.Close()
		server.Close()
	}
}

// TestDelServerBusy holds a connection through a runtime-added server: del server refuses with
// ErrBusy until the connection is gone.
func TestDelServerBusy(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	r := b.admin
	release := holdConn(t, b)
	wantErr(t, "maint", socket.SetServerState(ctx, r, "be_tcp", "hold", "maint"), nil)
	err := socket.DelServer(ctx, r, "be_tcp", "hold")
	wantErr(t, "del server with a connection", err, socket.ErrBusy)
	var ce *socket.CommandError
	errors.As(err, &ce)
	if got := strings.TrimSpace(ce.Reply); got != "Server still has connections attached to it, cannot remove it." {
		t.Errorf("busy reply %q", got)
	}
	release()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if err = socket.DelServer(ctx, r, "be_tcp", "hold"); !errors.Is(err, socket.ErrBusy) {
			break
		}
	}
	wantErr(t, "del server after the connection closed", err, nil)
}

func TestMapsOnHAProxy(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	for name, r := range runners(t, b) {
		t.Run(name, func(t *testing.T) {
			m := b.hostsMap
			key := name + ".example.com"
			wantErr(t, "add map", socket.AddMap(ctx, r, m, key, "be_http"), nil)
			if status, backend, _ := b.client.Get(t, "http://"+key+"/"); status != http.StatusOK || backend != "s1" {
				t.Errorf("GET %s = %d from %q, want 200 from s1", key, status, backend)
			}
			wantErr(t, "set map", socket.SetMap(ctx, r, m, key, "be_default"), nil)
			if status, _, _ := b.client.Get(t, "http://"+key+"/"); status != http.StatusServiceUnavailable {
				t.Errorf("GET %s = %d after set map to be_default, want 503", key, status)
			}
			entries, err := socket.ShowMap(ctx, r, m)
			if err != nil || !slices.Contains(entries, socket.MapEntry{Key: key, Value: "be_default"}) {
				t.Errorf("show map = %+v, %v; want %s be_default", entries, err, key)
			}
			wantErr(t, "set map absent", socket.SetMap(ctx, r, m, "absent", "x"), socket.ErrNotFound)
			wantErr(t, "del map", socket.DelMap(ctx, r, m, key), nil)
			wantErr(t, "del map absent", socket.DelMap(ctx, r, m, key), socket.ErrNotFound)
			wantErr(t, "add map unknown", socket.AddMap(ctx, r, b.path("nope.map"), "k", "v"), socket.ErrNotFound)
			if _, err := socket.ShowMap(ctx, r, b.path("nope.map")); !errors.Is(err, socket.ErrNotFound) {
				t.Errorf("show map nope: %v, want ErrNotFound", err)
			}
			// A backslash in a key reaches HAProxy as one backslash.
			wantErr(t, "add map backslash", socket.AddMap(ctx, r, m, `x\y`, "v"), nil)
			entries, _ = socket.ShowMap(ctx, r, m)
			if !slices.Contains(entries, socket.MapEntry{Key: `x\y`, Value: "v"}) {
				t.Errorf("show map = %+v, want the key x\\y", entries)
			}
			wantErr(t, "del map backslash", socket.DelMap(ctx, r, m, `x\y`), nil)
			// A ';' in a key (Route paths may hold one) is escaped on the command line and reaches
			// HAProxy as part of the key, for add, set and del alike.
			semi := "shop.example.com/a;b=c;"
			wantErr(t, "add map ;", socket.AddMap(ctx, r, m, semi, "be_http"), nil)
			wantErr(t, "set map ;", socket.SetMap(ctx, r, m, semi, "be_default;x"), nil)
			entries, _ = socket.ShowMap(ctx, r, m)
			if !slices.Contains(entries, socket.MapEntry{Key: semi, Value: "be_default;x"}) {
				t.Errorf("show map = %+v, want the key %q with value be_default;x", entries, semi)
			}
			wantErr(t, "del map ;", socket.DelMap(ctx, r, m, semi), nil)
			wantErr(t, "del map ; again", socket.DelMap(ctx, r, m, semi), socket.ErrNotFound)
			// Quotes are no syntax on the command line: a Route path with a "'" is a key like any.
			quote := `=shop.example.com/it's`
			wantErr(t, "add map '", socket.AddMap(ctx, r, m, quote, "be_http"), nil)
			wantErr(t, "set map '", socket.SetMap(ctx, r, m, quote, "be_default"), nil)
			entries, _ = socket.ShowMap(ctx, r, m)
			if !slices.Contains(entries, socket.MapEntry{Key: quote, Value: "be_default"}) {
				t.Errorf("show map = %+v, want the key %q with value be_default", entries, quote)
			}
			wantErr(t, "del map '", socket.DelMap(ctx, r, m, quote), nil)
			wantErr(t, "del map ' again", socket.DelMap(ctx, r, m, quote), socket.ErrNotFound)

			// ReplaceMap with payloads close to tune.bufsize (32768).
			var want []socket.MapEntry
			for i := range 3000 {
				want = append(want, socket.MapEntry{Key: fmt.Sprintf("h%05d.%s.example.com", i, name), Value: "be_http"})
			}
			want = append(want, socket.MapEntry{Key: "s1.example.com", Value: "be_http"})
			wantErr(t, "replace map", socket.ReplaceMap(ctx, r, m, want, 32768-1024), nil)
			got, err := socket.ShowMap(ctx, r, m)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("show map after replace: %d entries (%v), want %d", len(got), err, len(want))
			}
			if status, backend, _ := b.client.Get(t, "http://h02999."+name+".example.com/"); status != http.StatusOK || backend != "s1" {
				t.Errorf("GET a replaced entry = %d from %q", status, backend)
			}
			if name == "admin" && b.caps.LargePayloads {
				// 3.4 takes payloads beyond tune.bufsize (checked up to ~100 kB here).
				wantErr(t, "replace map far over bufsize", socket.ReplaceMap(ctx, r, m, want, 1<<20), nil)
				if got, _ := socket.ShowMap(ctx, r, m); !reflect.DeepEqual(got, want) {
					t.Errorf("after one large replace the map has %d entries, want %d", len(got), len(want))
				}
			} else if name == "admin" {
				// A payload over tune.bufsize: 2.6 closes the connection without an answer (just
				// over) or resets it while the payload is still being written (far over); 3.0–3.3
				// answer "The command (line) is too big for the buffer size…". The live version
				// stays.
				wantErr(t, "replace map", socket.ReplaceMap(ctx, r, m, want[:10], 1<<20), nil)
				var justOver []socket.MapEntry
				for n := 0; n < 32768; n += len(want[len(justOver)].Key) + len(" be_http\n") {
					justOver = append(justOver, want[len(justOver)])
				}
				wantErr(t, "replace map just over bufsize", socket.ReplaceMap(ctx, r, m, justOver, 1<<20), socket.ErrUnexpectedReply)
				wantErr(t, "replace map far over bufsize", socket.ReplaceMap(ctx, r, m, want, 1<<20), socket.ErrUnexpectedReply)
				got, _ = socket.ShowMap(ctx, r, m)
				if !reflect.DeepEqual(got, want[:10]) {
					t.Errorf("after a failed replace the map has %d entries, want the 10 of the last commit", len(got))
				}
			}
			wantErr(t, "replace map empty", socket.ReplaceMap(ctx, r, m, nil, 32768-1024), nil)
			if got, err := socket.ShowMap(ctx, r, m); err != nil || len(got) != 0 {
				t.Errorf("show map after an empty replace = %+v, %v", got, err)
			}
			wantErr(t, "replace map unknown", socket.ReplaceMap(ctx, r, b.path("nope.map"), want, 30000), socket.ErrNotFound)
			wantErr(t, "restore", socket.AddMap(ctx, r, m, "s1.example.com", "be_http"), nil)
		})
	}
}

func TestInfoAndMasterOnHAProxy(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	info, err := socket.ShowInfo(ctx, b.admin)
	if err != nil || info["Name"] != "HAProxy" || info["Version"] != b.caps.Version.Text {
		t.Fatalf("show info = %v, %v; want version %s", info, err, b.caps.Version)
	}
	m := socket.NewMaster(b.h.MasterSocket, socket.Options{})
	ps, err := m.ShowProc(ctx)
	if err != nil || ps.Master.PID != b.h.PID || ps.Master.Type != "master" || len(ps.Workers) != 1 ||
		fmt.Sprint(ps.Workers[0].PID) != info["Pid"] || ps.Failed != 0 || ps.Version != b.caps.Version {
		t.Fatalf("show proc = %+v, %v; want master %d and worker %s, version %s", ps, err, b.h.PID, info["Pid"], b.caps.Version)
	}
	// A connection through the worker keeps it alive as an old worker after the reload.
	holdConn(t, b)

	// 2.6 answers nothing; 2.7+ answers Success=1 and the start-up log.
	rr, err := m.Reload(ctx)
	if err != nil || rr.Sync != b.caps.SyncReload || rr.Sync && (!rr.Success || rr.InProgress) {
		t.Fatalf("reload = %+v, %v; want sync %v and success", rr, err, b.caps.SyncReload)
	}
	after := waitReloads(t, m, ps.Master.Reloads+1)
	if after.Failed != 0 || len(after.Workers) != 2 || after.Workers[0].Old || !after.Workers[1].Old ||
		after.Workers[1].PID != ps.Workers[0].PID {
		t.Errorf("show proc after reload = %+v, want a new worker and the old one", after)
	}

	// A broken configuration: the reload fails and show proc says so.
	good, err := os.ReadFile(b.h.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.h.ConfigPath, append(good, "    bogus_keyword\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(b.h.ConfigPath, good, 0o600); err != nil {
			t.Errorf("restore the configuration: %v", err)
		}
	})
	rr, err = m.Reload(ctx)
	if err != nil || rr.Sync != b.caps.SyncReload || rr.Success || rr.InProgress ||
		rr.Sync && !strings.Contains(rr.Log, "unknown keyword 'bogus_keyword'") {
		t.Fatalf("failed reload = %+v, %v; want sync %v, no success, HAProxy's alert", rr, err, b.caps.SyncReload)
	}
	failed := waitReloads(t, m, after.Master.Reloads+1)
	w, ok := failed.Serving()
	if failed.Failed != 1 || !ok || w.PID != after.Workers[0].PID {
		t.Errorf("show proc after a failed reload = %+v, want failed 1 and the same worker serving", failed)
	}
	// 3.1+ lists the serving worker under "# old workers" after a failed reload; earlier versions
	// keep it under "# workers".
	if _, listed := failed.Current(); listed == b.caps.FailedReloadKeepsOldList {
		t.Errorf("after a failed reload the serving worker is listed as current: %v; want %v on %s", listed, !listed, b.caps.Version)
	}
	if _, err := m.Command(ctx, "show proc; reload"); !errors.Is(err, socket.ErrInvalid) {
		t.Errorf("master command with ';': %v, want ErrInvalid", err)
	}
}

func waitReloads(t *testing.T, m *socket.Master, reloads int) socket.ProcState {
	t.Helper()
	var ps socket.ProcState
	var err error
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		ps, err = m.ShowProc(context.Background())
		if err == nil && ps.Master.Reloads >= reloads {
			return ps
		}
	}
	t.Fatalf("reload counter did not reach %d: %+v, %v", reloads, ps, err)
	return ps
}

// TestSessionAndAdminAgree sends each command through the admin client, then through a session, and
// checks both replies: the framing of the two modes must give the same text.
func TestSessionAndAdminAgree(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	s, err := b.admin.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	help, err := b.admin.Command(ctx, "show bogus")
	if err != nil || !strings.HasPrefix(help, "Unknown command") {
		t.Fatalf("help text %q, %v", help, err)
	}
	// 3.4 deletes one entry of a key per del map (earlier versions every entry of it), and 3.0+
	// ends an error reply with one newline where 2.6 sends an empty line after it.
	secondDel := "Key not found.\n"
	if b.caps.DelMapDeletesOne {
		secondDel = ""
	}
	noCert := "Can't remove the certificate: certificate '" + b.path("nope.pem") + "' doesn't exist!\n"
	if !b.caps.Version.AtLeast(3, 0) {
		noCert += "\n"
	}
	steps := []struct{ cmd, payload, admin, session string }{
		{"add server be_http/x 127.0.0.9:80 weight 3", "", "New server registered.\n", "Already exists a server with the same name in backend.\n"},
		{"set server be_http/x weight 4", "", "", ""},
		{"set server be_http/x state ready", "", "", ""},
		{"del server be_http/x", "", "Only servers in maintenance mode can be deleted.\n", "Only servers in maintenance mode can be deleted.\n"},
		{"set server be_http/x state maint", "", "", ""},
		{"del server be_http/x", "", "Server deleted.\n", "No such server.\n"},
		{"set server be_http/x weight 4", "", "No such server.\n", "No such server.\n"},
		{"add map " + b.hostsMap, "k1 v1\nk2 v2", "", ""},
		// Both added k1: the second del map finds one more entry only on 3.4+.
		{"del map " + b.hostsMap + " k1", "", "", secondDel},
		{"prepare map " + b.hostsMap, "", "New version created: 1\n", "New version created: 2\n"},
		{"show bogus", "", help, help},
		{"del ssl cert " + b.path("nope.pem"), "", noCert, noCert},
	}
	for _, st := range steps {
		var viaAdmin, viaSession string
		var e1, e2 error
		if st.payload != "" {
			viaAdmin, e1 = b.admin.Payload(ctx, st.cmd, st.payload)
			viaSession, e2 = s.Payload(ctx, st.cmd, st.payload)
		} else {
			viaAdmin, e1 = b.admin.Command(ctx, st.cmd)
			viaSession, e2 = s.Command(ctx, st.cmd)
		}
		if e1 != nil || e2 != nil {
			t.Fatalf("%q: %v / %v", st.cmd, e1, e2)
		}
		if viaAdmin != st.admin || viaSession != st.session {
			t.Errorf("%q: admin %q, session %q; want %q, %q", st.cmd, viaAdmin, viaSession, st.admin, st.session)
		}
	}
	a, err1 := b.admin.Command(ctx, "show servers state be_http")
	b2, err2 := s.Command(ctx, "show servers state be_http")
	if err1 != nil || err2 != nil || a != b2 || !strings.HasPrefix(a, "1\n# be_id") {
		t.Errorf("show servers state: admin %q (%v), session %q (%v)", a, err1, b2, err2)
	}
}
