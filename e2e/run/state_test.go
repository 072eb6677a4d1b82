package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// TestStateSocket: `haroute run` serves its state on <haproxy-dir>/run/haroute.sock, mode 0600:
// the applied Routes, the reload history with reasons and the rejected Routes with OpenShift's
// reasons; certificates as digests.
func TestStateSocket(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.9", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("state", "state.e2e.test", "web"),
		"bad.yaml":     testkit.RouteYAML("bad", "bad_host.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("state.e2e.test", "/", http.StatusOK, web.Name)

	path := layout.For(r.Dir).StateSocket()
	if mode := testkit.FileMode(t, path); mode != 0o600 {
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
	var st stateapi.State
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

// TestStateCommand: `haroute state` against a running router: the overview, one row per Route with
// HAProxy's own server counts, a server an operator put in maintenance counted as not usable, and
// the exit codes (0 for any listing it could read, a Route without a usable server too, as kubectl get;
// 2 for nothing to read).
func TestStateCommand(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.10", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("cmd", "cmd.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("cmd.e2e.test", "/", http.StatusOK, web.Name)
	state := func(args ...string) (string, int) {
		t.Helper()
		out, code := inspectCmd(t, r, "state", args...)
		return string(out), code
	}
	var rows []views.RouteRow
	err := testkit.Eventually(10*time.Second, 50*time.Millisecond, func() error {
		out, code := state("routes", "-o", "json")
		rows = nil
		if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 {
			return fmt.Errorf("exit %d, %v: %s", code, err, out)
		}
		if len(rows) != 1 || rows[0].Usable != 1 {
			return fmt.Errorf("rows %+v", rows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Name != "cmd" || rows[0].Status != views.StatusServing || rows[0].Servers != 1 {
		t.Fatalf("state routes: %+v", rows)
	}
	if out, code := state(); code != 0 || !strings.Contains(out, "1 admitted, 0 rejected, 0 without a usable server") {
		t.Fatalf("state: exit %d\n%s", code, out)
	}

	// An operator takes the only server out: the Route has no usable server, which the listing shows
	// with exit status 0 (a pipeline under set -o pipefail goes on).
	admin := socket.NewAdmin(layout.For(r.Dir).AdminSocket(), socket.Options{})
	if err := socket.SetServerState(context.Background(), admin, rows[0].Backend, firstServer(t, admin, rows[0].Backend), "maint"); err != nil {
		t.Fatal(err)
	}
	out, code := state("routes")
	if code != 0 || !strings.Contains(out, views.StatusNoServer) || !strings.Contains(out, "0/1") {
		t.Fatalf("state routes with the server in maintenance: exit %d\n%s", code, out)
	}
	if _, code := state("--haproxy-dir", t.TempDir()); code != 2 {
		t.Fatalf("state of an empty directory: exit %d, want 2", code)
	}
}

// firstServer returns the name of the first server HAProxy has in backend.
func firstServer(t *testing.T, admin *socket.Admin, backend string) string {
	t.Helper()
	states, err := socket.ShowServersState(context.Background(), admin, backend)
	if err != nil || len(states) == 0 {
		t.Fatalf("servers of %s: %v %v", backend, states, err)
	}
	return states[0].Server
}

// TestExplainCommand: `haroute explain` against a running router: the Route a URL reaches, HAProxy's
// own answers agreeing with the model, and a map entry deleted by hand (drift) marked as a
// disagreement with exit status 1.
func TestExplainCommand(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.11", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("root", "explain.e2e.test", "web"),
		"api.yaml":     strings.Replace(testkit.RouteYAML("api", "explain.e2e.test", "web"), "spec:\n", "spec:\n  path: /api\n", 1),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("explain.e2e.test", "/api", http.StatusOK, web.Name)
	explain := func(args ...string) (views.Explanation, int) {
		t.Helper()
		out, code := inspectCmd(t, r, "explain", append([]string{"-o", "json"}, args...)...)
		var ex views.Explanation
		if err := json.Unmarshal(out, &ex); err != nil {
			t.Fatalf("explain output: %v\n%s", err, out)
		}
		return ex, code
	}
	ex, code := explain("http://explain.e2e.test/api")
	if code != 0 || ex.Route != "e2e/api" || ex.Verdict != views.VerdictServed || ex.Disagreements != 0 || len(ex.Servers) != 1 {
		t.Fatalf("explain /api: exit %d, %+v", code, ex)
	}
	asked := 0
	for _, st := range ex.Steps {
		if st.HAProxy != "" {
			asked++
		}
	}
	if asked == 0 {
		t.Fatalf("HAProxy was never asked: %+v", ex.Steps)
	}
	// Drift: the exact entry of /api disappears from HAProxy (repaired within the drift interval, 30 s).
	admin := socket.NewAdmin(layout.For(r.Dir).AdminSocket(), socket.Options{})
	mapPath := layout.For(r.Dir).InConf(model.MapHTTP)
	var lastEx views.Explanation
	for range 3 {
		if err := socket.DelMap(context.Background(), admin, mapPath, "=explain.e2e.test/api"); err != nil {
			t.Fatal(err)
		}
		ex, code = explain("http://explain.e2e.test/api")
		lastEx = ex
		if code == 1 && ex.Disagreements == 1 && ex.Route == "e2e/root" {
			return
		}
	}
	t.Fatalf("explain after the drift: exit %d, %+v", code, lastEx)
}

// TestDataPlaneView: with STATS_USERNAME and STATS_PASSWORD, the stats port serves the read-only Data
// Plane API view behind basic authentication, and refuses writes; HAProxy's stats page is on / behind
// the same credentials, read-only.
func TestDataPlaneView(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.12", "web")
	r := startRouter(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("dp", "dp.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	}, "STATS_USERNAME=admin", "STATS_PASSWORD=s3cret")
	r.WaitAnswer("dp.e2e.test", "/", http.StatusOK, web.Name)
	base := fmt.Sprintf("http://127.0.0.1:%d/v3/services/haproxy/runtime", r.StatsPort)
	do := func(method, path, user, password string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, _ := do(http.MethodGet, "/info", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("GET /info without credentials: %d", code)
	}
	if code, _ := do(http.MethodGet, "/info", "admin", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("GET /info with a wrong password: %d", code)
	}
	if code, body := do(http.MethodGet, "/info", "admin", "s3cret"); code != http.StatusOK || !strings.Contains(body, "version") {
		t.Fatalf("GET /info: %d %s", code, body)
	}
	if code, body := do(http.MethodGet, "/backends/be_http:e2e:dp/servers", "admin", "s3cret"); code != http.StatusOK || !strings.Contains(body, web.IP) {
		t.Fatalf("GET servers: %d %s", code, body)
	}
	if code, _ := do(http.MethodDelete, "/backends/be_http:e2e:dp/servers/x", "admin", "s3cret"); code != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE: %d, want 405", code)
	}

	// HAProxy's own stats page on /, behind the same credentials.
	base = fmt.Sprintf("http://127.0.0.1:%d", r.StatsPort)
	if code, _ := do(http.MethodGet, "/", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("GET / without credentials: %d", code)
	}
	if code, body := do(http.MethodGet, "/", "admin", "s3cret"); code != http.StatusOK || !strings.Contains(body, "be_http:e2e:dp") || !strings.Contains(body, "Statistics Report") {
		t.Fatalf("GET / (the stats page): %d %.300s", code, body)
	}
	if code, body := do(http.MethodGet, "/;csv", "admin", "s3cret"); code != http.StatusOK || !strings.HasPrefix(body, "# pxname,svname") {
		t.Fatalf("GET /;csv: %d %.300s", code, body)
	}
	if code, _ := do(http.MethodPost, "/", "admin", "s3cret"); code != http.StatusMethodNotAllowed {
		t.Fatalf("POST / (the stats page's admin actions): %d, want 405", code)
	}
	// /metrics behind the same credentials, as OpenShift's router has it; the probes stay open.
	if code, _ := do(http.MethodGet, "/metrics", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without credentials: %d, want 401", code)
	}
	if code, body := do(http.MethodGet, "/metrics", "admin", "s3cret"); code != http.StatusOK || !strings.Contains(body, "haroute_sync_duration_seconds") {
		t.Fatalf("GET /metrics: %d %.200s", code, body)
	}
	for _, probe := range []string{"/healthz", "/healthz/ready"} {
		if code, _ := do(http.MethodGet, probe, "", ""); code != http.StatusOK {
			t.Fatalf("GET %s without credentials: %d", probe, code)
		}
	}
}

// TestDoctorCommand: `haroute doctor` against a running router with seeded faults: a Route whose
// targetPort matches no endpoint port, a server an operator put in maintenance, a map entry HAProxy
// lost (the /api Route shadowed by the / one), a rejected Route.
func TestDoctorCommand(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.13", "web")
	other := testkit.StartHTTPBackend(t, "127.0.2.14", "other")
	r := startRouter(t, map[string]string{
		"root.yaml":    testkit.RouteYAML("root", "doctor.e2e.test", "web"),
		"api.yaml":     strings.Replace(testkit.RouteYAML("api", "doctor.e2e.test", "web"), "spec:\n", "spec:\n  path: /api\n", 1),
		"port.yaml":    strings.Replace(testkit.RouteYAML("port", "port.e2e.test", "web"), "targetPort: http", "targetPort: nope", 1),
		"maint.yaml":   testkit.RouteYAML("maint", "maint.e2e.test", "other"),
		"bad.yaml":     testkit.RouteYAML("bad", "bad_host.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web) + "---\n" + testkit.ServiceYAML("other", other),
	})
	r.WaitAnswer("doctor.e2e.test", "/api", http.StatusOK, web.Name)
	r.WaitAnswer("maint.e2e.test", "/", http.StatusOK, other.Name)
	doctor := func() ([]views.Finding, int) {
		t.Helper()
		out, code := inspectCmd(t, r, "doctor", "-o", "json")
		var fs []views.Finding
		if err := json.Unmarshal(out, &fs); err != nil {
			t.Fatalf("doctor output: %v\n%s", err, out)
		}
		return fs, code
	}
	has := func(fs []views.Finding, code, object string) bool {
		for _, f := range fs {
			if f.Code == code && f.Object == object {
				return true
			}
		}
		return false
	}
	fs, code := doctor()
	if code != 1 || !has(fs, "NO_SERVER", "route e2e/port") || !has(fs, "ROUTE_REJECTED", "route e2e/bad") || has(fs, "ROUTE_NOT_REACHED", "route e2e/api") {
		t.Fatalf("doctor before the faults: exit %d, %+v", code, fs)
	}
	admin := socket.NewAdmin(layout.For(r.Dir).AdminSocket(), socket.Options{})
	if err := socket.SetServerState(context.Background(), admin, "be_http:e2e:maint", firstServer(t, admin, "be_http:e2e:maint"), "maint"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := socket.DelMap(context.Background(), admin, layout.For(r.Dir).InConf(model.MapHTTP), "=doctor.e2e.test/api"); err != nil {
			t.Fatal(err)
		}
		if fs, code = doctor(); has(fs, "ROUTE_NOT_REACHED", "route e2e/api") {
			break
		}
	}
	if code != 1 || !has(fs, "NO_USABLE_SERVER", "route e2e/maint") || !has(fs, "ROUTE_NOT_REACHED", "route e2e/api") || !has(fs, "MODEL_HAPROXY_DISAGREE", "route e2e/api") {
		t.Fatalf("doctor after the faults: exit %d, %+v", code, fs)
	}
}

// inspectCmd runs `haroute <command> --haproxy-dir <r's> args...` and returns its standard output and
// exit status.
func inspectCmd(t *testing.T, r *folderRouter, command string, args ...string) ([]byte, int) {
	t.Helper()
	out, err := exec.Command(binary, append([]string{command, "--haproxy-dir", r.Dir}, args...)...).Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out, ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out, 0
}
