package faults

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
)

// Paths and anchors of the custom templates TestBrokenCustomTemplate derives from the default one.
const (
	defaultTemplate = "../../mapping/render/haproxy.cfg.tmpl"
	backendAnchor   = "\nbackend {{ $b.Name }} from {{ $b.Profile }}"
	globalAnchor    = "\nglobal\n"
	// badRoute is the Route the custom template renders an invalid line for.
	badRoute = "e2e/bad"
	// badKeyword is that line: HAProxy's configuration check names it.
	badKeyword = "not-a-keyword"
	// brokenRunTimeout bounds a run of haroute with a broken template.
	brokenRunTimeout = 20 * time.Second
	// brokenWatch is how long a haroute that keeps running with a broken template is watched.
	brokenWatch = 3 * time.Second
)

// templates are the custom templates of TestBrokenCustomTemplate: good renders a valid configuration
// for every Route but badRoute; the broken ones fail at parse, at execution, or render a
// configuration HAProxy refuses whatever the Routes.
type templates struct {
	good, syntax, exec, refused string
}

// writeTemplates derives the templates from the default one and writes them under dir.
func writeTemplates(t *testing.T, dir string) templates {
	t.Helper()
	text, err := os.ReadFile(defaultTemplate)
	if err != nil {
		t.Fatalf("default template: %v", err)
	}
	def := string(text)
	if !strings.Contains(def, backendAnchor) || !strings.Contains(def, globalAnchor) {
		t.Fatal("the default template has no backend mode line or global section to anchor the custom templates")
	}
	good := strings.Replace(def, backendAnchor, backendAnchor+"\n{{- if eq $b.Route \""+badRoute+"\" }}\n  "+badKeyword+"{{ end }}", 1)
	files := map[string]string{
		"good.tmpl":    good,
		"syntax.tmpl":  good + "\n{{ if }}\n",
		"exec.tmpl":    strings.Replace(good, globalAnchor, globalAnchor+"  # {{ .NoSuchField }}\n", 1),
		"refused.tmpl": strings.Replace(good, globalAnchor, globalAnchor+"  "+badKeyword+"\n", 1),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatalf("template %s: %v", name, err)
		}
	}
	return templates{
		good:    filepath.Join(dir, "good.tmpl"),
		syntax:  filepath.Join(dir, "syntax.tmpl"),
		exec:    filepath.Join(dir, "exec.tmpl"),
		refused: filepath.Join(dir, "refused.tmpl"),
	}
}

