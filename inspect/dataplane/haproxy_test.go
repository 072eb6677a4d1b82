package dataplane_test

import (
	"context"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haproxytech/client-native/v6/models"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/inspect/dataplane"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// live is HAProxy serving a plain Route with two endpoints, a path Route with one, and an edge
// Route whose certificate file holds the leaf and the CA that issued it.
type live struct {
	r      *testbed.StaticHAProxy
	paths  render.RuntimePaths
	admin  *socket.Admin
	secure *x509.Certificate // the edge Route's leaf
	// secureName is the base name of the edge Route's certificate file.
	secureName string
	// secureCA is the subject of the CA bundled with the edge Route's leaf, as HAProxy prints it.
	secureCA string
}

// The fixture's names.
const (
	wwwBackend   = "be_http:web:www"
	apiBackend   = "be_http:web:api"
	secureHost   = "secure.example.com"
	secureAlias  = "alt.example.com"
	defaultHost  = "default.router.test"
	testCAName   = "router CA"
	testCAIssuer = "/O=haroute testbed/CN=" + testCAName
)

func startLive(t *testing.T) *live {
	t.Helper()
	ca := testkit.NewCA(t, testCAName)
	w1 := testkit.StartHTTPBackend(t, "127.0.0.2", "w1")
	w2 := testkit.StartHTTPBackend(t, "127.0.0.3", "w2")
	api := testkit.StartHTTPBackend(t, "127.0.0.4", "api")
	secCert, secKey := ca.Issue(t, secureHost, secureAlias)

	var m testbed.Manifests
	m.Service("web", "www", w1, w2).Service("web", "api", api)
	m.Route("web", "www", "www.example.com", "", "www")
	m.Route("web", "api", "www.example.com", "/api", "api")
	m.Route("web", "secure", secureHost, "", "www", testbed.Edge(append(secCert, ca.PEM()...), secKey))
	r := testbed.StartStaticHAProxy(t, m.Input(t), testbed.RouterOptions(t), ca.IssueBundle(t, defaultHost), ca.Pool())
	r.RequireAdmitted(t)
	paths, err := render.PathsFor(r.Config, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(secCert)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	l := &live{r: r, paths: paths, admin: socket.NewAdmin(r.AdminSocket, socket.Options{}), secure: leaf, secureCA: testCAIssuer}
	for _, c := range r.Config.Certificates {
		if strings.Contains(c.Name, "secure") {
			l.secureName = c.Name
		}
	}
	if l.secureName == "" || len(r.Config.Certificates) != 1 {
		t.Fatalf("fixture: %d certificates, none of web/secure", len(r.Config.Certificates))
	}
	return l
}

// backend returns backend name of the applied state.
func (l *live) backend(t *testing.T, name string) model.Backend {
	t.Helper()
	for _, b := range l.r.Config.Backends {
		if b.Name == name {
			return *b
		}
	}
	t.Fatalf("fixture: no backend %s", name)
	return model.Backend{}
}

// cmd runs a command that changes HAProxy's state (a test's own set-up) and requires its empty
// success answer.
func (l *live) cmd(t *testing.T, cmd string) {
	t.Helper()
	out, err := l.r.Cmd(cmd)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("%q answered %q, %v", cmd, out, err)
	}
}

// recorder is a socket.Runner that records the commands it passes on.
type recorder struct {
	socket.Runner
	mu   sync.Mutex
	sent []string
}

func (r *recorder) Command(ctx context.Context, cmd string) (string, error) {
	r.mu.Lock()
	r.sent = append(r.sent, cmd)
	r.mu.Unlock()
	return r.Runner.Command(ctx, cmd)
}

func (r *recorder) Payload(ctx context.Context, cmd, payload string) (string, error) {
	r.mu.Lock()
	r.sent = append(r.sent, cmd+" <<")
	r.mu.Unlock()
	return r.Runner.Payload(ctx, cmd, payload)
}

func (r *recorder) commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// readOnly fails the test when a command sent is not a `show` command.
func readOnly(t *testing.T, rec *recorder) {
	t.Helper()
	for _, c := range rec.commands() {
		if !strings.HasPrefix(c, "show ") {
			t.Errorf("sent %q, which is not a show command", c)
		}
	}
}

func TestServersOnHAProxy(t *testing.T) {
	l := startLive(t)
	ctx := context.Background()
	rec := &recorder{Runner: l.admin}
	www := l.backend(t, wwwBackend)
	if len(www.Servers) != 2 {
		t.Fatalf("fixture: %s has %d servers", wwwBackend, len(www.Servers))
	}
	l.cmd(t, fmt.Sprintf("set server %s/%s state drain", wwwBackend, www.Servers[1].Name))

	got, err := dataplane.Servers(ctx, rec, wwwBackend)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("Servers(%s) = %d servers, want 2", wwwBackend, len(got))
	}
	byName := map[string]*models.RuntimeServer{}
	for _, s := range got {
		byName[s.Name] = s
	}
	for i, want := range www.Servers {
		s := byName[want.Name]
		if s == nil {
			t.Fatalf("Servers(%s) lacks %s", wwwBackend, want.Name)
		}
		wantAdmin := "ready"
		if i == 1 {
			wantAdmin = "drain"
		}
		if s.ID != strconv.Itoa(int(want.ID)) || s.Address != want.Addr || s.Port == nil || *s.Port != int64(want.Port) ||
			s.AdminState != wantAdmin || s.BackendName != wwwBackend || s.Weight == nil || *s.Weight != int64(want.Weight) {
			t.Errorf("server %s = %+v; want id %d, %s:%d, admin %s, weight %d", want.Name, *s, want.ID, want.Addr, want.Port, wantAdmin, want.Weight)
		}
		switch s.OperationalState {
		case "up", "down":
		default:
			t.Errorf("server %s: operational_state %q, want up or down", want.Name, s.OperationalState)
		}
		if err := s.Validate(nil); err != nil {
			t.Errorf("server %s does not validate against the model: %v", want.Name, err)
		}
	}

	// Maintenance wins over drain, as HAProxy's own state does.
	name := www.Servers[1].Name
	l.cmd(t, fmt.Sprintf("set server %s/%s state maint", wwwBackend, name))
	s, err := dataplane.Server(ctx, rec, wwwBackend, name)
	if err != nil || s.AdminState != "maint" || s.Name != name {
		t.Errorf("Server(%s) after maint = %+v, %v", name, s, err)
	}
	// A server stopped for maintenance is down.
	if err == nil && s.OperationalState != "down" {
		t.Errorf("Server(%s) in maintenance: operational_state %q, want down", name, s.OperationalState)
	}

	if _, err := dataplane.Server(ctx, rec, wwwBackend, "nope"); !errors.Is(err, socket.ErrNotFound) {
		t.Errorf("Server(nope): %v, want ErrNotFound", err)
	}
	if _, err := dataplane.Servers(ctx, rec, "be_http:web:nope"); !errors.Is(err, socket.ErrNotFound) {
		t.Errorf("Servers(unknown backend): %v, want ErrNotFound", err)
	}
	// An empty backend (a spare of the pool) is an empty list, not an error.
	for _, b := range l.r.Config.Backends {
		if len(b.Servers) == 0 && strings.HasPrefix(b.Name, "be_") && b.Name != model.SNIBackend && b.Name != model.NoSNIBackend {
			if got, err := dataplane.Servers(ctx, rec, b.Name); err != nil || got == nil || len(got) != 0 {
				t.Errorf("Servers(%s) = %v, %v; want an empty list", b.Name, got, err)
			}
			break
		}
	}
	readOnly(t, rec)
}

