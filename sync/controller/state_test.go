package controller

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/routetest"
	"github.com/haroute/haroute/runtime/haproxy"
)

// TestStateAfterSyncs: the state socket's answer carries the applied state, the reloads with their
// reasons, the runtime ops and the last sync.
func TestStateAfterSyncs(t *testing.T) {
	up := newFakeHAProxy()
	src, c := startSynced(t, up, 0)
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the second update", func() bool { return up.count("update") == 2 })
	waitFor(t, 3*time.Second, "the state of the second sync", func() bool { return c.State().RuntimeOps["add_server"] == 1 })

	code, body := get(t, StateHandler(c), "/state")
	if code != http.StatusOK {
		t.Fatalf("GET /state: %d %s", code, body)
	}
	var st stateapi.State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if !st.Ready || st.Applied == nil || len(st.Applied.Routes) != 1 {
		t.Fatalf("state: ready %v, applied %v", st.Ready, st.Applied != nil)
	}
	if st.ReloadsTotal != 1 || len(st.Reloads) != 1 || st.Reloads[0].Reason.Kind != plan.Initial {
		t.Fatalf("reloads %d %+v, want one Initial", st.ReloadsTotal, st.Reloads)
	}
	if st.LastSync == nil || st.LastSync.Reloaded || st.LastSync.Ops["add_server"] != 1 {
		t.Fatalf("last sync %+v", st.LastSync)
	}
	if ch := st.Changes["demo/web"]; ch.Via != stateapi.ViaRuntime || ch.At.IsZero() {
		t.Fatalf("last change of demo/web %+v, want the runtime add_server", ch)
	}
	if code, _ := get(t, StateHandler(c), "/other"); code != http.StatusNotFound {
		t.Fatalf("GET /other: %d", code)
	}
}

// TestStateRedactsKeys: certificates and CA bundles leave the router as digests only.
func TestStateRedactsKeys(t *testing.T) {
	cfg := &model.Config{
		Certificates: []model.Certificate{{Name: "ns:web.pem", PEM: "-----BEGIN PRIVATE KEY-----\nsecret\n"}},
		CAFiles:      []model.CAFile{{Name: "ns:web.ca.pem", PEM: "-----BEGIN CERTIFICATE-----\n"}},
	}
	out, digests := redacted(cfg)
	if len(digests) != 1 || digests[0] != out.Certificates[0].PEM {
		t.Fatalf("digests %v", digests)
	}
	if strings.Contains(out.Certificates[0].PEM, "secret") || !strings.HasPrefix(out.Certificates[0].PEM, "sha256:") ||
		!strings.HasPrefix(out.CAFiles[0].PEM, "sha256:") {
		t.Fatalf("redacted: %+v", out)
	}
	if !strings.Contains(cfg.Certificates[0].PEM, "secret") {
		t.Fatal("redacted modified its argument")
	}
}

// TestRouteChanges: the last change of a Route says whether ops or a reload carried it, and only the
// Routes an update touched get a new one.
func TestRouteChanges(t *testing.T) {
	in := webInput("10.0.0.1")
	in.Routes = append(in.Routes, routetest.Route("demo", "other", "other.example.com", 0))
	in.Routes[1].Spec.To.Name = "web"
	first := translate(t, in)
	p0 := plan.ComputeWith(nil, first, plan.Options{})
	t0 := time.Unix(100, 0)
	last := recordChanges(nil, nil, p0.Next, haproxy.Outcome{Plan: p0, Reloaded: true, Reason: p0.Reason()}, t0)
	if len(last) != 2 || last["demo/web"].Via != stateapi.ViaReload || last["demo/web"].Reason != string(plan.Initial) {
		t.Fatalf("after the first reload: %+v", last)
	}
	in.Routes = in.Routes[:1]
	in.EndpointSlices = []*discoveryv1.EndpointSlice{routetest.PodSlice("demo", "web", "10.0.0.1", "10.0.0.2")}
	p1 := plan.ComputeWith(p0.Next, translate(t, in), plan.Options{})
	if p1.NeedsReload() {
		t.Fatalf("a new endpoint and a deleted Route reload: %v", p1.Structural)
	}
	t1 := time.Unix(200, 0)
	last = recordChanges(last, p0.Next, p1.Next, haproxy.Outcome{Plan: p1}, t1)
	if want := (stateapi.RouteChange{At: t1, Via: stateapi.ViaRuntime}); len(last) != 1 || last["demo/web"] != want {
		t.Fatalf("after the runtime change: %+v, want demo/web %+v alone", last, want)
	}
}

// TestStateCertificates: the state describes each certificate's leaf (names, validity) and the
// Routes it serves, and parses a bundle once.
func TestStateCertificates(t *testing.T) {
	crt, err := os.ReadFile("../../mapping/testdata/certs/example.crt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &model.Config{
		Certificates: []model.Certificate{{Name: "demo:web.pem", PEM: string(crt), SNI: []string{"www.example.com"}}, {Name: "bad.pem", PEM: "junk"}},
		Routes:       []model.RouteInfo{{Namespace: "demo", Name: "web", Certificate: "demo:web.pem"}},
	}
	var r stateRecorder
	_, digests := redacted(cfg)
	certs := r.certificates(cfg, digests)
	if len(certs) != 2 || certs[0].NotAfter.Year() != 2126 || !slices.Contains(certs[0].DNSNames, "*.example.com") ||
		!slices.Equal(certs[0].Routes, []string{"demo/web"}) || certs[0].Digest != digests[0] {
		t.Fatalf("certificates %+v", certs)
	}
	if certs[1].Error == "" || !certs[1].NotAfter.IsZero() {
		t.Fatalf("a bundle without a certificate: %+v", certs[1])
	}
	if len(r.leaves) != 2 {
		t.Fatalf("cache %d entries", len(r.leaves))
	}
}
