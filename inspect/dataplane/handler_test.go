package dataplane_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/haproxytech/client-native/v6/models"

	"github.com/haroute/haroute/inspect/dataplane"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// api is a dataplane.Handler served by httptest over the live HAProxy, with the commands it sent.
type api struct {
	*live
	srv *httptest.Server
	rec *recorder
}

func startAPI(t *testing.T, backends func() []string) *api {
	t.Helper()
	l := startLive(t)
	rec := &recorder{Runner: l.admin}
	srv := httptest.NewServer(dataplane.Handler(rec, l.paths, backends))
	t.Cleanup(srv.Close)
	return &api{live: l, srv: srv, rec: rec}
}

// do sends a request for the escaped path p (under RuntimePrefix when it starts with "runtime/") and
// returns the status and the body.
func do(t *testing.T, srv *httptest.Server, method, p string) (int, http.Header, []byte) {
	t.Helper()
	if rest, ok := strings.CutPrefix(p, "runtime/"); ok {
		p = dataplane.RuntimePrefix + "/" + rest
	}
	req, err := http.NewRequest(method, srv.URL+p, strings.NewReader(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// get requires status 200 and decodes the JSON body into v.
func get(t *testing.T, srv *httptest.Server, p string, v any) {
	t.Helper()
	status, h, body := do(t, srv, http.MethodGet, p)
	if status != http.StatusOK || h.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s %s", p, status, h.Get("Content-Type"), body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", p, err, body)
	}
}

// wantError requires status and a models.Error body with that code, whose message holds each of
// parts.
func wantError(t *testing.T, srv *httptest.Server, method, p string, status int, parts ...string) {
	t.Helper()
	got, h, body := do(t, srv, method, p)
	var e models.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Code == nil || e.Message == nil {
		t.Errorf("%s %s: %d, body %s is no models.Error (%v)", method, p, got, body, err)
		return
	}
	if got != status || *e.Code != int64(status) || h.Get("Content-Type") != "application/json" {
		t.Errorf("%s %s: %d (code %d, %s), want %d: %s", method, p, got, *e.Code, h.Get("Content-Type"), status, *e.Message)
	}
	for _, part := range parts {
		if !strings.Contains(*e.Message, part) {
			t.Errorf("%s %s: message %q lacks %q", method, p, *e.Message, part)
		}
	}
}

func TestHandlerServesEveryPath(t *testing.T) {
	a := startAPI(t, nil)
	www := a.backend(t, wwwBackend)
	be := url.PathEscape(wwwBackend)

	var servers models.RuntimeServers
	get(t, a.srv, "runtime/backends/"+be+"/servers", &servers)
	if len(servers) != len(www.Servers) || servers[0].BackendName != wwwBackend || servers[0].AdminState != "ready" {
		t.Errorf("servers of %s: %d, first %+v", wwwBackend, len(servers), servers[0])
	}
	var server models.RuntimeServer
	name := www.Servers[0].Name
	get(t, a.srv, "runtime/backends/"+be+"/servers/"+url.PathEscape(name), &server)
	if server.Name != name || server.Address != www.Servers[0].Addr || server.Port == nil || *server.Port != int64(www.Servers[0].Port) {
		t.Errorf("server %s: %+v", name, server)
	}

	var entries models.MapEntries
	get(t, a.srv, "runtime/maps/"+model.MapHTTP+"/entries", &entries)
	var want []model.MapEntry
	for _, m := range a.r.Config.Maps {
		if m.Name == model.MapHTTP {
			want = m.Entries
		}
	}
	if len(entries) != len(want) || len(want) == 0 || entries[0].Key != want[0].Key || entries[0].Value != want[0].Value {
		t.Errorf("entries of %s: %d, want %d", model.MapHTTP, len(entries), len(want))
	}
	// An empty map is an empty list.
	status, _, body := do(t, a.srv, http.MethodGet, "runtime/maps/"+model.MapTCP+"/entries")
	if status != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("entries of the empty %s: %d %s", model.MapTCP, status, body)
	}

	var info models.ProcessInfo
	get(t, a.srv, "runtime/info", &info)
	if info.Info == nil || info.Info.Version == "" || info.Info.Pid == nil || info.RuntimeAPI != a.paths.AdminSocket {
		t.Errorf("info: %+v, runtimeAPI %q", info.Info, info.RuntimeAPI)
	}

	var certs models.SslCertificates
	get(t, a.srv, "runtime/ssl_certs", &certs)
	if len(certs) != 2 {
		t.Fatalf("ssl_certs: %d certificates, want 2", len(certs))
	}
	securePath := path.Join(a.paths.CertDir, a.secureName)
	var byPath, byName models.SslCertificate
	get(t, a.srv, "runtime/ssl_certs/"+url.PathEscape(securePath), &byPath)
	get(t, a.srv, "runtime/ssl_certs/"+url.PathEscape(a.secureName), &byName)
	if byPath.File != securePath || byName.File != securePath || byPath.Subject != "/CN="+secureHost ||
		byPath.NotAfter == nil || byName.Sha1FingerPrint != byPath.Sha1FingerPrint {
		t.Errorf("ssl_certs/%s: %+v; by base name: %+v", a.secureName, byPath, byName)
	}

	// HEAD is answered like GET, without a body.
	status, _, body = do(t, a.srv, http.MethodHead, "runtime/info")
	if status != http.StatusOK || len(body) != 0 {
		t.Errorf("HEAD info: %d, %d bytes", status, len(body))
	}
	readOnly(t, a.rec)
}

