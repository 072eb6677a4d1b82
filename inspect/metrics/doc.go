// Package metrics exports HAProxy's traffic counters (`show stat`) as Prometheus series labelled like
// OpenShift's router exporter: haproxy_frontend_* by frontend, haproxy_backend_* by backend kind
// (http, https-edge, https, tcp), namespace and route, haproxy_server_* by server address,
// namespace, route, pod and service. docs/metrics.md lists every series.
//
// The Route of a backend is what the applied state says it serves (model.Backend.Route), never a
// parse of its name: a spare backend claimed at runtime is reported under its Route with the labels
// its own backend has after the next reload, so a series does not change at the rename. Free spares
// and retired backends serve no Route and are not exported. Backends that are not a Route's
// (openshift_default, be_sni, be_no_sni) are exported as OpenShift does, with backend
// "other/<name>" and empty namespace and route; their servers are not.
//
// A Collector reads HAProxy once per scrape, with one `show stat` on the admin socket bounded by a
// timeout, parses the CSV by column name (versions 2.6 to 3.4 differ in their columns) and sends
// series made for that scrape: nothing of a scrape outlives it, so the series of a deleted Route end
// with it, and an HAProxy that does not answer gives haproxy_up 0 and no other HAProxy series. Above
// a number of servers (OpenShift's ROUTER_METRICS_HAPROXY_SERVER_THRESHOLD, 500) server series are
// left out and HAProxy is asked for frontends and backends only.
//
// Cost is the point of its shape: at 10,000 Routes a scrape has 210,000 series. The series of one
// row share one set of label pairs, made once per applied state (not per series, as
// prometheus.NewConstMetric would), and each family's series are sent in the order the registry
// sorts them into; with these a scrape takes a fifth of the time (docs/metrics.md has the figures).
//
// It uses mapping/model and runtime/socket; it does not know Kubernetes, the controller or the
// Instance (the applied state comes through a function).
package metrics
