package views_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/socket"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden and remove orphans")

// goldenSet holds the golden views: testdata/golden/<series>/<view>.txt for every recorded series
// (testdata/transcripts/<series>) and every view of goldenViews, and nothing else.
var goldenSet = filepath.Join("testdata", "golden")

// goldenHAProxyDir is the HAProxy directory the views are given (explain and doctor derive the
// maps' paths from it): the recorder translates the real, temporary one into it.
const goldenHAProxyDir = "/var/lib/haproxy"

// minSeries guards against a broken transcripts folder silently testing nothing: 2.6, 3.0, 3.2, 3.4.
const minSeries = 4

// viewTimeout bounds the views of one series.
const viewTimeout = 30 * time.Second

// viewEnv is what a view works from: the snapshot views.Read returned, the sockets it read
// (a view may ask them more), an admin client of the same socket (what `haroute explain` and
// `haroute doctor` ask `get map` with) and the HAProxy directory.
type viewEnv struct {
	ctx   context.Context
	src   views.Sources
	snap  *views.Snapshot
	admin socket.Runner
	dir   string
}

// now is the instant ages are counted from: when the recorded state was generated.
func (e viewEnv) now() time.Time { return e.snap.State.Generated }

// goldenView is one output of the inspection commands: testdata/golden/<series>/<name>.txt.
type goldenView struct {
	name  string
	write func(w io.Writer, e viewEnv) error
}

// goldenViews are the views the goldens hold, one line each: a new view is a new line here (then
// re-record, so that the transcripts hold the commands it sends, and run -update).
var goldenViews = []goldenView{
	{"state", func(w io.Writer, e viewEnv) error { return views.PrintSummary(w, e.snap.Summary()) }},
	{"state-json", func(w io.Writer, e viewEnv) error { return views.Print(w, views.OutputJSON, e.snap.Summary()) }},
	{"routes", func(w io.Writer, e viewEnv) error {
		return views.PrintRoutes(w, e.snap.Routes(""), false, true, e.now())
	}},
	{"routes-wide", func(w io.Writer, e viewEnv) error {
		return views.PrintRoutes(w, e.snap.Routes(""), true, true, e.now())
	}},
	{"routes-json", func(w io.Writer, e viewEnv) error { return views.Print(w, views.OutputJSON, e.snap.Routes("")) }},
	{"routes-team-b", func(w io.Writer, e viewEnv) error {
		return views.PrintRoutes(w, e.snap.Routes("team-b"), false, false, e.now())
	}},
	{"servers", func(w io.Writer, e viewEnv) error {
		return views.PrintServers(w, e.snap.ServersWhere(views.Filter{}), false, true)
	}},
	{"servers-wide", func(w io.Writer, e viewEnv) error {
		return views.PrintServers(w, e.snap.ServersWhere(views.Filter{}), true, true)
	}},
	{"certs", func(w io.Writer, e viewEnv) error {
		e.snap.ReadCerts(e.ctx, e.admin)
		return views.PrintCerts(w, e.snap.CertsWhere(views.Filter{}, e.now()), false, true, e.now())
	}},
	{"maps", func(w io.Writer, e viewEnv) error {
		e.snap.ReadMaps(e.ctx, e.admin, e.dir)
		return views.PrintMaps(w, e.snap.MapsWhere(views.Filter{}), true)
	}},
	{"workers", func(w io.Writer, e viewEnv) error { return views.PrintWorkers(w, e.snap.Workers(), true) }},
	{"explain-http-web", explainView("http://web.inspect.test/", views.OutputTable)},
	{"explain-http-shop-redirect", explainView("http://shop.inspect.test/api/items", views.OutputTable)},
	{"explain-https-shop", explainView("https://shop.inspect.test/api/items", views.OutputTable)},
	{"explain-https-pass", explainView("https://pass.inspect.test/", views.OutputTable)},
	{"explain-http-unknown", explainView("http://unknown.inspect.test/", views.OutputTable)},
	{"explain-https-shop-json", explainView("https://shop.inspect.test/api/items", views.OutputJSON)},
	{"doctor", doctorView(views.OutputTable)},
	{"doctor-json", doctorView(views.OutputJSON)},
}

