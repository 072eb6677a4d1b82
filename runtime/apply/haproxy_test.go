package apply_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/socket"
)

// world is the cluster state of one step of TestApplyOnHAProxy.
type world struct {
	web     []*testkit.Backend // endpoints of Service app/web
	withNew bool               // the edge Route app/new and the reencrypt Route app/sec exist
	allow   bool               // app/new serves plain HTTP too (insecure policy Allow)
	newCert [2][]byte          // certificate and key of app/new
	newBknd *testkit.Backend   // endpoint of Service app/new
	secure  *testkit.Backend   // endpoint of Service app/sec (TLS)
	secCA   []byte             // CA app/sec verifies its endpoint with
	secCert [2][]byte          // certificate and key of app/sec
}

func (w world) input(t *testing.T) mapping.Input {
	t.Helper()
	var m testbed.Manifests
	m.Service("app", "web", w.web...)
	m.Route("app", "web", "web.example.com", "", "web")
	if w.withNew {
		m.Service("app", "new", w.newBknd)
		opts := []testbed.RouteOption{testbed.Edge(w.newCert[0], w.newCert[1])}
		if w.allow {
			opts = append(opts, testbed.Insecure("Allow"))
		}
		m.Route("app", "new", "new.example.com", "/", "new", opts...)
		m.Service("app", "sec", w.secure)
		m.Route("app", "sec", "sec.example.com", "", "sec", testbed.Reencrypt(w.secCert[0], w.secCert[1], w.secCA))
	}
	return m.Input(t)
}

