package views

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// Finding levels, most serious first.
const (
	LevelError = "ERROR"
	LevelWarn  = "WARN"
	LevelInfo  = "INFO"
)

// maxOldWorkers is the number of old workers (still serving long connections) above which doctor
// warns that they pile up.
const maxOldWorkers = 2

// Finding is one coded result of Doctor.
type Finding struct {
	Level string `json:"level"`
	// Code is stable, for scripts: HAPROXY_UNREACHABLE, STATE_UNAVAILABLE, RELOAD_FAILED,
	// OLD_WORKERS, WORKER_RELOAD_LIMIT, DRIFT, OPERATOR_HOLD, ROUTE_REJECTED, ROUTE_WARNING, NO_SERVER, NO_USABLE_SERVER,
	// ROUTE_NOT_REACHED, MODEL_HAPROXY_DISAGREE, NO_SPARE, CERT_EXPIRED, CERT_EXPIRING,
	// CERT_NOT_YET_VALID, CERT_UNREADABLE, CERT_NOT_LOADED, CERT_NOT_COVERING, CERT_UNUSED, FILES_STALE, FILES_UNREADABLE.
	Code string `json:"code"`
	// Object names what the finding is about ("route ns/name", "haproxy", ...).
	Object  string `json:"object"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s [%s] (%s) %s", f.Level, f.Code, f.Object, f.Message)
	if f.Hint != "" {
		s += "\n    hint: " + f.Hint
	}
	return s
}

// Doctor checks the snapshot and returns its findings, the most serious first. With admin (a live
// HAProxy) every admitted Route is also walked through HAProxy's own matcher (`get map` on the keys
// a request for its host and path produces), so that a Route another one shadows, or a map entry
// HAProxy lost, shows; dir is the HAProxy directory (the maps' paths). Without admin (offline,
// --manifests) the walk uses the model alone: a lint of the manifests.
func (s *Snapshot) Doctor(ctx context.Context, admin socket.Runner, dir string) []Finding {
	var out []Finding
	add := func(level, code, object, message, hint string) {
		out = append(out, Finding{Level: level, Code: code, Object: object, Message: message, Hint: hint})
	}
	offline := admin == nil
	if !offline {
		s.haproxyFindings(add)
	}
	if s.State == nil {
		add(LevelError, "STATE_UNAVAILABLE", "haroute", "haroute's state socket cannot be read: no Route can be checked",
			"is haroute run serving on this HAProxy directory? "+strings.Join(s.Notes, "; "))
		return sortFindings(out)
	}
	st := s.State
	for _, d := range st.Drift {
		add(LevelWarn, "DRIFT", "haproxy", "the last drift check found: "+d, "haroute repairs it through runtime ops or a reload; a repeat means someone changes HAProxy by hand")
	}
	for _, h := range st.Held {
		add(LevelInfo, "OPERATOR_HOLD", "server "+h, "an operator keeps this server out of traffic", "it stays until the server goes or the next reload")
	}
	for _, p := range st.Problems {
		obj := "route " + p.Namespace + "/" + p.Name
		if p.Warning {
			add(LevelInfo, "ROUTE_WARNING", obj, p.Reason+": "+p.Message, "")
			continue
		}
		add(LevelWarn, "ROUTE_REJECTED", obj, p.Reason+": "+p.Message, "the Route is not served; its status.ingress says the same")
	}
	if !offline {
		for _, r := range s.Routes("") {
			obj := "route " + r.Namespace + "/" + r.Name
			switch {
			case r.Status == StatusRejected || r.Servers < 0:
			case r.Servers == 0:
				add(LevelError, "NO_SERVER", obj, "the backend has no server: requests get 503",
					"the Service has no ready endpoint whose port matches the Route's targetPort (check its EndpointSlices and spec.port)")
			case r.Usable == 0:
				add(LevelError, "NO_USABLE_SERVER", obj, fmt.Sprintf("none of the backend's %d servers takes traffic (down, in maintenance or drain): requests get 503", r.Servers),
					"haroute state routes -o wide and the servers' health checks tell which")
			}
		}
	}
	certDir := ""
	if st.Applied != nil {
		if paths, err := render.PathsFor(st.Applied, dir); err == nil {
			certDir = paths.CertDir
		}
	}
	s.certFindings(time.Now(), certDir, add)
	if st.Applied != nil {
		s.reachFindings(ctx, admin, dir, add)
		free := 0
		for _, b := range st.Applied.Backends {
			if b.Spare && b.Route == "" && !b.Retired {
				free++
			}
		}
		if free == 0 && !offline {
			add(LevelInfo, "NO_SPARE", "haroute", "no free spare backend: the next new Route is served after a reload", "the pool refills at the next reload")
		}
	}
	return sortFindings(out)
}

// haproxyFindings checks what HAProxy's own sockets tell.
func (s *Snapshot) haproxyFindings(add func(level, code, object, message, hint string)) {
	if s.Servers == nil || s.Procs == nil {
		add(LevelError, "HAPROXY_UNREACHABLE", "haproxy", "HAProxy's admin or master socket does not answer", strings.Join(s.Notes, "; "))
	}
	sum := s.Summary()
	if sum.FailedReloads > 0 {
		add(LevelError, "RELOAD_FAILED", "haproxy", fmt.Sprintf("the master counts %d failed reloads since the last good one: the old configuration still serves", sum.FailedReloads),
			"haroute's log has HAProxy's reason (reload failed ...); the files on disk are the last good ones")
	}
	limit := ""
	if sum.MaxWorkerReloads > 0 {
		limit = fmt.Sprintf(" (the master stops a worker after %d reloads: mworker-max-reloads)", sum.MaxWorkerReloads)
	}
	if sum.OldWorkers > maxOldWorkers {
		add(LevelWarn, "OLD_WORKERS", "haproxy", fmt.Sprintf("%d old workers still serve connections of earlier configurations%s", sum.OldWorkers, limit),
			"long-lived connections keep them; hard-stop-after bounds how long, and fewer reloads make fewer of them")
	}
	if m := sum.MaxWorkerReloads; m > 0 && sum.OldestWorkerReloads >= 0 && sum.OldestWorkerReloads*10 >= m*8 {
		add(LevelWarn, "WORKER_RELOAD_LIMIT", "haproxy", fmt.Sprintf("an old worker has seen %d reloads; at %d the master stops it and cuts its connections", sum.OldestWorkerReloads, m+1),
			"HAROUTE_MAX_WORKER_RELOADS sets the limit; fewer reloads, or hard-stop-after, end old workers in an orderly way")
	}
}

// reachFindings walks every admitted Route through the matcher: a request for its host and path must
// reach its own backend.
func (s *Snapshot) reachFindings(ctx context.Context, admin socket.Runner, dir string, add func(level, code, object, message, hint string)) {
	for _, r := range s.State.Applied.Routes {
		obj := "route " + r.Namespace + "/" + r.Name
		req := Request{URL: routeURL(r)}
		ex := s.Explain(ctx, admin, dir, req)
		if ex.Disagreements > 0 {
			add(LevelError, "MODEL_HAPROXY_DISAGREE", obj, fmt.Sprintf("HAProxy's maps answer %s differently from the applied state on %d steps", req.URL, ex.Disagreements),
				"haroute explain "+req.URL+" shows the steps; the next drift check repairs the maps")
		}
		if ex.Backend != r.Backend {
			add(LevelError, "ROUTE_NOT_REACHED", obj, fmt.Sprintf("a request for %s reaches %s, not the Route's backend %s", req.URL, orNone(ex.Backend), r.Backend),
				"haroute explain "+req.URL+" shows which entry wins")
		}
	}
}

// routeURL is a request the Route must serve: its host (a wildcard's first label made concrete) and
// path, over https when it terminates or passes TLS through.
func routeURL(r model.RouteInfo) string {
	scheme := "http"
	if r.Termination != "" {
		scheme = "https"
	}
	host := r.Host
	if strings.HasPrefix(host, "*.") {
		host = "doctor-check" + host[1:]
	}
	path := r.Path
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path
}

// SortFindings sorts findings, the most serious first (stable within a level).
func SortFindings(fs []Finding) []Finding { return sortFindings(fs) }

func sortFindings(fs []Finding) []Finding {
	rank := map[string]int{LevelError: 0, LevelWarn: 1, LevelInfo: 2}
	slices.SortStableFunc(fs, func(a, b Finding) int { return rank[a.Level] - rank[b.Level] })
	return fs
}

// certFindings checks the applied certificates: validity, the hosts they are served for, whether
// HAProxy holds them (with ReadCerts), and the files of certDir (where Routes' certificates go; the
// default certificate lives elsewhere) that HAProxy holds and nothing uses.
func (s *Snapshot) certFindings(now time.Time, certDir string, add func(level, code, object, message, hint string)) {
	used := map[string]bool{}
	for _, l := range s.CertsWhere(Filter{}, now) {
		used[l.File] = true
		obj := "certificate " + l.File
		if l.Route != "" {
			obj = "route " + l.Namespace + "/" + l.Route
		}
		switch l.Status {
		case CertExpired:
			add(LevelError, "CERT_EXPIRED", obj, fmt.Sprintf("the certificate for %s expired at %s: clients refuse it", strings.Join(l.Hosts, ", "), l.NotAfter.Format(time.RFC3339)),
				"renew it (the Route's spec.tls, or the default certificate's secret)")
		case CertExpiring:
			add(LevelWarn, "CERT_EXPIRING", obj, fmt.Sprintf("the certificate for %s expires at %s", strings.Join(l.Hosts, ", "), l.NotAfter.Format(time.RFC3339)),
				"renew it before then")
		case CertNotYet:
			add(LevelWarn, "CERT_NOT_YET_VALID", obj, "the certificate is not valid yet: clients refuse it", "check its notBefore and the clocks")
		case CertUnreadable:
			add(LevelError, "CERT_UNREADABLE", obj, "the certificate cannot be read: "+l.Error, "")
		case CertNotLoaded:
			add(LevelError, "CERT_NOT_LOADED", obj, "HAProxy does not hold the certificate file "+l.File+": its hosts get the default certificate",
				"the next drift check or reload loads it; a repeat is a bug worth reporting")
		}
		if len(l.Uncovered) > 0 {
			add(LevelWarn, "CERT_NOT_COVERING", obj, "the certificate does not cover "+strings.Join(l.Uncovered, ", ")+": clients refuse it for those hosts",
				"issue it for the Route's host (subjectAltName), or use a wildcard certificate")
		}
	}
	for _, p := range s.LoadedCerts {
		if base := filepath.Base(p); certDir != "" && filepath.Dir(p) == certDir && !used[base] {
			add(LevelInfo, "CERT_UNUSED", "certificate "+base, "HAProxy holds a certificate file no Route uses", "it goes at the next reload")
		}
	}
}

// Filtered returns the findings about Routes that pass f, and, with an empty filter, all.
func (s *Snapshot) Filtered(fs []Finding, f Filter) []Finding {
	if f.Namespace == "" && (f.Selector == nil || f.Selector.Empty()) {
		return fs
	}
	return slices.DeleteFunc(slices.Clone(fs), func(fd Finding) bool {
		id, ok := strings.CutPrefix(fd.Object, "route ")
		if !ok {
			return true
		}
		ns, name, _ := strings.Cut(id, "/")
		return !s.Matches(f, ns, name)
	})
}
