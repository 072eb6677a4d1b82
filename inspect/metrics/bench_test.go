package metrics_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/inspect/metrics"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

var benchRoutes = flag.Int("stats.routes", 10000, "Routes of the scrape benchmarks, each with two endpoints")

// benchServers is the number of endpoints of each Route of the benchmarks.
const benchServers = 2

// serveMetrics answers one GET /metrics through h, as the stats port does, and returns the body
// (gzipped when gz is set, as Prometheus asks for it).
func serveMetrics(tb testing.TB, h http.Handler, gz bool) *bytes.Buffer {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("/metrics: %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Body
}

// benchScrape measures GET /metrics with c registered (show stat through c's runner, parsing, the
// series, the text encoding, and gzip when gz is set) and reports the series and the bytes of one
// answer, uncompressed and gzipped.
func benchScrape(b *testing.B, c prometheus.Collector, gz bool) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		b.Fatal(err)
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	for b.Loop() {
		serveMetrics(b, h, gz)
	}
	b.StopTimer()
	body := serveMetrics(b, h, false)
	var series int
	for l := range strings.Lines(body.String()) {
		if !strings.HasPrefix(l, "#") {
			series++
		}
	}
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(float64(body.Len()), "bytes")
	b.ReportMetric(float64(serveMetrics(b, h, true).Len()), "gzip-bytes")
}

// syntheticReplies answers show stat with a reply generated from a recorded one: its frontends and
// internal backends, then n Routes' backends with benchServers servers each and 80 free spares, every
// row a copy of the recorded row of web/www (or of its pod www-0, or of a free spare) under another
// name, so that rows are as long as that version's.
type syntheticReplies struct {
	withServers, withoutServers string
}

func (r *syntheticReplies) Command(_ context.Context, cmd string) (string, error) {
	if strings.HasSuffix(cmd, " 3 -1") {
		return r.withoutServers, nil
	}
	return r.withServers, nil
}

func (r *syntheticReplies) Payload(context.Context, string, string) (string, error) {
	return "", fmt.Errorf("no payload")
}

var _ socket.Runner = (*syntheticReplies)(nil)

// synthetic returns the applied state of n Routes and the replies of an HAProxy serving it, made
// from rec.
func synthetic(tb testing.TB, rec recording, n int) (*model.Config, *syntheticReplies) {
	tb.Helper()
	var header, backendRow, serverRow, spareRow string
	var fixed []string
	for l := range strings.Lines(rec.reply) {
		l = strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(l, "# "):
			header = l
		case strings.HasPrefix(l, "be_http:web:www,BACKEND,"):
			backendRow = l
		case strings.HasPrefix(l, "be_http:web:www,pod:www-0:"):
			serverRow = l
		case strings.HasPrefix(l, "be_http:_spare:roundrobin-00,BACKEND,"):
			spareRow = l
		case strings.Contains(l, ",FRONTEND,") || strings.HasPrefix(l, "be_sni,") ||
			strings.HasPrefix(l, "be_no_sni,") || strings.HasPrefix(l, "openshift_default,"):
			fixed = append(fixed, l)
		}
	}
	if header == "" || backendRow == "" || serverRow == "" || spareRow == "" {
		tb.Fatalf("%s: the recording lacks the rows the benchmark copies", rec.dir)
	}
	rest := func(row string) string { // the row after pxname and svname
		_, r, _ := strings.Cut(row, ",")
		_, r, _ = strings.Cut(r, ",")
		return r
	}
	var with, without strings.Builder
	for _, w := range []*strings.Builder{&with, &without} {
		w.WriteString(header + "\n")
		for _, l := range fixed {
			w.WriteString(l + "\n")
		}
	}
	cfg := &model.Config{}
	for i := range n {
		name := fmt.Sprintf("r%05d", i)
		b := model.Backend{Name: model.BackendName(model.KindHTTP, "bench", name), Kind: model.KindHTTP, Mode: model.ModeHTTP, Route: "bench/" + name}
		for j := range benchServers {
			ip := netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), byte(j)})
			s := model.Server{
				Name: fmt.Sprintf("pod:%s-%d:%s:http:%s:8080", name, j, name, ip), Addr: ip.String(), Port: 8080,
				Service: "bench/" + name, Weight: 1, State: model.StateReady,
			}
			b.Servers = append(b.Servers, s)
			with.WriteString(b.Name + "," + s.Name + "," + rest(serverRow) + "\n")
		}
		for _, w := range []*strings.Builder{&with, &without} {
			w.WriteString(b.Name + ",BACKEND," + rest(backendRow) + "\n")
		}
		cfg.Backends = append(cfg.Backends, &b)
	}
	for _, k := range []model.BackendKind{model.KindHTTP, model.KindEdge, model.KindReencrypt, model.KindPassthrough} {
		for _, balance := range []string{"random", "roundrobin"} {
			for i := range 10 {
				name := model.SpareBackendName(k, balance, i)
				cfg.Backends = append(cfg.Backends, &model.Backend{Name: name, Kind: k, Spare: true})
				for _, w := range []*strings.Builder{&with, &without} {
					w.WriteString(name + ",BACKEND," + rest(spareRow) + "\n")
				}
			}
		}
	}
	return cfg, &syntheticReplies{withServers: with.String(), withoutServers: without.String()}
}

