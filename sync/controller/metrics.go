package controller

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the controller's Prometheus metrics, on their own registry (haroute_* names, plus
// OpenShift's template_router_* histograms for existing dashboards).
type Metrics struct {
	Registry *prometheus.Registry

	// Reloads counts HAProxy reloads by their one typed reason (plan.ReasonKind: the plan's first
	// structural reason, or RuntimeFallback, Restart, Drift, ReloadMode, TemplateChanged).
	Reloads *prometheus.CounterVec
	// UpdateFailures counts the updates of HAProxy that failed, by the reason of the reload they made
	// (plan.ReasonKind), or "runtime" for runtime ops alone: a refused configuration, a failed
	// reload, an op HAProxy refused. HAProxy keeps serving the last good state; the controller retries.
	UpdateFailures *prometheus.CounterVec
	// RuntimeOps counts runtime operations by op (apply.OpName) and result (ok, deferred, error).
	RuntimeOps *prometheus.CounterVec
	// SyncDuration is the wall time of one sync (snapshot to status).
	SyncDuration prometheus.Histogram
	// DriftRepairs counts drift repairs (through runtime ops or a forced reload).
	DriftRepairs prometheus.Counter
	// Workers is the number of HAProxy worker processes `show proc` lists (current and old).
	Workers prometheus.Gauge
	// ReloadSeconds is the time of an Update that reloaded (render, write, check, reload, confirm).
	ReloadSeconds prometheus.Histogram
	// WriteConfigSeconds is the time of an Update without a reload, runtime ops excluded (plan,
	// render, write-through).
	WriteConfigSeconds prometheus.Histogram
}

// NewMetrics returns the metrics registered on a new registry.
func NewMetrics() *Metrics {
	buckets := []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haroute_reloads_total",
			Help: "HAProxy reloads by reason.",
		}, []string{"reason"}),
		UpdateFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haroute_update_failures_total",
			Help: "Failed updates of HAProxy by reload reason (runtime: runtime ops alone); the last good state keeps serving.",
		}, []string{"reason"}),
		RuntimeOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haroute_runtime_ops_total",
			Help: "Runtime API operations by operation and result (ok, deferred, error).",
		}, []string{"op", "result"}),
		SyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "haroute_sync_duration_seconds",
			Help:    "Time of one sync: snapshot, translate, update, status.",
			Buckets: buckets,
		}),
		DriftRepairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "haroute_drift_repairs_total",
			Help: "Drift between HAProxy and the applied state that was repaired.",
		}),
		Workers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "haroute_haproxy_workers",
			Help: "HAProxy worker processes listed by the master's show proc (current and old).",
		}),
		ReloadSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "template_router_reload_seconds",
			Help:    "Time of an update that reloaded HAProxy.",
			Buckets: buckets,
		}),
		WriteConfigSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "template_router_write_config_seconds",
			Help:    "Time to plan, render and write the configuration of an update without a reload.",
			Buckets: buckets,
		}),
	}
	m.Registry.MustRegister(m.Reloads, m.UpdateFailures, m.RuntimeOps, m.SyncDuration, m.DriftRepairs, m.Workers,
		m.ReloadSeconds, m.WriteConfigSeconds)
	return m
}

// Handler serves /healthz (liveness: the loop runs and HAProxy's admin socket answers), /healthz/ready
// (the first sync is applied and the controller is healthy; the body names failing syncs) and
// /metrics (c's registry).
func Handler(c *Controller) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := c.Healthy(r.Context()); err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/healthz/ready", func(w http.ResponseWriter, r *http.Request) {
		if !c.Ready() {
			msg := "not ready: no sync applied yet"
			if f := c.Failing(); f != nil {
				msg += fmt.Sprintf("; %d syncs failed in a row since %s: %s", f.Count, f.Since.UTC().Format(time.RFC3339), f.Err)
			}
			http.Error(w, msg, http.StatusServiceUnavailable)
			return
		}
		if err := c.Healthy(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		// Failing syncs leave the pod ready: HAProxy serves the last state it took, and taking every
		// replica out of the load balancer for one bad input would turn it into an outage. The body
		// says so, and haroute_update_failures_total counts them.
		if f := c.Failing(); f != nil {
			fmt.Fprintf(w, "ok, serving the last applied state; %d syncs failed in a row since %s: %s\n",
				f.Count, f.Since.UTC().Format(time.RFC3339), f.Err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/metrics", promhttp.HandlerFor(c.metrics().Registry, promhttp.HandlerOpts{
		Timeout: 10 * time.Second,
	}))
	return mux
}
