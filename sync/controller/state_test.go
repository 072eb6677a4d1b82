package controller

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
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
	var st State
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
	out := redacted(cfg)
	if strings.Contains(out.Certificates[0].PEM, "secret") || !strings.HasPrefix(out.Certificates[0].PEM, "sha256:") ||
		!strings.HasPrefix(out.CAFiles[0].PEM, "sha256:") {
		t.Fatalf("redacted: %+v", out)
	}
	if !strings.Contains(cfg.Certificates[0].PEM, "secret") {
		t.Fatal("redacted modified its argument")
	}
}