func TestHandlerRefusesWrites(t *testing.T) {
	a := startAPI(t, nil)
	be := url.PathEscape(wwwBackend)
	paths := []string{
		"runtime/backends/" + be + "/servers",
		"runtime/backends/" + be + "/servers/" + url.PathEscape(a.backend(t, wwwBackend).Servers[0].Name),
		"runtime/maps/" + model.MapHTTP + "/entries",
		"runtime/maps/" + model.MapHTTP + "/entries/x",
		"runtime/info",
		"runtime/ssl_certs",
		"runtime/ssl_certs/" + a.secureName,
		"/v3/services/haproxy/configuration/backends",
		"/nowhere",
	}
	for _, p := range paths {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
			wantError(t, a.srv, m, p, http.StatusMethodNotAllowed, m+" refused", "read-only", "Kubernetes is the source of truth")
			if _, h, _ := do(t, a.srv, m, p); h.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q", m, p, h.Get("Allow"))
			}
		}
	}
	if sent := a.rec.commands(); len(sent) != 0 {
		t.Errorf("refused writes sent %q to HAProxy", sent)
	}
}

func TestHandlerNotFound(t *testing.T) {
	a := startAPI(t, nil)
	be := url.PathEscape(wwwBackend)
	for _, p := range []string{
		"/",
		"/v3",
		"/v3/services/haproxy/runtime",
		"runtime/backends",
		"runtime/backends/" + be,
		"runtime/backends/" + be + "/servers/",
		"runtime/maps",
		"runtime/maps/" + model.MapHTTP,
		"runtime/maps/" + model.MapHTTP + "/entries/x",
		"runtime/ssl_certs/",
		"runtime/stick_tables",
		"/v3/services/haproxy/configuration/backends",
		"/v2/services/haproxy/runtime/info",
	} {
		wantError(t, a.srv, http.MethodGet, p, http.StatusNotFound, "no such path")
	}
	// Names HAProxy or haroute does not know.
	wantError(t, a.srv, http.MethodGet, "runtime/backends/be_http:web:nope/servers", http.StatusNotFound, "be_http:web:nope")
	wantError(t, a.srv, http.MethodGet, "runtime/backends/"+be+"/servers/nope", http.StatusNotFound, "nope")
	wantError(t, a.srv, http.MethodGet, "runtime/maps/nope.map/entries", http.StatusNotFound, "nope.map", model.MapHTTP)
	wantError(t, a.srv, http.MethodGet, "runtime/ssl_certs/nope.pem", http.StatusNotFound, "nope.pem")
	// A map is named by haroute's name, not by a path: the path of a real map is not a name.
	wantError(t, a.srv, http.MethodGet, "runtime/maps/"+url.PathEscape(a.paths.Maps[model.MapHTTP])+"/entries", http.StatusBadRequest)
	for _, c := range a.rec.commands() {
		if !strings.HasPrefix(c, "show servers state ") && c != "show ssl cert" {
			t.Errorf("sent %q", c)
		}
	}
}