// TestBrokenCustomTemplate runs haroute in the sidecar shape with a custom template (--template; it
// is read once, at start) under load on a Route that exists throughout.
//
// At runtime: a Route the template renders an invalid line for is refused by `haproxy -c`; haroute
// says so (log, haroute_update_failures_total), serves every other change (a Route added with it),
// never the refused Route, and the base Route's traffic is unaffected.
//
// At a restart with a broken template (a parse error, an execution error, a configuration HAProxy
// refuses): haroute must not take the running HAProxy down or change what it serves: it exits with an
// error naming the template, or stays up without ever reloading HAProxy into a broken configuration
// and reports itself not ready; the last good haproxy.cfg stays on disk (an HAProxy restart must
// still work). A restart with the good template then converges again. No request of the load fails.
func TestBrokenCustomTemplate(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.54.1", "web")
	host, goodHost, badHost := "base.tmpl.e2e.test", "good.tmpl.e2e.test", "bad.tmpl.e2e.test"
	b := newBed(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("base", host, "web"),
		"service.yaml": testkit.ServiceYAML("web", web),
	})
	tmpl := writeTemplates(t, testkit.TempDir(t))
	r1, h := b.StartSidecar(testbed.FolderOpts{MayExit: true}, "--template", tmpl.good)
	r1.WaitAnswer(host, "/", http.StatusOK, web.Name)
	reloadsStart := r1.Reloads()
	load := testkit.StartLoad(t, testkit.NewClient(t, r1.HTTPPort, r1.HTTPSPort, nil), "http://"+host+"/", web.Name)
	time.Sleep(loadSettle)

	// At runtime.
	failuresBefore := mustMetric(t, r1.StatsPort, "haroute_update_failures_total")
	logBefore := len(r1.Proc.Out.String())
	b.Write("bad.yaml", testkit.RouteYAML("bad", badHost, "web"))
	b.Write("good.yaml", testkit.RouteYAML("good", goodHost, "web"))
	waitServed(t, r1, goodHost, web.Name)
	waitMetricAbove(t, r1.StatsPort, "haroute_update_failures_total", failuresBefore)
	if code, be, err := r1.Get(badHost, "/"); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("the Route the template breaks answers %d from %q (%v); want 503 (not served)", code, be, err)
	}
	runtimeLog := r1.Proc.Out.String()[logBefore:]
	if grepLine(runtimeLog, "bad", badKeyword) == "" {
		t.Errorf("no log line names the refused Route and HAProxy's complaint; log:\n%s", runtimeLog)
	}
	t.Logf("at runtime: %s", grepLine(runtimeLog, "bad", badKeyword))
	b.Remove("bad.yaml")

	// A restart with each broken template.
	if err := r1.Proc.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-r1.Proc.Done()
	cfgPath := layout.For(b.HAProxyDir).Config()
	good := testbed.ReadConfig(t, b.HAProxyDir)
	st := r1.ShowProc()
	if len(st.Workers) == 0 {
		t.Fatal("show proc lists no worker")
	}
	master, worker := st.Master.PID, st.Workers[0].PID
	for _, c := range []struct {
		name, path string
		extra      []string
		says       []string // what haroute's error or log names (any one)
	}{
		{"parse error", tmpl.syntax, nil, []string{filepath.Base(tmpl.syntax)}},
		{"execution error", tmpl.exec, nil, []string{filepath.Base(tmpl.exec)}},
		{"refused by HAProxy", tmpl.refused, nil, []string{badKeyword}},
		// A sidecar without a local haproxy: only the master's reload can check, and HAProxy 2.6 gives
		// the reason of a failed reload only in its own log.
		{"refused by HAProxy without a check binary", tmpl.refused, []string{"--check-binary", "none"}, []string{badKeyword, "reload failed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			brokenRestart(t, b, r1, append([]string{"--template", c.path}, c.extra...), c.says)
			var problems []string
			if st := r1.ShowProc(); st.Master.PID != master || len(st.Workers) == 0 || st.Workers[0].PID != worker {
				problems = append(problems, fmt.Sprintf("HAProxy master %d, workers %+v; want master %d still served by worker %d", st.Master.PID, st.Workers, master, worker))
			}
			if now := testbed.ReadConfig(t, b.HAProxyDir); now != good {
				cerr := testbed.CheckConfig(cfgPath)
				problems = append(problems, fmt.Sprintf("haroute replaced the configuration HAProxy runs (haproxy -c: %v)", cerr))
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
	if h.Exited() {
		t.Fatal("HAProxy exited")
	}

	// Back to the good template.
	restarted := time.Now()
	r2 := b.Process(testbed.FolderOpts{}, r1)
	r2.Start(append(testbed.SidecarFlags(), "--template", tmpl.good))
	waitServed(t, r2, goodHost, web.Name)
	r2.WaitAnswer(host, "/", http.StatusOK, web.Name)
	back := time.Now()
	time.Sleep(loadSettle)
	f := stopLoad(load)
	load.Check(t, 1)
	figures(t, "broken custom template", f, "good template restart served after", back.Sub(restarted), r2.Reloads()-reloadsStart)
}

// brokenRestart runs haroute on b with flags naming a broken template (bounded by brokenRunTimeout).
// It must exit with an error that names one of says, or keep running, not ready, with a warning or
// an error in its log that names one of them.
func brokenRestart(t *testing.T, b *testbed.Folder, like *testbed.RouterProcess, flags, says []string) {
	t.Helper()
	p := b.Process(testbed.FolderOpts{MayExit: true}, like)
	ctx, cancel := context.WithTimeout(context.Background(), brokenRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.Binary, p.Args(append(testbed.SidecarFlags(), flags...)...)...)
	cmd.Env = p.Env()
	proc := testkit.StartProcess(t, "haroute", cmd, testkit.ProcessOptions{StopTimeout: stopTimeout, LogTail: logTail})
	deadline := time.Now().Add(brokenWatch)
	code, body := 0, ""
	for time.Now().Before(deadline) && !proc.Exited() {
		code, body, _ = statsGet(p.StatsPort, "/healthz/ready")
		time.Sleep(100 * time.Millisecond)
	}
	out := proc.Out.String()
	if proc.Exited() {
		last := lastLine(out)
		t.Logf("haroute exited (%v): %s", cmd.ProcessState, last)
		if cmd.ProcessState.Success() || !containsAny(last, says) {
			t.Errorf("haroute exited with %v and the last line %q; want a failure that names one of %q", cmd.ProcessState, last, says)
		}
		return
	}
	t.Logf("haroute still runs after %v; /healthz/ready %d %q", brokenWatch, code, strings.TrimSpace(body))
	if code == http.StatusOK {
		t.Errorf("haroute reports ready with a template it cannot serve")
	}
	named := false
	for _, l := range strings.Split(out, "\n") {
		named = named || (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) && containsAny(l, says)
	}
	if !named {
		t.Errorf("no warning or error names one of %q; log:\n%s", says, out)
	}
	if err := proc.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Errorf("stop haroute: %v", err)
	}
	<-proc.Done()
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// lastLine returns the last non-empty line of text.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return lines[len(lines)-1]
}