// BenchmarkScrapeSynthetic is the cost of one GET /metrics with -stats.routes Routes (default
// 10,000) of two endpoints each, from a `show stat` reply generated from each recorded version's
// rows (no socket): with OpenShift's default server threshold (500: backend series only, HAProxy
// asked for frontends and backends), the same with a new applied state at every scrape (the Routes'
// index rebuilt), with every server's series (threshold above the servers), and with every metric of
// every server (AllFields).
func BenchmarkScrapeSynthetic(b *testing.B) {
	for _, rec := range recordings(b) {
		cfg, run := synthetic(b, rec, *benchRoutes)
		applied := func() *model.Config { return cfg }
		// A new applied state at every scrape: the index of the Routes is rebuilt each time.
		changing := func() *model.Config {
			next := *cfg
			return &next
		}
		for _, c := range []struct {
			name    string
			applied func() *model.Config
			opts    metrics.Options
			reply   string
		}{
			{"threshold", applied, metrics.Options{}, run.withoutServers},
			{"threshold-new-state", changing, metrics.Options{}, run.withoutServers},
			{"servers", applied, metrics.Options{ServerThreshold: 1 << 30}, run.withServers},
			{"servers-all-fields", applied, metrics.Options{ServerThreshold: 1 << 30, Fields: metrics.AllFields()}, run.withServers},
		} {
			b.Run(filepath.Base(rec.dir)+"/"+c.name, func(b *testing.B) {
				benchScrape(b, newCollector(b, run, c.applied, c.opts), false)
				b.ReportMetric(float64(len(c.reply)), "reply-bytes")
			})
		}
	}
}

// BenchmarkScrapeHAProxy is the same against a real HAProxy (HAROUTE_HAPROXY) serving -stats.routes
// Routes with two endpoints each on 127.1.0.0/16, where nothing listens (health checks every hour):
// `show stat` over the admin socket included; threshold-gzip also compresses the answer, as
// promhttp does for Prometheus. ShowStat is the socket exchange alone.
//
// HAProxy reserves a descriptor per server on top of two per connection: 10,000 Routes of two
// endpoints need 24,043, over the hard limit of 20,000 of the containers this runs in (not raisable
// without CAP_SYS_RESOURCE), so the configuration gets "no strict-limits" (as OpenShift's template
// has): HAProxy starts with the descriptors it may have, far more than the benchmark uses.
func BenchmarkScrapeHAProxy(b *testing.B) {
	var m testbed.Manifests
	for i := range *benchRoutes {
		name := fmt.Sprintf("r%05d", i)
		var eps []netip.AddrPort
		for j := range benchServers {
			n := benchServers*i + j
			eps = append(eps, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 1, byte(n >> 8), byte(n)}), 8080))
		}
		m.ServiceAt("bench", name, eps...)
		m.Route("bench", name, name+".bench.example.com", "", name)
	}
	opts := testbed.RouterOptions(b)
	opts.CheckInterval = "1h"
	desired, problems := mapping.Translate(m.Objects(), opts)
	if len(problems) > 0 {
		b.Fatalf("translate: %d problems, the first %v", len(problems), problems[0])
	}
	ca := testkit.NewCA(b, "bench CA")
	dir := testkit.TempDir(b)
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: render.Options{DefaultCertificatePEM: ca.IssueBundle(b, "default.example.com")}})
	if err != nil {
		b.Fatal(err)
	}
	first, err := inst.InitialFiles(desired)
	if err != nil {
		b.Fatal(err)
	}
	for i, f := range first.Files {
		if f.Path == layout.Config {
			first.Files[i].Data = bytes.Replace(f.Data, []byte("\nglobal\n"), []byte("\nglobal\n  no strict-limits\n"), 1)
		}
	}
	h := testbed.StartHAProxy(b, dir, first.Files)
	applied := func() *model.Config { return first.State }
	admin := socket.NewAdmin(h.AdminSocket, socket.Options{})
	for _, c := range []struct {
		name string
		opts metrics.Options
		gzip bool
	}{
		{"threshold", metrics.Options{}, false},
		{"threshold-gzip", metrics.Options{}, true},
		{"servers", metrics.Options{ServerThreshold: 1 << 30}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchScrape(b, newCollector(b, admin, applied, c.opts), c.gzip)
		})
	}
	for _, cmd := range []string{"show stat -1 3 -1", "show stat -1 7 -1"} {
		b.Run("ShowStat "+strings.TrimPrefix(cmd, "show stat "), func(b *testing.B) {
			var n int
			for b.Loop() {
				reply, err := admin.Command(context.Background(), cmd)
				if err != nil {
					b.Fatal(err)
				}
				n = len(reply)
			}
			b.ReportMetric(float64(n), "reply-bytes")
		})
	}
}