// explainView is `haroute explain URL -o output`.
func explainView(url, output string) func(io.Writer, viewEnv) error {
	return func(w io.Writer, e viewEnv) error {
		ex := e.snap.Explain(e.ctx, e.admin, e.dir, views.Request{URL: url})
		if output == views.OutputTable {
			return views.PrintExplanation(w, ex)
		}
		return views.Print(w, output, ex)
	}
}

// doctorView is `haroute doctor -o output`; the table is printed as cmd/haroute/doctor.go does.
func doctorView(output string) func(io.Writer, viewEnv) error {
	return func(w io.Writer, e viewEnv) error {
		e.snap.ReadCerts(e.ctx, e.admin)
		findings := e.snap.Doctor(e.ctx, e.admin, e.dir)
		if output != views.OutputTable {
			return views.Print(w, output, findings)
		}
		if len(findings) == 0 {
			fmt.Fprintln(w, "no findings")
		}
		for _, fd := range findings {
			fmt.Fprintln(w, views.Cell(fd.Level+" ["+fd.Code+"] ("+fd.Object+") "+fd.Message))
			if fd.Hint != "" {
				fmt.Fprintln(w, "    hint: "+views.Cell(fd.Hint))
			}
		}
		return nil
	}
}

// renderViews reads src once, as the commands do, and returns every view's output by name.
func renderViews(t testing.TB, src views.Sources) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), viewTimeout)
	defer cancel()
	e := viewEnv{
		ctx:   ctx,
		src:   src,
		snap:  views.Read(ctx, src),
		admin: socket.NewAdmin(src.Admin, socket.Options{RetryFor: -1}),
		dir:   goldenHAProxyDir,
	}
	if len(e.snap.Notes) > 0 {
		t.Errorf("a source could not be read: %q", e.snap.Notes)
	}
	out := map[string][]byte{}
	for _, v := range goldenViews {
		var b bytes.Buffer
		if err := v.write(&b, e); err != nil {
			t.Errorf("view %s: %v", v.name, err)
		}
		out[v.name] = b.Bytes()
	}
	return out
}

// seriesList returns the recorded series, failing the test when fewer than minSeries are.
func seriesList(t *testing.T) []string {
	t.Helper()
	series, err := recordedSeries()
	if err != nil {
		t.Fatal(err)
	}
	if len(series) < minSeries {
		t.Fatalf("found transcripts of %d HAProxy series in %s (%q), want at least %d", len(series), transcriptsDir, series, minSeries)
	}
	return series
}

// TestGoldenViews replays the transcripts of every HAProxy series to the views, through views.Read
// and the real socket clients, and compares every view with testdata/golden/<series>/<view>.txt
// (go test ./inspect/views/ -run '^TestGolden' -update, or make golden, rewrites them). A view that
// sends a command the transcripts lack fails: re-record (TestRecordTranscripts).
func TestGoldenViews(t *testing.T) {
	for _, series := range seriesList(t) {
		t.Run(series, func(t *testing.T) {
			rec, err := readRecording(series)
			if err != nil {
				t.Fatal(err)
			}
			got := renderViews(t, replay(t, rec))
			again := renderViews(t, replay(t, rec))
			for _, v := range goldenViews {
				if !bytes.Equal(got[v.name], again[v.name]) {
					t.Errorf("view %s: two reads of the same transcripts gave different output:\n%s", v.name, testkit.LineDiff(string(got[v.name]), string(again[v.name])))
				}
				testkit.CompareGolden(t, goldenFile(series, v.name), got[v.name], *update)
			}
		})
	}
}

// goldenFile returns the golden file of one view of one series.
func goldenFile(series, view string) string {
	return filepath.Join(goldenSet, series, view+".txt")
}

// TestGoldenOrphans fails on every file or folder under testdata/golden that no series and view
// produce (left behind by a removed view or series, or put there by hand), naming each; under
// -update it removes them instead, so that regenerating leaves exactly the set the views produce.
func TestGoldenOrphans(t *testing.T) {
	want := map[string]bool{}
	for _, series := range seriesList(t) {
		want[filepath.Join(goldenSet, series)] = true
		for _, v := range goldenViews {
			want[goldenFile(series, v.name)] = true
		}
	}
	var orphans []string
	err := filepath.WalkDir(goldenSet, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case path == goldenSet || want[path]:
			return nil
		}
		orphans = append(orphans, path)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	testkit.GoldenOrphans(t, orphans, "series of "+transcriptsDir+" nor view", *update)
}
