package observe_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/observe"
	"github.com/haroute/haroute/runtime/socket"
)

// live is a router with plain, edge and reencrypt Routes, and what Observe needs.
type live struct {
	r     *testbed.StaticHAProxy
	paths render.RuntimePaths
	admin *socket.Admin
	ca    *testkit.CA
}

func startLive(t *testing.T) *live {
	t.Helper()
	ca := testkit.NewCA(t, "router CA")
	destCA := testkit.NewCA(t, "service CA")
	w1 := testkit.StartHTTPBackend(t, "127.0.0.2", "w1")
	w2 := testkit.StartHTTPBackend(t, "127.0.0.3", "w2")
	api := testkit.StartHTTPBackend(t, "127.0.0.4", "api")
	tlsCert, tlsKey := destCA.Issue(t, "tls.web.svc")
	tlsBE := testkit.StartTLSBackend(t, "127.0.0.5", "tls", tlsCert, tlsKey)
	secCert, secKey := ca.Issue(t, "secure.example.com")
	reCert, reKey := ca.Issue(t, "re.example.com")

	var m testbed.Manifests
	m.Service("web", "www", w1, w2).Service("web", "api", api).Service("web", "tls", tlsBE)
	m.Route("web", "www", "www.example.com", "", "www")
	m.Route("web", "api", "www.example.com", "/api", "api")
	m.Route("web", "secure", "secure.example.com", "", "www", testbed.Edge(secCert, secKey))
	m.Route("web", "re", "re.example.com", "", "tls", testbed.Reencrypt(reCert, reKey, destCA.PEM()))
	r := testbed.StartStaticHAProxy(t, m.Input(t), testbed.RouterOptions(t), ca.IssueBundle(t, "default.router.test"), ca.Pool())
	r.RequireAdmitted(t)
	paths, err := render.PathsFor(r.Config, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return &live{r: r, paths: paths, admin: socket.NewAdmin(r.AdminSocket, socket.Options{}), ca: ca}
}

func (l *live) observe(t *testing.T) *model.Config {
	t.Helper()
	obs, err := observe.Observe(context.Background(), l.admin, l.r.Config, l.paths)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// cmd runs a raw command on the admin socket and requires HAProxy's reply.
func (l *live) cmd(t *testing.T, cmd, want string) {
	t.Helper()
	out, err := l.r.Cmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, want) {
		t.Fatalf("%q answered %q, want %q", cmd, out, want)
	}
}

// noEmptyServers returns a copy of bs where an empty server list is nil (a spare's list is empty in
// the model and absent in what HAProxy reports: the same state).
func noEmptyServers(bs []*model.Backend) []*model.Backend {
	out := slices.Clone(bs)
	for i := range out {
		if len(out[i].Servers) == 0 {
			out[i].Servers = nil
		}
	}
	return out
}

func backend(t *testing.T, cfg *model.Config, name string) *model.Backend {
	t.Helper()
	for i := range cfg.Backends {
		if cfg.Backends[i].Name == name {
			return cfg.Backends[i]
		}
	}
	t.Fatalf("no backend %s", name)
	return nil
}

func TestObserveFreshHAProxyHasNoDrift(t *testing.T) {
	l := startLive(t)
	obs := l.observe(t)
	if d := observe.Compare(l.r.Config, obs); len(d) != 0 {
		t.Errorf("drift on a fresh HAProxy:\n%v", d)
	}
	if !reflect.DeepEqual(noEmptyServers(obs.Backends), noEmptyServers(l.r.Config.Backends)) || !reflect.DeepEqual(obs.Maps, l.r.Config.Maps) ||
		!reflect.DeepEqual(obs.Certificates, l.r.Config.Certificates) || !reflect.DeepEqual(obs.CAFiles, l.r.Config.CAFiles) {
		t.Errorf("observed state differs from the applied one without drift")
	}
	if len(l.r.Config.CAFiles) != 1 || len(l.r.Config.Certificates) != 2 {
		t.Fatalf("fixture: %d CA files, %d certificates", len(l.r.Config.CAFiles), len(l.r.Config.Certificates))
	}
	ops, err := observe.Repair(l.r.Config, obs)
	if err != nil || len(ops) != 0 {
		t.Errorf("Repair without drift = %v, %v", ops, err)
	}
}

func TestObserveFindsAndRepairsDrift(t *testing.T) {
	l := startLive(t)
	cfg := l.r.Config
	www := backend(t, cfg, "be_http:web:www")
	api := backend(t, cfg, "be_http:web:api")
	if len(www.Servers) != 2 || len(api.Servers) != 1 {
		t.Fatalf("fixture: www has %d servers, api %d", len(www.Servers), len(api.Servers))
	}
	httpMap := l.paths.Maps[model.MapHTTP]
	var secure model.Certificate
	for _, c := range cfg.Certificates {
		if strings.Contains(c.Name, "secure") {
			secure = c
		}
	}
	if secure.Name == "" {
		t.Fatal("fixture: no certificate of web/secure")
	}

	// Drift made by hand.
	l.cmd(t, "del map "+httpMap+" www.example.com/api/", "")
	l.cmd(t, "set map "+httpMap+" =www.example.com/api be_http:web:www", "")
	l.cmd(t, fmt.Sprintf("set server %s/%s weight 7", www.Name, www.Servers[0].Name), "")
	l.cmd(t, fmt.Sprintf("set server %s/%s state maint", www.Name, www.Servers[1].Name), "")
	l.cmd(t, "add server "+api.Name+"/extra 127.0.0.9:80", "New server registered.")
	// The api server re-added by hand under another id (ids place servers on the hash ring).
	as := api.Servers[0]
	l.cmd(t, fmt.Sprintf("set server %s/%s state maint", api.Name, as.Name), "")
	l.cmd(t, fmt.Sprintf("del server %s/%s", api.Name, as.Name), "Server deleted.")
	l.cmd(t, fmt.Sprintf("add server %s/%s %s:%d id 77 weight %d", api.Name, as.Name, as.Addr, as.Port, as.Weight), "New server registered.")
	l.cmd(t, fmt.Sprintf("set server %s/%s state ready", api.Name, as.Name), "")
	other := l.ca.IssueBundle(t, "secure.example.com")
	certPath := l.paths.CertDir + "/" + secure.Name
	l.cmd(t, "set ssl cert "+certPath+" <<\n"+strings.TrimRight(string(other), "\n")+"\n\n", "Transaction")
	l.cmd(t, "commit ssl cert "+certPath, "Success!")

	obs := l.observe(t)
	got := observe.Compare(cfg, obs)
	want := []observe.Drift{
		{Kind: observe.Certificate, Subject: secure.Name},
		{Kind: observe.ExtraServer, Subject: api.Name + "/extra", Got: "127.0.0.9:80"},
		{Kind: observe.MapValue, Subject: model.MapHTTP + " =www.example.com/api", Want: "be_http:web:api", Got: "be_http:web:www"},
		{Kind: observe.MissingMapEntry, Subject: model.MapHTTP + " www.example.com/api/", Want: "be_http:web:api"},
		{Kind: observe.ServerID, Subject: api.Name + "/" + as.Name, Want: fmt.Sprint(as.ID), Got: "77"},
		{Kind: observe.ServerState, Subject: www.Name + "/" + www.Servers[1].Name, Want: "ready", Got: "maint"},
		{Kind: observe.ServerWeight, Subject: www.Name + "/" + www.Servers[0].Name, Want: fmt.Sprint(www.Servers[0].Weight), Got: "7"},
	}
	if len(got) != len(want) {
		t.Fatalf("Compare:\n%v\nwant:\n%v", got, want)
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Kind == observe.Certificate { // fingerprints vary per run
			w.Want, w.Got = g.Want, g.Got
			if g.Want == g.Got || !strings.Contains(g.Got, "sha1") {
				t.Errorf("certificate drift %v does not show two fingerprints", g)
			}
		}
		if g != w {
			t.Errorf("drift %d = %v, want %v", i, g, w)
		}
	}

	ops, err := observe.Repair(cfg, obs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := apply.Apply(context.Background(), l.admin, cfg, l.paths, l.r.Dir, ops)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deferred) != 0 || res.Applied != len(ops) {
		t.Errorf("apply: %d of %d ops applied, deferred %v", res.Applied, len(ops), res.Deferred)
	}
	if d := observe.Compare(cfg, l.observe(t)); len(d) != 0 {
		t.Errorf("drift after the repair (ops %v):\n%v", ops, d)
	}
	resp := l.r.Client.Fetch(t, "http://www.example.com/api/x")
	if resp.Status != 200 || resp.Backend != "api" {
		t.Errorf("GET /api/x after the repair: %d from %q", resp.Status, resp.Backend)
	}
}

func TestObserveUnknownBackendIsStructural(t *testing.T) {
	l := startLive(t)
	cfg := *l.r.Config
	cfg.Backends = append([]*model.Backend{{Name: "be_http:web:absent", Kind: model.KindHTTP}}, cfg.Backends...)
	_, err := observe.Observe(context.Background(), l.admin, &cfg, l.paths)
	if !errors.Is(err, observe.ErrStructuralDrift) || !strings.Contains(err.Error(), "be_http:web:absent") {
		t.Errorf("error %v, want ErrStructuralDrift naming the backend", err)
	}
}
