package run

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/sync/controller"
)

// TestStateSocket: `haroute run` serves its state on <haproxy-dir>/run/haroute.sock, mode 0600:
// the applied Routes, the reload history with reasons and the rejected Routes with OpenShift's
// reasons; certificates as digests.
func TestStateSocket(t *testing.T) {
	t.Parallel()
	web := testbed.StartHTTPBackend(t, "127.0.2.9", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   routeYAML("state", "state.e2e.test", "web"),
		"bad.yaml":     routeYAML("bad", "bad_host.e2e.test", "web"),
		"service.yaml": serviceYAML("web", []*testbed.Backend{web}),
	})
	r.WaitAnswer("state.e2e.test", "/", http.StatusOK, web.Name)

	path := filepath.Join(r.Dir, "run", "haroute.sock")
	if mode := testbed.FileMode(t, path); mode != 0o600 {
		t.Errorf("state socket mode %v, want 0600", mode)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	resp, err := client.Get("http://haroute/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st controller.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if !st.Ready || st.Applied == nil || len(st.Applied.Routes) != 1 || st.Applied.Routes[0].Host != "state.e2e.test" {
		t.Fatalf("state: ready %v, applied %+v", st.Ready, st.Applied)
	}
	if len(st.Problems) != 1 || st.Problems[0].Name != "bad" || st.Problems[0].Warning {
		t.Fatalf("problems %+v, want the rejection of bad", st.Problems)
	}
	for _, rl := range st.Reloads {
		if rl.Reason.Kind == "" {
			t.Fatalf("a reload without a reason: %+v", st.Reloads)
		}
	}
}