func TestMapEntriesOnHAProxy(t *testing.T) {
	l := startLive(t)
	ctx := context.Background()
	rec := &recorder{Runner: l.admin}
	for _, name := range []string{model.MapHTTP, model.MapEdgeReencrypt, model.MapWildcardDomain} {
		var want []model.MapEntry
		for _, m := range l.r.Config.Maps {
			if m.Name == name {
				want = m.Entries
			}
		}
		got, err := dataplane.MapEntries(ctx, rec, l.paths.Maps[name])
		if err != nil {
			t.Fatalf("MapEntries(%s): %v", name, err)
		}
		if got == nil || len(got) != len(want) {
			t.Fatalf("MapEntries(%s) = %d entries, want %d", name, len(got), len(want))
		}
		for i, e := range want {
			if got[i].Key != e.Key || got[i].Value != e.Value {
				t.Errorf("MapEntries(%s)[%d] = %s %s, want %s %s", name, i, got[i].Key, got[i].Value, e.Key, e.Value)
			}
		}
	}
	if len(l.r.Config.Maps) == 0 {
		t.Fatal("fixture: no map")
	}
	// A change made at runtime is what is read.
	httpMap := l.paths.Maps[model.MapHTTP]
	l.cmd(t, "add map "+httpMap+" =extra.example.com/ "+wwwBackend)
	got, err := dataplane.MapEntries(ctx, rec, httpMap)
	if err != nil || got[len(got)-1].Key != "=extra.example.com/" || got[len(got)-1].Value != wwwBackend {
		t.Errorf("MapEntries after add map: last entry %+v, %v", got[len(got)-1], err)
	}
	if _, err := dataplane.MapEntries(ctx, rec, path.Join(path.Dir(httpMap), "nope.map")); !errors.Is(err, socket.ErrNotFound) {
		t.Errorf("MapEntries(unknown map): %v, want ErrNotFound", err)
	}
	readOnly(t, rec)
}

