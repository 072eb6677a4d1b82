package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/haroute/haroute/inspect/metrics"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
	"github.com/haroute/haroute/sync/controller"
)

// OpenShift's variables of the HAProxy metrics, read by routeMetricsOptions.
const (
	envMetricsTimeout   = "ROUTER_METRICS_HAPROXY_TIMEOUT"
	envMetricsThreshold = "ROUTER_METRICS_HAPROXY_SERVER_THRESHOLD"
	envMetricsExported  = "ROUTER_METRICS_HAPROXY_EXPORTED"
)

// routerMetrics returns the controller's metrics with HAProxy's per-Route traffic metrics
// (inspect/metrics: haproxy_frontend_*, haproxy_backend_*, haproxy_server_*, labelled with the Routes
// of the state inst applied) registered beside them, so that /metrics on the stats port serves
// both. The collector reads `show stat` on the admin socket at each scrape.
func (a *app) routerMetrics(inst *haproxy.Instance, rc runConfig) (*controller.Metrics, error) {
	opts, err := routeMetricsOptions(a.getenv)
	if err != nil {
		return nil, err
	}
	opts.Log = a.log
	// One attempt per scrape: an HAProxy that does not answer is reported (haproxy_up 0), not waited for.
	admin := socket.NewAdmin(rc.adminSocket, socket.Options{Timeout: opts.Timeout, RetryFor: -1})
	c, err := metrics.New(admin, inst.Applied, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envMetricsExported, err)
	}
	m := controller.NewMetrics()
	if err := m.Registry.Register(c); err != nil {
		return nil, fmt.Errorf("registering the HAProxy metrics: %w", err)
	}
	return m, nil
}

// routeMetricsOptions reads OpenShift's ROUTER_METRICS_HAPROXY_TIMEOUT (a duration, default 5s),
// ROUTER_METRICS_HAPROXY_SERVER_THRESHOLD (a number of servers, default 500) and
// ROUTER_METRICS_HAPROXY_EXPORTED (comma-separated `show stat` column numbers, default OpenShift's
// selection). Every malformed value is reported.
func routeMetricsOptions(getenv func(string) string) (metrics.Options, error) {
	var (
		o    metrics.Options
		errs []error
	)
	if v := strings.TrimSpace(getenv(envMetricsTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive duration such as 5s", envMetricsTimeout, v))
		}
		o.Timeout = d
	}
	if v := strings.TrimSpace(getenv(envMetricsThreshold)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive number of servers", envMetricsThreshold, v))
		}
		o.ServerThreshold = n
	}
	if v := strings.TrimSpace(getenv(envMetricsExported)); v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %q is not a column number of show stat", envMetricsExported, v, f))
				continue
			}
			o.Fields = append(o.Fields, n)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return metrics.Options{}, err
	}
	return o, nil
}
