package main

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/haroute/haroute/sync/access"
)

// statsHosts returns the addresses the stats listener binds: the one ROUTER_LISTEN_ADDR or
// ROUTER_BIND_ADDRESS names; else, when the pod's own addresses are known (HAROUTE_POD_IPS), those
// and loopback — what the kubelet's probes, a scraper and `kubectl port-forward` reach, and not the
// other addresses of a node in the hostNetwork shape; else every address ("").
func statsHosts(rc runConfig) []string {
	if rc.statsAddress != "" || len(rc.podIPs) == 0 {
		return []string{rc.statsAddress}
	}
	seen := map[netip.Addr]bool{}
	var hosts []string
	add := func(a netip.Addr) {
		if !seen[a] {
			seen[a] = true
			hosts = append(hosts, a.String())
		}
	}
	v6 := false
	for _, a := range rc.podIPs {
		add(a)
		v6 = v6 || a.Is6()
	}
	add(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	if v6 {
		add(netip.IPv6Loopback())
	}
	return hosts
}

// listenStats takes the stats port of rc on every address of statsHosts (none when there is no
// port: port 0, or --once). It takes all or none.
func listenStats(rc runConfig) ([]net.Listener, error) {
	if rc.statsPort == 0 || rc.once {
		return nil, nil
	}
	var lns []net.Listener
	for _, h := range statsHosts(rc) {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(rc.statsPort)))
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("stats listener: %w", err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// closeAll closes listeners (the servers on them may have closed them already).
func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		_ = ln.Close()
	}
}

// podAddresses parses HAROUTE_POD_IPS (comma-separated; the translation options report a bad value).
func podAddresses(v string) []netip.Addr {
	var out []netip.Addr
	for _, f := range strings.Split(v, ",") {
		if a, err := netip.ParseAddr(strings.TrimSpace(f)); err == nil && a.Zone() == "" {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// Values of --metrics-auth.
const (
	metricsAuthKube = "kube"
	metricsAuthNone = "none"
)

// protectMetrics guards /metrics; the probes stay open (the kubelet sends no credentials). With
// STATS_USERNAME and STATS_PASSWORD, a request with basic credentials must carry those; with a
// reviewer (cluster mode, --metrics-auth=kube), a request without basic credentials must carry a
// bearer token the API server allows to get routers/metrics, as OpenShift's router has it. Without
// either, /metrics is open.
func protectMetrics(rc runConfig, rev *access.Reviewer, metrics http.Handler) http.Handler {
	switch {
	case rc.statsUser != "" && rev != nil:
		basic, token := basicAuth(rc.statsUser, rc.statsPassword, metrics), rev.Wrap(metrics)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, ok := r.BasicAuth(); ok {
				basic.ServeHTTP(w, r)
				return
			}
			token.ServeHTTP(w, r)
		})
	case rc.statsUser != "":
		return basicAuth(rc.statsUser, rc.statsPassword, metrics)
	case rev != nil:
		return rev.Wrap(metrics)
	}
	return metrics
}

// basicAuth serves next only to requests with these credentials (compared in constant time).
func basicAuth(user, password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="haroute"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metricsReviewer returns the reviewer of /metrics tokens: in cluster mode with --metrics-auth=kube,
// nil otherwise (a folder has no API server to ask).
func (a *app) metricsReviewer(rc runConfig, kube kubernetes.Interface) *access.Reviewer {
	if kube == nil || rc.metricsAuth != metricsAuthKube || rc.statsPort == 0 || rc.once {
		return nil
	}
	a.log.Info("/metrics needs a bearer token allowed to get routers/metrics in route.openshift.io, or the stats credentials", "router", rc.settings.opts.RouterName)
	return access.New(kube, rc.settings.opts.RouterName, a.log)
}
