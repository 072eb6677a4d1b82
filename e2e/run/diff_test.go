package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// TestDiffCommand: `haroute diff` against a running router: nothing to report while desired,
// applied, HAProxy and the files agree; a Route only in the desired folder is pending; a weight
// changed by hand is drift (and HAProxy then differs from the files); a map file edited on disk
// is a stale file. (Operator holds are in the unit tests: the drift check that sees them runs every
// 30 s.)
func TestDiffCommand(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.21", "web")
	other := testkit.StartHTTPBackend(t, "127.0.2.22", "other")
	files := map[string]string{
		"web.yaml":     testkit.RouteYAML("web", "diff.e2e.test", "web"),
		"other.yaml":   testkit.RouteYAML("other", "other.diff.e2e.test", "other"),
		"service.yaml": testkit.ServiceYAML("web", web) + "---\n" + testkit.ServiceYAML("other", other),
	}
	r := startRouter(t, files)
	r.WaitAnswer("diff.e2e.test", "/", 200, web.Name)
	r.WaitAnswer("other.diff.e2e.test", "/", 200, other.Name)
	diff := func(args ...string) ([]views.DiffRow, int) {
		t.Helper()
		out, code := inspectCmd(t, r, "diff", append([]string{"-o", "json"}, args...)...)
		var rows []views.DiffRow
		if err := json.Unmarshal(out, &rows); err != nil {
			t.Fatalf("diff output: %v\n%s", err, out)
		}
		return rows, code
	}
	kinds := func(rows []views.DiffRow, route, objectPrefix string) string {
		for _, row := range rows {
			if row.Route == route && strings.HasPrefix(row.Object, objectPrefix) {
				return strings.Join(row.Kinds, ",")
			}
		}
		return ""
	}
	if rows, code := diff("--manifests", r.Manifests, "--allow-loopback-endpoints"); code != 0 || len(rows) != 0 {
		t.Fatalf("diff of a settled router: exit %d, %+v", code, rows)
	}
	// Without the router's flag, diff translates with the settings the router says it runs with
	// (--allow-loopback-endpoints among them); --local-settings uses the command's own, which
	// refuse the loopback endpoints: every server is pending then.
	if rows, code := diff("--manifests", r.Manifests); code != 0 || len(rows) != 0 {
		t.Fatalf("diff with the router's own settings: exit %d, %+v", code, rows)
	}
	if rows, code := diff("--manifests", r.Manifests, "--local-settings"); code != 1 || len(rows) == 0 || kinds(rows, "web", "server") != views.DiffPending {
		t.Fatalf("diff with the command's own settings: exit %d, %+v", code, rows)
	}

	// A desired folder with one more Route: pending.
	desired := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(desired, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(desired, "new.yaml"), []byte(testkit.RouteYAML("new", "new.diff.e2e.test", "web")), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, code := diff("--manifests", desired, "--allow-loopback-endpoints")
	if code != 1 || kinds(rows, "new", "route") != views.DiffPending || kinds(rows, "new", "server") != views.DiffPending {
		t.Fatalf("diff with a new desired Route: exit %d, %+v", code, rows)
	}

	// A map file edited on disk: stale file (HAProxy still has the entry).
	mapPath := layout.For(r.Dir).InConf(model.MapHTTP)
	raw, err := os.ReadFile(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := slices.DeleteFunc(strings.Split(string(raw), "\n"), func(l string) bool { return strings.HasPrefix(l, "other.diff.e2e.test/") })
	if err := os.WriteFile(mapPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, code = diff("--no-desired")
	if code != 1 || kinds(rows, "other", "map os_http_be.map") != views.DiffStaleFile {
		t.Fatalf("diff after editing a map file: exit %d, %+v", code, rows)
	}
	if fs, code := doctorFindings(t, r); code != 1 || !hasFinding(fs, "FILES_STALE", "route e2e/other") {
		t.Fatalf("doctor after editing a map file: exit %d, %+v", code, fs)
	}
	if err := os.WriteFile(mapPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	// A weight set by hand: drift, and HAProxy differs from the files. The drift check may repair it
	// before diff reads, so it is seeded again a bounded number of times.
	admin := socket.NewAdmin(layout.For(r.Dir).AdminSocket(), socket.Options{})
	server := firstServer(t, admin, "be_http:e2e:web")
	for range 3 {
		if err := socket.SetServerWeight(context.Background(), admin, "be_http:e2e:web", server, 77); err != nil {
			t.Fatal(err)
		}
		if rows, code = diff("--no-desired"); kinds(rows, "web", "server") != "" {
			break
		}
	}
	if code != 1 || kinds(rows, "web", "server") != views.DiffDrift+","+views.DiffStaleFile {
		t.Fatalf("diff after a weight set by hand: exit %d, %+v", code, rows)
	}

	// The table names the kinds and the values.
	out, _ := inspectCmd(t, r, "diff", "--no-desired")
	defer func() {
		if t.Failed() {
			t.Logf("diff table:\n%s", out)
		}
	}()
	if !strings.Contains(string(out), "KIND") || !strings.Contains(string(out), "drift,stale-file") || !strings.Contains(string(out), "weight=77 ready") {
		t.Fatalf("diff table:\n%s", out)
	}
}

// TestDoctorFailedReload: a reload HAProxy refuses (a configuration broken on disk, reloaded through
// the master by hand) is a RELOAD_FAILED finding.
func TestDoctorFailedReload(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.2.23", "web")
	r := startRouter(t, map[string]string{
		"web.yaml":     testkit.RouteYAML("web", "failed.e2e.test", "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	r.WaitAnswer("failed.e2e.test", "/", 200, web.Name)
	cfg := layout.For(r.Dir).Config()
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(raw, []byte("\nthis-is-not-a-keyword\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	master := socket.NewMaster(layout.For(r.Dir).MasterSocket(), socket.Options{})
	if _, err := master.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	var fs []views.Finding
	err = testkit.Eventually(10*time.Second, 100*time.Millisecond, func() error {
		var code int
		if fs, code = doctorFindings(t, r); code != 1 || !hasFinding(fs, "RELOAD_FAILED", "haproxy") {
			return fmt.Errorf("exit %d, %+v", code, fs)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("doctor after a failed reload: %v", err)
	}
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	r.WaitAnswer("failed.e2e.test", "/", 200, web.Name)
}

// doctorFindings runs `haroute doctor -o json` against r.
func doctorFindings(t *testing.T, r *folderRouter) ([]views.Finding, int) {
	t.Helper()
	out, code := inspectCmd(t, r, "doctor", "-o", "json")
	var fs []views.Finding
	if err := json.Unmarshal(out, &fs); err != nil {
		t.Fatalf("doctor output: %v\n%s", err, out)
	}
	return fs, code
}

func hasFinding(fs []views.Finding, code, object string) bool {
	return slices.ContainsFunc(fs, func(f views.Finding) bool { return f.Code == code && f.Object == object })
}