// TestApplyOnHAProxy starts HAProxy from plan.WithPool of a first state, then for each later state
// computes the plan, writes the rendered Next (write-through) and applies the ops over the admin
// socket; the live state must equal Next, traffic must follow, and HAProxy must not reload.
func TestApplyOnHAProxy(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	serviceCA := testkit.NewCA(t, "service CA")
	a := testkit.StartHTTPBackend(t, "127.0.0.2", "a")
	b := testkit.StartHTTPBackend(t, "127.0.0.3", "b")
	c := testkit.StartHTTPBackend(t, "127.0.0.4", "c")
	secCrt, secKey := serviceCA.Issue(t, "sec.app.svc")
	sec := testkit.StartTLSBackend(t, "127.0.0.5", "sec", secCrt, secKey)
	newCrt, newKey := ca.Issue(t, "new.example.com")
	secRouteCrt, secRouteKey := ca.Issue(t, "sec.example.com")

	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 2
	defaultCert := ca.IssueBundle(t, "default.example.com")
	dir := testkit.TempDir(t)
	translate := func(w world) *model.Config {
		cfg, problems := mapping.Translate(w.input(t), opts)
		for _, p := range problems {
			if !p.Warning {
				t.Fatalf("translate: %v", p)
			}
		}
		return cfg
	}
	renderFiles := func(cfg *model.Config) []render.File {
		files, err := render.Render(cfg, render.Options{Dir: dir, DefaultCertificatePEM: defaultCert})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		return files
	}

	w := world{web: []*testkit.Backend{a}, newCert: [2][]byte{newCrt, newKey}, secure: sec, secCA: serviceCA.PEM(), newBknd: c,
		secCert: [2][]byte{secRouteCrt, secRouteKey}}
	applied := plan.WithPool(translate(w))
	files := renderFiles(applied)
	h := testbed.StartHAProxy(t, dir, files)
	admin := socket.NewAdmin(h.AdminSocket, socket.Options{})
	master := socket.NewMaster(h.MasterSocket, socket.Options{})
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, ca.Pool())
	paths, err := render.PathsFor(applied, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkLive(t, admin, applied, paths, files)

	step := func(name string, w world) plan.Plan {
		t.Helper()
		p := plan.Compute(applied, translate(w))
		if p.NeedsReload() {
			t.Fatalf("%s: the plan reloads: %v", name, p.Structural)
		}
		files = renderFiles(p.Next)
		testbed.WriteFiles(t, dir, files)
		if paths, err = render.PathsFor(p.Next, dir); err != nil {
			t.Fatal(err)
		}
		res, err := apply.Apply(ctx, admin, p.Next, paths, dir, p.Ops)
		if err != nil {
			t.Fatalf("%s: %v\nops:\n%s", name, err, opsText(p.Ops))
		}
		if !res.Session || res.Applied+len(res.Deferred) != len(p.Ops) {
			t.Errorf("%s: result %+v for %d ops", name, res, len(p.Ops))
		}
		retryDeferred(t, admin, p.Next, paths, dir, res.Deferred)
		checkLive(t, admin, p.Next, paths, files)
		applied = p.Next
		t.Logf("%s: %d ops in %v: %v", name, res.Applied, res.Duration, res.Counts)
		return p
	}
	get := func(url string) (int, string) {
		status, backend, _ := client.Get(t, url)
		return status, backend
	}

	// Scale up: a second endpoint.
	w.web = []*testkit.Backend{a, b}
	step("scale up", w)
	// The balance is random: 60 requests miss one of two servers with odds of 2^-59 (6 missed
	// one in 32 runs).
	seen := map[string]bool{}
	for i := 0; i < 60 && len(seen) < 2; i++ {
		_, backend := get("http://web.example.com/")
		seen[backend] = true
	}
	if !seen["a"] || !seen["b"] || len(seen) != 2 {
		t.Errorf("web served by %v, want a and b", seen)
	}

	// New Routes: an edge Route with its certificate and a reencrypt Route with its CA: both claim
	// spares.
	w.withNew = true
	p := step("new routes", w)
	for _, kind := range []model.BackendKind{model.KindEdge, model.KindReencrypt} {
		if !claimed(p.Next, kind) {
			t.Errorf("no %s spare claimed", kind)
		}
	}
	if status, backend := get("https://new.example.com/x"); status != http.StatusOK || backend != "c" {
		t.Errorf("https://new.example.com = %d from %q, want 200 from c", status, backend)
	}
	if leaf := client.Fetch(t, "https://new.example.com/").Leaf(); leaf == nil || leaf.Subject.CommonName != "new.example.com" {
		t.Errorf("new.example.com served certificate %v, want its own", leaf)
	}
	if status, backend := get("https://sec.example.com/"); status != http.StatusOK || backend != "sec" {
		t.Errorf("https://sec.example.com = %d from %q, want 200 from sec", status, backend)
	}

	// Insecure policy Allow: plain HTTP reaches the Route too (map entries only).
	w.allow = true
	step("insecure allow", w)
	if status, backend := get("http://new.example.com/y"); status != http.StatusOK || backend != "c" {
		t.Errorf("http://new.example.com = %d from %q, want 200 from c", status, backend)
	}

	// A whole-map replace (prepare, payloads, commit) of every map leaves the same entries live.
	var replace []plan.Op
	for _, m := range applied.Maps {
		replace = append(replace, plan.ReplaceMap{Map: m.Name, Entries: m.Entries})
	}
	if res, err := apply.Apply(ctx, admin, applied, paths, dir, replace); err != nil || res.Counts["replace_map"] != len(applied.Maps) {
		t.Fatalf("replace maps: %+v, %v", res, err)
	}
	checkLive(t, admin, applied, paths, files)
	if status, backend := get("http://new.example.com/y"); status != http.StatusOK || backend != "c" {
		t.Errorf("http://new.example.com = %d from %q after the replace, want 200 from c", status, backend)
	}

	// Scale down: a goes (its idle connections may defer the deletion).
	w.web = []*testkit.Backend{b}
	step("scale down", w)
	for range 4 {
		if _, backend := get("http://web.example.com/"); backend != "b" {
			t.Errorf("web served by %q after scale down, want b", backend)
		}
	}

	ps, err := master.ShowProc(ctx)
	if err != nil || ps.Master.Reloads != 0 {
		t.Errorf("show proc = %+v, %v; want no reload", ps, err)
	}

	// The Routes go away. The certificate's crt-list line cannot be deleted at runtime on 2.6 (its
	// path holds ':'): Apply stops there, asks for a reload, and the reload of the written files
	// reaches Next.
	w.withNew, w.allow = false, false
	p = plan.Compute(applied, translate(w))
	files = renderFiles(p.Next)
	testbed.WriteFiles(t, dir, files)
	if paths, err = render.PathsFor(p.Next, dir); err != nil {
		t.Fatal(err)
	}
	if !p.NeedsReload() {
		res, err := apply.Apply(ctx, admin, p.Next, paths, dir, p.Ops)
		var oe *apply.OpError
		switch {
		case err == nil:
			retryDeferred(t, admin, p.Next, paths, dir, res.Deferred)
		case errors.As(err, &oe) && errors.Is(err, socket.ErrUnsupported) && errors.Is(err, apply.ErrReloadRequired):
			if _, ok := oe.Op.(plan.DelCrtListEntry); !ok {
				t.Fatalf("unsupported op %s, want the crt-list deletion", oe.Op)
			}
			t.Logf("falling back to a reload: %v", err)
			reload(t, master, ps.Master.Reloads+1)
		default:
			t.Fatalf("remove routes: %v", err)
		}
	} else {
		reload(t, master, ps.Master.Reloads+1)
	}
	checkLive(t, admin, p.Next, paths, files)
	if status, backend := get("http://new.example.com/"); status != http.StatusServiceUnavailable {
		t.Errorf("http://new.example.com = %d from %q after its Route went, want 503", status, backend)
	}
	if _, backend := get("http://web.example.com/"); backend != "b" {
		t.Errorf("web served by %q, want b", backend)
	}
}