func TestHandlerRefusesHostileNames(t *testing.T) {
	a := startAPI(t, nil)
	be := url.PathEscape(wwwBackend)
	hostile := []string{
		"a b",                 // two words
		"x\nshow info",        // a second command
		"x\r\nshow info",      // the same with CRLF
		"x;show info",         // HAProxy's command separator
		"be_http:web:www;",    // a separator at the end
		"a\x00b",              // NUL
		"a\tb",                // tab
		"a\u2028b",            // a Unicode line separator
		"a\u00a0b",            // a no-break space
		`a\b`,                 // HAProxy's escape character
		"a/b",                 // a path
		"../" + model.MapHTTP, // a path out of the names
		"$x", "#x", "a<b", "a>b", "a*", "a&b", "{x}", `a"b`, "a'b", "a`b",
		"\xff\xfe",               // not UTF-8
		strings.Repeat("a", 513), // too long
	}
	for _, name := range hostile {
		n := url.PathEscape(name)
		wantError(t, a.srv, http.MethodGet, "runtime/backends/"+n+"/servers", http.StatusBadRequest, "backend name")
		wantError(t, a.srv, http.MethodGet, "runtime/backends/"+be+"/servers/"+n, http.StatusBadRequest, "server name")
		wantError(t, a.srv, http.MethodGet, "runtime/maps/"+n+"/entries", http.StatusBadRequest, "map name")
		if !strings.Contains(name, "/") {
			wantError(t, a.srv, http.MethodGet, "runtime/ssl_certs/"+n, http.StatusBadRequest, "certificate name")
		}
	}
	if sent := a.rec.commands(); len(sent) != 0 {
		t.Errorf("hostile names sent %q to HAProxy", sent)
	}
}

func TestHandlerBackendFilter(t *testing.T) {
	allowed := []string{wwwBackend}
	a := startAPI(t, func() []string { return allowed })
	var servers models.RuntimeServers
	get(t, a.srv, "runtime/backends/"+url.PathEscape(wwwBackend)+"/servers", &servers)
	wantError(t, a.srv, http.MethodGet, "runtime/backends/"+url.PathEscape(apiBackend)+"/servers", http.StatusNotFound, apiBackend, "not one of haroute's")
	wantError(t, a.srv, http.MethodGet, "runtime/backends/"+model.SNIBackend+"/servers/fe_sni", http.StatusNotFound, model.SNIBackend)
	if sent := a.rec.commands(); !slices.Equal(sent, []string{"show servers state " + wwwBackend}) {
		t.Errorf("sent %q, want only the allowed backend's read", sent)
	}
}

// replying is a Runner that answers every command with one reply.
type replying string

func (r replying) Command(context.Context, string) (string, error) { return string(r), nil }
func (r replying) Payload(context.Context, string, string) (string, error) {
	return string(r), nil
}

func TestHandlerSocketFailures(t *testing.T) {
	paths := render.RuntimePaths{Maps: map[string]string{model.MapHTTP: "/x/conf/" + model.MapHTTP}, AdminSocket: "/x/run/haproxy.sock"}
	all := []string{
		"runtime/backends/b/servers",
		"runtime/backends/b/servers/s",
		"runtime/maps/" + model.MapHTTP + "/entries",
		"runtime/info",
		"runtime/ssl_certs",
		"runtime/ssl_certs/c.pem",
	}

	// No HAProxy behind the socket: 503, naming the socket.
	gone := filepath.Join(t.TempDir(), "haproxy.sock")
	down := httptest.NewServer(dataplane.Handler(socket.NewAdmin(gone, socket.Options{RetryFor: -1}), paths, nil))
	t.Cleanup(down.Close)
	for _, p := range all {
		wantError(t, down, http.MethodGet, p, http.StatusServiceUnavailable, gone, socket.ErrUnavailable.Error())
	}

	// HAProxy answering with its help text (what it does to a command it does not know): 502.
	help := "Unknown command, but maybe one of the following ones is a better match:\n  help [<command>]   : list matching or all commands\n"
	confused := httptest.NewServer(dataplane.Handler(replying(help), paths, nil))
	t.Cleanup(confused.Close)
	for _, p := range all {
		wantError(t, confused, http.MethodGet, p, http.StatusBadGateway, socket.ErrUnexpectedReply.Error())
	}
}
