package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haroute/haroute/inspect/metrics"
	"github.com/haroute/haroute/mapping/model"
)

// collectTimeout bounds one scrape of a fuzzed reply: parsing is linear, and a reply of the fuzzer's
// size takes microseconds.
const collectTimeout = 5 * time.Second

// FuzzShowStat scrapes a fuzzed `show stat` reply with the applied state of one recording (rec
// picks it) and gathers the series on a pedantic registry. Whatever HAProxy answers, the gather
// succeeds (no series twice, every label set as described), ends within collectTimeout, and gives at
// most one series per selected field, row and family, beside the exporter's own. The seeds are the
// recorded replies of every HAProxy series, which must scrape without a parse failure.
func FuzzShowStat(f *testing.F) {
	recs := recordings(f)
	for i, r := range recs {
		g := gather(f, fuzzCollector(f, r.reply, r.applied))
		if failures := g.value(f, "haproxy_exporter_csv_parse_failures", map[string]string{}); failures != 0 {
			f.Fatalf("%s: %v parse failures in the recorded reply", r.dir, failures)
		}
		if up := g.value(f, "haproxy_up", map[string]string{}); up != 1 {
			f.Fatalf("%s: haproxy_up %v for the recorded reply", r.dir, up)
		}
		f.Add(uint8(i), r.reply)
	}
	fields := len(metrics.AllFields())
	f.Fuzz(func(t *testing.T, rec uint8, reply string) {
		c := fuzzCollector(t, reply, recs[int(rec)%len(recs)].applied)
		type result struct {
			series int
			err    error
		}
		done := make(chan result, 1)
		go func() {
			n, err := gatherCount(c)
			done <- result{n, err}
		}()
		timer := time.NewTimer(collectTimeout)
		defer timer.Stop()
		var r result
		select {
		case r = <-done:
		case <-timer.C:
			t.Fatalf("scraping a reply of %d bytes did not end within %v", len(reply), collectTimeout)
		}
		if r.err != nil {
			t.Fatalf("gather: %v", r.err)
		}
		const own = 16 // the exporter's series: up, duration, threshold, scrapes, failures, errors
		rows := strings.Count(reply, "\n") + 1
		if r.series > own+3*rows*fields {
			t.Fatalf("%d series from a reply of %d lines and %d fields", r.series, rows, fields)
		}
	})
}

// fuzzCollector returns a collector of every field that is answered reply and labels with applied.
func fuzzCollector(t testing.TB, reply string, applied *model.Config) *metrics.Collector {
	t.Helper()
	return newCollector(t, &replies{reply: reply}, func() *model.Config { return applied }, metrics.Options{Fields: metrics.AllFields()})
}

// gatherCount gathers c once on a pedantic registry (which checks every series against Describe, and
// refuses a series sent twice) and returns the number of series.
func gatherCount(c prometheus.Collector) (int, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return 0, err
	}
	fams, err := reg.Gather()
	n := 0
	for _, f := range fams {
		n += len(f.GetMetric())
	}
	return n, err
}