func claimed(cfg *model.Config, kind model.BackendKind) bool {
	for _, b := range cfg.Backends {
		if b.Spare && b.Kind == kind && b.Route != "" && len(b.Servers) > 0 {
			return true
		}
	}
	return false
}

// retryDeferred re-applies deferred deletions until HAProxy accepts them (idle connections to a
// removed server close within a few seconds).
func retryDeferred(t *testing.T, r socket.Runner, next *model.Config, paths render.RuntimePaths, dir string, deferred []plan.DelServer) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); len(deferred) > 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("deletions still deferred after 30s: %v", deferred)
		}
		ops := make([]plan.Op, len(deferred))
		for i, d := range deferred {
			ops[i] = d
		}
		res, err := apply.Apply(context.Background(), r, next, paths, dir, ops)
		if err != nil {
			t.Fatalf("retry deferred deletions: %v", err)
		}
		deferred = res.Deferred
	}
}

func reload(t *testing.T, m *socket.Master, reloads int) {
	t.Helper()
	if _, err := m.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ps socket.ProcState
	var err error
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ps, err = m.ShowProc(context.Background()); err == nil && ps.Master.Reloads >= reloads {
			if ps.Failed != 0 {
				t.Fatalf("reload failed: %+v", ps)
			}
			// The new worker answers on the admin socket once it is up.
			time.Sleep(100 * time.Millisecond)
			return
		}
	}
	t.Fatalf("no reload: %+v, %v", ps, err)
}

// checkLive compares HAProxy's live servers, map entries, crt-list and certificates with cfg and
// its rendered files.
func checkLive(t *testing.T, r socket.Runner, cfg *model.Config, paths render.RuntimePaths, files []render.File) {
	t.Helper()
	ctx := context.Background()
	states, err := socket.ShowServersState(ctx, r, "")
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]map[string]socket.ServerState{}
	for _, s := range states {
		if live[s.Backend] == nil {
			live[s.Backend] = map[string]socket.ServerState{}
		}
		live[s.Backend][s.Server] = s
	}
	for _, b := range cfg.Backends {
		if len(live[b.Name]) != len(b.Servers) {
			t.Errorf("backend %s: %d live servers, want %d", b.Name, len(live[b.Name]), len(b.Servers))
		}
		for _, s := range b.Servers {
			l, ok := live[b.Name][s.Name]
			if !ok {
				t.Errorf("backend %s: server %s missing", b.Name, s.Name)
				continue
			}
			if l.Addr != s.Addr || l.Port != int(s.Port) || l.UserWeight != int(s.Weight) || adminState(l.AdminState) != s.State {
				t.Errorf("backend %s server %s: live %+v, want %s:%d weight %d %s", b.Name, s.Name, l, s.Addr, s.Port, s.Weight, s.State)
			}
		}
	}
	want := map[string][]model.MapEntry{}
	for _, m := range cfg.Maps {
		want[m.Name] = m.Entries
	}
	for name, p := range paths.Maps {
		got, err := socket.ShowMap(ctx, r, p)
		if err != nil {
			t.Errorf("show map %s: %v", name, err)
			continue
		}
		sort.Slice(got, func(i, j int) bool { return got[i].Key < got[j].Key })
		var gotModel []model.MapEntry
		for _, e := range got {
			gotModel = append(gotModel, model.MapEntry{Key: e.Key, Value: e.Value})
		}
		if !slices.Equal(gotModel, want[name]) {
			t.Errorf("map %s: live %v, want %v", name, gotModel, want[name])
		}
	}
	lines, err := socket.ShowCrtList(ctx, r, paths.CertList)
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, f := range files {
		if f.Path == layout.InConf(model.CertList) {
			rendered = strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n")
			if len(f.Data) == 0 {
				rendered = nil
			}
		}
	}
	slices.Sort(lines)
	slices.Sort(rendered)
	if !slices.Equal(lines, rendered) {
		t.Errorf("crt-list: live %q, rendered %q", lines, rendered)
	}
	for _, c := range cfg.Certificates {
		fp, _, err := socket.ShowCert(ctx, r, paths.CertDir+"/"+c.Name)
		if err != nil || fp != fingerprint(t, c.PEM) {
			t.Errorf("certificate %s: live fingerprint %q (%v), want %s", c.Name, fp, err, fingerprint(t, c.PEM))
		}
	}
}

func adminState(bits int) model.ServerState {
	switch {
	case bits&0x01 != 0:
		return model.StateMaint
	case bits&0x08 != 0:
		return model.StateDrain
	}
	return model.StateReady
}

func fingerprint(t *testing.T, pemText string) string {
	t.Helper()
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		t.Fatal("no PEM block")
	}
	sum := sha1.Sum(block.Bytes)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func opsText(ops []plan.Op) string {
	var b strings.Builder
	for _, op := range ops {
		b.WriteString("  " + op.String() + "\n")
	}
	return b.String()
}
