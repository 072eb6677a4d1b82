package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"
)

// statsPageTimeout bounds HAProxy's answer for the stats page.
const statsPageTimeout = 10 * time.Second

// isStatsPage reports whether a request on the stats port is for HAProxy's stats page: "/" and its
// ";csv", ";norefresh", ... variants, as OpenShift serves it on the stats port.
func isStatsPage(r *http.Request) bool {
	return r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/;")
}

// statsPage serves HAProxy's stats page from the stats frontend's Unix socket (read-only: the
// template enables no admin actions, and only GET and HEAD are passed on).
func statsPage(sock string) http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "haproxy-stats"
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del("Authorization")
		},
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", sock)
			},
			ResponseHeaderTimeout: statsPageTimeout,
			MaxIdleConns:          2,
			IdleConnTimeout:       time.Minute,
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "HAProxy's stats page does not answer: "+err.Error(), http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the stats page is read-only", http.StatusMethodNotAllowed)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}
