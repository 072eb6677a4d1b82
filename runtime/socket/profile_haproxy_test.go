package socket_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// profileConfig holds a backend profile (a named defaults section) whose sticky cookie carries the
// name each backend's Route gives it, from a map keyed on the backend name: HAProxy's cookie engine
// works under one fixed name (_hr_c); a request rule turns the client's "<name>=<value>" into
// "_hr_c=<value>" before the engine reads it (a regsub whose pattern refers back to the name), and a
// response rule renames the cookie HAProxy inserts. This is how a backend added at runtime from a
// profile (HAProxy 3.4) can keep the Route's own cookie name, which the profile cannot hold.
const profileConfig = `global
    stats socket {{dir}}/run/haproxy.sock mode 600 level admin expose-fd listeners
defaults base
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend public from base
    bind 127.0.0.1:{{http}}
    use_backend %[req.hdr(host),field(1,:),lower,map_str({{dir}}/conf/hosts.map)]
    default_backend be_default
backend be_default from base
defaults prof_cookie from base
    mode http
    balance roundrobin
    cookie _hr_c insert indirect nocache httponly
    http-request set-var(txn.ckn) be_name,map_str({{dir}}/conf/cookie_names.map)
    http-request set-var-fmt(txn.cks) "%[var(txn.ckn)]|%[req.fhdr(cookie)]" if { var(txn.ckn) -m found } { req.fhdr_cnt(cookie) eq 1 }
    http-request set-var(txn.ckr) 'var(txn.cks),regsub("^([^|]+)[|]((.*;[ ]*)?)\\1=","\\2_hr_c=")' if { var(txn.cks) -m found }
    http-request set-header Cookie %[var(txn.ckr)] if { var(txn.ckr) -m found } !{ var(txn.ckr),strcmp(txn.cks) eq 0 }
    http-after-response replace-header Set-Cookie "^_hr_c=(.*)" "%[var(txn.ckn)]=\1" if { var(txn.ckn) -m found }
backend be_ck from prof_cookie
    server c1 {{c1}} cookie c1value
    server c2 {{c2}} cookie c2value
`

// TestProfileCookieCarriesRouteName: through a profile, clients see and send the Route's cookie
// name; a client sending it back stays on its server and gets no new cookie, the server never sees
// the persistence cookie (as with a "cookie <name>" line of its own), and a cookie whose name only
// ends with the Route's is not taken for it. On 3.4 the same holds for a backend added at runtime
// from the profile.
func TestProfileCookieCarriesRouteName(t *testing.T) {
	servers := map[string]string{}
	for _, name := range []string{"c1", "c2", "c3"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Server", name)
			w.Header().Set("X-Got-Cookie", strings.Join(r.Header.Values("Cookie"), " | "))
		}))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		t.Cleanup(srv.Close)
		servers[name] = ln.Addr().String()
	}
	dir := testkit.TempDir(t)
	port := testkit.FreePort(t)
	cfg := strings.NewReplacer("{{dir}}", dir, "{{http}}", fmt.Sprint(port), "{{c1}}", servers["c1"], "{{c2}}", servers["c2"]).Replace(profileConfig)
	h := startHAProxy(t, dir, []render.File{
		{Path: "conf/haproxy.cfg", Data: []byte(cfg)},
		{Path: "conf/hosts.map", Data: []byte("ck.example.com be_ck\nrt.example.com be_rt\n")},
		{Path: "conf/cookie_names.map", Data: []byte("be_ck 0123abcd\n")},
	})
	client := testkit.NewClient(t, port, testkit.FreePort(t), nil)
	get := func(host, cookie string) *testkit.Response {
		t.Helper()
		hdr := http.Header{}
		if cookie != "" {
			hdr.Set("Cookie", cookie)
		}
		resp, err := client.Do("GET", "http://"+host+"/", hdr)
		if err != nil || resp.Status != 200 {
			t.Fatalf("GET %s with %q: %v %+v", host, cookie, err, resp)
		}
		return resp
	}
	check := func(host, name string, values map[string]string) {
		t.Helper()
		first := get(host, "")
		server := first.Header.Get("X-Server")
		set := first.Header.Get("Set-Cookie")
		if want := name + "=" + values[server] + "; path=/; HttpOnly"; set != want {
			t.Fatalf("%s: Set-Cookie %q, want %q", host, set, want)
		}
		other := "c1"
		if server == "c1" {
			other = "c2"
		}
		for range 6 {
			resp := get(host, "a=1; "+name+"="+values[other]+"; b=2")
			if got := resp.Header.Get("X-Server"); got != other {
				t.Fatalf("%s: a client sticky to %s reached %s", host, other, got)
			}
			if set := resp.Header.Get("Set-Cookie"); set != "" {
				t.Fatalf("%s: a sticky client got a new cookie %q", host, set)
			}
			if got := resp.Header.Get("X-Got-Cookie"); got != "a=1; b=2" {
				t.Fatalf("%s: the server received Cookie %q, want the client's others only", host, got)
			}
		}
		resp := get(host, "x"+name+"="+values[other])
		if resp.Header.Get("Set-Cookie") == "" {
			t.Fatalf("%s: a cookie named x%s was taken for the Route's", host, name)
		}
	}
	check("ck.example.com", "0123abcd", map[string]string{"c1": "c1value", "c2": "c2value"})

	admin := socket.NewAdmin(h.AdminSocket, socket.Options{})
	caps, err := socket.DetectCapabilities(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	if !caps.DynamicBackends {
		return
	}
	ctx := context.Background()
	if err := socket.AddBackend(ctx, admin, "be_rt", "prof_cookie"); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{"c1": "v1", "c2": "v2"} {
		if err := socket.AddServer(ctx, admin, "be_rt", name, servers[name]+" cookie "+value); err != nil {
			t.Fatal(err)
		}
		if err := socket.SetServerState(ctx, admin, "be_rt", name, "ready"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Command(ctx, "add map "+filepath.Join(dir, "conf", "cookie_names.map")+" be_rt f00d"); err != nil {
		t.Fatal(err)
	}
	if err := socket.PublishBackend(ctx, admin, "be_rt"); err != nil {
		t.Fatal(err)
	}
	check("rt.example.com", "f00d", map[string]string{"c1": "v1", "c2": "v2"})
}
