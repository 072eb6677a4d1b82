package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// Defaults of Options, OpenShift's.
const (
	// DefaultTimeout bounds one scrape (ROUTER_METRICS_HAPROXY_TIMEOUT).
	DefaultTimeout = 5 * time.Second
	// DefaultServerThreshold is the number of servers above which no server series are exported
	// (ROUTER_METRICS_HAPROXY_SERVER_THRESHOLD).
	DefaultServerThreshold = 500
)

// The `show stat` commands: every proxy (-1), the objects of the types frontend (1) + backend (2) +
// server (4) = 7, or frontend + backend = 3, every server (-1). CSV is HAProxy's most compact
// output: on 2.6, one frontend, backend and server take 2.1 kB in CSV, 7.2 kB `typed` (a line per
// value) and 43 kB in `json`.
const (
	cmdWithServers    = "show stat -1 7 -1"
	cmdWithoutServers = "show stat -1 3 -1"
)

// Reasons of haproxy_exporter_scrape_errors_total.
const (
	reasonHAProxy = "haproxy" // HAProxy did not answer show stat in time, or not with its CSV
	reasonState   = "state"   // the applied state is unknown: no Route's series
)

// Options tune a Collector; zero values take the defaults.
type Options struct {
	// Timeout bounds one scrape (the `show stat` exchange); default DefaultTimeout.
	Timeout time.Duration
	// ServerThreshold: when the Routes' backends of the applied state hold more servers than this,
	// no server series are exported and HAProxy is asked for frontends and backends only; default
	// DefaultServerThreshold.
	ServerThreshold int
	// Fields are the `show stat` column numbers whose metrics are exported; empty: DefaultFields.
	Fields []int
	// Log receives a line when HAProxy stops answering and when it answers again; nil discards.
	Log *slog.Logger
}

// Collector is a prometheus.Collector of HAProxy's `show stat` counters, labelled with the Routes
// the applied state says each backend and server serves. Every Collect reads HAProxy once; nothing
// of a scrape outlives it, so the series of a deleted Route end with its backend.
type Collector struct {
	runner  socket.Runner
	applied func() *model.Config
	opts    Options
	fields  [numFamilies][]field
	descs   [numFamilies][]*prometheus.Desc
	// codePairs are the label pairs of the code label, shared by every series that has one.
	codePairs *[len(codes)]*dto.LabelPair

	up, duration, threshold *prometheus.Desc
	scrapes, parseFailures  prometheus.Counter
	scrapeErrors            *prometheus.CounterVec

	// mu makes scrapes one at a time and guards what follows.
	mu sync.Mutex
	// cfg and idx are the last applied state seen and its index (Applied returns the same pointer
	// until the state changes).
	cfg *model.Config
	idx *index
	// down is set while HAProxy does not answer, to log transitions only.
	down bool
}

// New returns a Collector that reads `show stat` through runner (the admin socket) and labels it
// with applied() (the state HAProxy runs, nil while unknown; the Instance's Applied).
func New(runner socket.Runner, applied func() *model.Config, opts Options) (*Collector, error) {
	if runner == nil || applied == nil {
		return nil, errors.New("stats collector: a runner and an applied-state function are required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ServerThreshold <= 0 {
		opts.ServerThreshold = DefaultServerThreshold
	}
	if len(opts.Fields) == 0 {
		opts.Fields = DefaultFields
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	fields, err := selectFields(opts.Fields)
	if err != nil {
		return nil, fmt.Errorf("stats collector: %w", err)
	}
	c := &Collector{
		runner:    runner,
		applied:   applied,
		opts:      opts,
		fields:    fields,
		codePairs: newCodePairs(),
		up:        prometheus.NewDesc("haproxy_up", "Was the last scrape of HAProxy successful.", nil, nil),
		duration: prometheus.NewDesc("haproxy_exporter_scrape_duration_seconds",
			"Time of the last scrape of HAProxy: show stat, parsing and the series of every Route.", nil, nil),
		threshold: prometheus.NewDesc("haproxy_exporter_server_threshold",
			"Number of servers tracked (type=current) and the threshold above which server series are not exported (type=limit).",
			[]string{"type"}, nil),
		scrapes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "haproxy_exporter_total_scrapes", Help: "Current total HAProxy scrapes.",
		}),
		parseFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "haproxy_exporter_csv_parse_failures", Help: "Number of errors while parsing CSV.",
		}),
		scrapeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haproxy_exporter_scrape_errors_total",
			Help: "Scrapes without per-Route series, by reason: haproxy (show stat not answered in time, or not readable), state (the applied state is unknown).",
		}, []string{"reason"}),
	}
	c.scrapeErrors.WithLabelValues(reasonHAProxy)
	c.scrapeErrors.WithLabelValues(reasonState)
	for fam, fs := range fields {
		byName := map[string]*prometheus.Desc{}
		for _, f := range fs {
			d, ok := byName[f.name]
			if !ok {
				ls := familyLabels[fam]
				if f.code != "" {
					ls = append(slices.Clone(ls), labelCode)
				}
				d = prometheus.NewDesc(family(fam).prefix()+f.name, f.help, ls, nil)
				byName[f.name] = d
			}
			c.descs[fam] = append(c.descs[fam], d)
		}
	}
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	seen := map[*prometheus.Desc]bool{}
	for _, ds := range c.descs {
		for _, d := range ds {
			if !seen[d] {
				seen[d] = true
				ch <- d
			}
		}
	}
	ch <- c.up
	ch <- c.duration
	ch <- c.threshold
	c.scrapes.Describe(ch)
	c.parseFailures.Describe(ch)
	c.scrapeErrors.Describe(ch)
}

// Collect implements prometheus.Collector: one `show stat` (bounded by Options.Timeout), and the
// series of every row the applied state labels.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	c.scrapes.Inc()
	idx := c.index()
	limited := idx.nservers > c.opts.ServerThreshold
	cmd := cmdWithServers
	if limited || idx.nservers == 0 {
		cmd = cmdWithoutServers
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	reply, err := c.runner.Command(ctx, cmd)
	cancel()
	up := 0.0
	if err == nil {
		s := scrape{c: c, idx: idx, servers: !limited, ch: ch}
		err = s.run(reply)
		if s.failures > 0 {
			c.parseFailures.Add(float64(s.failures))
		}
	}
	switch {
	case err != nil:
		c.scrapeErrors.WithLabelValues(reasonHAProxy).Inc()
		if !c.down {
			c.opts.Log.Warn("HAProxy metrics: show stat failed; haproxy_up is 0 until it answers", "err", err)
		}
		c.down = true
	default:
		up = 1
		if c.down {
			c.opts.Log.Info("HAProxy metrics: show stat answers again")
		}
		c.down = false
		if c.cfg == nil {
			c.scrapeErrors.WithLabelValues(reasonState).Inc()
		}
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(c.threshold, prometheus.GaugeValue, float64(idx.nservers), "current")
	ch <- prometheus.MustNewConstMetric(c.threshold, prometheus.GaugeValue, float64(c.opts.ServerThreshold), "limit")
	c.scrapes.Collect(ch)
	c.parseFailures.Collect(ch)
	c.scrapeErrors.Collect(ch)
	ch <- prometheus.MustNewConstMetric(c.duration, prometheus.GaugeValue, time.Since(start).Seconds())
}

// index returns the index of the applied state, rebuilt only when the state changed.
func (c *Collector) index() *index {
	cfg := c.applied()
	if c.idx == nil || cfg != c.cfg {
		c.cfg, c.idx = cfg, newIndex(cfg)
	}
	return c.idx
}