func TestInfoOnHAProxy(t *testing.T) {
	l := startLive(t)
	ctx := context.Background()
	rec := &recorder{Runner: l.admin}
	got, err := dataplane.Info(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := socket.ShowInfo(ctx, l.admin)
	if err != nil {
		t.Fatal(err)
	}
	i := got.Info
	if i == nil || i.Version == "" || i.Version != raw["Version"] || i.Pid == nil || strconv.FormatInt(*i.Pid, 10) != raw["Pid"] {
		t.Fatalf("Info = %+v; show info says version %q, pid %q", i, raw["Version"], raw["Pid"])
	}
	if i.MaxConn == nil || *i.MaxConn != int64(l.r.Options.MaxConnections) {
		t.Errorf("Info: max_conn %v, want %d", i.MaxConn, l.r.Options.MaxConnections)
	}
	if i.Uptime == nil || i.Nbthread == nil || *i.Nbthread < 1 || i.Unstoppable == nil || i.Ulimitn == nil || i.Node == "" {
		t.Errorf("Info: uptime %v, nbthread %v, unstoppable %v, ulimit_n %v, node %q: want them set",
			i.Uptime, i.Nbthread, i.Unstoppable, i.Ulimitn, i.Node)
	}
	if y := time.Time(i.ReleaseDate).Year(); y < 2020 {
		t.Errorf("Info: release_date %v (from %q)", i.ReleaseDate, raw["Release_date"])
	}
	if got.RuntimeAPI != "" || got.Error != "" {
		t.Errorf("Info: runtimeAPI %q, error %q; want both empty", got.RuntimeAPI, got.Error)
	}
	if err := got.Validate(nil); err != nil {
		t.Errorf("Info does not validate against the model: %v", err)
	}
	readOnly(t, rec)
}

func sha1Upper(c *x509.Certificate) string {
	sum := sha1.Sum(c.Raw)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func TestCertificatesOnHAProxy(t *testing.T) {
	l := startLive(t)
	ctx := context.Background()
	rec := &recorder{Runner: l.admin}
	got, err := dataplane.Certificates(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	securePath := path.Join(l.paths.CertDir, l.secureName)
	var secure, def *models.SslCertificate
	for _, c := range got {
		switch {
		case c.File == securePath:
			secure = c
		case c.Subject == "/CN="+defaultHost:
			def = c
		}
	}
	if secure == nil || def == nil || len(got) != 2 {
		var files []string
		for _, c := range got {
			files = append(files, c.File)
		}
		t.Fatalf("Certificates = %q; want the default certificate and %s", files, securePath)
	}
	want := l.secure
	if secure.StorageName != securePath || secure.Description != l.secureName || secure.Status != "Used" ||
		secure.Subject != "/CN="+secureHost || secure.Issuers != testCAIssuer ||
		!strings.EqualFold(strings.TrimLeft(secure.Serial, "0"), want.SerialNumber.Text(16)) || secure.Sha1FingerPrint != sha1Upper(want) ||
		secure.Algorithm != "EC256" {
		t.Errorf("certificate %s = %+v", l.secureName, *secure)
	}
	if secure.NotBefore == nil || !time.Time(*secure.NotBefore).Equal(want.NotBefore) ||
		secure.NotAfter == nil || !time.Time(*secure.NotAfter).Equal(want.NotAfter) {
		t.Errorf("certificate %s: not_before %v, not_after %v; want %v, %v", l.secureName, secure.NotBefore, secure.NotAfter, want.NotBefore, want.NotAfter)
	}
	if secure.SubjectAlternativeNames != "DNS:"+secureHost+", DNS:"+secureAlias || secure.Domains != secureHost+","+secureAlias || secure.IPAddresses != "" {
		t.Errorf("certificate %s: SAN %q, domains %q, ip_addresses %q", l.secureName, secure.SubjectAlternativeNames, secure.Domains, secure.IPAddresses)
	}
	if secure.ChainSubject != l.secureCA || secure.ChainIssuer != l.secureCA {
		t.Errorf("certificate %s: chain subject %q, issuer %q; want %q", l.secureName, secure.ChainSubject, secure.ChainIssuer, l.secureCA)
	}
	if def.ChainSubject != "" || def.Domains != defaultHost {
		t.Errorf("default certificate: chain subject %q, domains %q", def.ChainSubject, def.Domains)
	}
	for _, c := range got {
		if err := c.Validate(nil); err != nil {
			t.Errorf("certificate %s does not validate against the model: %v", c.File, err)
		}
	}

	one, err := dataplane.Certificate(ctx, rec, securePath)
	if err != nil || one.Sha1FingerPrint != secure.Sha1FingerPrint {
		t.Errorf("Certificate(%s) = %+v, %v", securePath, one, err)
	}
	if _, err := dataplane.Certificate(ctx, rec, path.Join(l.paths.CertDir, "nope.pem")); !errors.Is(err, socket.ErrNotFound) {
		t.Errorf("Certificate(unknown): %v, want ErrNotFound", err)
	}
	readOnly(t, rec)
}
