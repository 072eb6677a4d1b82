package views

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// Filter selects Routes: by namespace (empty: all) and by label selector (nil: all).
type Filter struct {
	Namespace string
	Selector  labels.Selector
}

// Matches reports whether the Route ns/name passes the filter.
func (s *Snapshot) Matches(f Filter, ns, name string) bool {
	if f.Namespace != "" && ns != f.Namespace {
		return false
	}
	if f.Selector == nil || f.Selector.Empty() {
		return true
	}
	var set labels.Set
	if s.State != nil {
		set = s.State.Labels[ns+"/"+name]
	}
	return f.Selector.Matches(set)
}

// RoutesWhere returns the rows of Routes that pass f.
func (s *Snapshot) RoutesWhere(f Filter) []RouteRow {
	return slices.DeleteFunc(s.Routes(f.Namespace), func(r RouteRow) bool { return !s.Matches(f, r.Namespace, r.Name) })
}

// ServerLine is one server of a Route's backend, as `haroute state servers` shows it.
type ServerLine struct {
	Namespace string `json:"namespace"`
	Route     string `json:"route"`
	Service   string `json:"service,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Address   string `json:"address"`
	// Weight is the applied weight; State what HAProxy reports (up, down, maint, drain, ...), or
	// "missing" for a server of the applied state HAProxy does not have.
	Weight int32  `json:"weight"`
	State  string `json:"state"`
	Usable bool   `json:"usable"`
	// Held is true for a server an operator keeps out of traffic.
	Held bool `json:"held,omitempty"`
	// Backend and Server are HAProxy's names.
	Backend string `json:"backend"`
	Server  string `json:"server"`
}

// ServersWhere returns one line per server of every admitted Route that passes f: the applied servers
// joined with what HAProxy reports.
func (s *Snapshot) ServersWhere(f Filter) []ServerLine {
	if s.State == nil || s.State.Applied == nil {
		return nil
	}
	cfg := s.State.Applied
	held := map[string]bool{}
	for _, h := range s.State.Held { // "<backend>/<server>: <state>"
		if i := strings.LastIndex(h, ": "); i > 0 {
			held[h[:i]] = true
		}
	}
	var out []ServerLine
	for _, r := range cfg.Routes {
		if !s.Matches(f, r.Namespace, r.Name) {
			continue
		}
		b := cfg.Backend(r.Backend)
		if b == nil {
			continue
		}
		live := map[string]socket.ServerState{}
		for _, sv := range s.Servers[b.Name] {
			live[sv.Server] = sv
		}
		for _, sv := range b.Servers {
			line := ServerLine{Namespace: r.Namespace, Route: r.Name, Service: serviceName(sv.Service), Pod: podOf(sv.Name),
				Address: net.JoinHostPort(sv.Addr, strconv.Itoa(int(sv.Port))), Weight: sv.Weight, State: "unknown",
				Backend: b.Name, Server: sv.Name, Held: held[b.Name+"/"+sv.Name]}
			if s.Servers != nil {
				if l, ok := live[sv.Name]; ok {
					line.State, line.Usable = serverState(l), usableServer(l)
				} else {
					line.State = "missing"
				}
			}
			out = append(out, line)
		}
	}
	return out
}

// serviceName returns the name of a "<ns>/<svc>" Service.
func serviceName(s string) string {
	_, name, ok := strings.Cut(s, "/")
	if !ok {
		return s
	}
	return name
}

// podOf returns the pod of a server name "pod:<pod>:<service>:<port>:<ip>:<port>" ("" otherwise).
func podOf(server string) string {
	rest, ok := strings.CutPrefix(server, "pod:")
	if !ok {
		return ""
	}
	pod, _, _ := strings.Cut(rest, ":")
	return pod
}

// certExpiringWithin is how close to its end a certificate is reported as expiring.
const certExpiringWithin = 30 * 24 * time.Hour

// Certificate statuses of a CertLine.
const (
	CertValid      = "Valid"
	CertExpiring   = "Expiring"
	CertExpired    = "Expired"
	CertNotYet     = "NotYetValid"
	CertUnreadable = "Unreadable"
	CertNotLoaded  = "NotLoaded"
)

// CertLine is one certificate, as `haroute state certs` shows it.
type CertLine struct {
	Namespace string    `json:"namespace,omitempty"`
	Route     string    `json:"route,omitempty"`
	Hosts     []string  `json:"hosts"`
	NotAfter  time.Time `json:"notAfter"`
	// Status is one of the Cert constants (NotLoaded: HAProxy does not list the file).
	Status string `json:"status"`
	// Uncovered are the hosts the certificate is served for but does not cover.
	Uncovered []string `json:"uncovered,omitempty"`
	File      string   `json:"file"`
	Digest    string   `json:"digest"`
	Error     string   `json:"error,omitempty"`
}

// CertsWhere returns one line per certificate and Route that passes f (the default certificate,
// which no Route owns, passes only an empty filter), judged at now.
func (s *Snapshot) CertsWhere(f Filter, now time.Time) []CertLine {
	if s.State == nil {
		return nil
	}
	loaded := map[string]bool{}
	for _, p := range s.LoadedCerts {
		loaded[filepath.Base(p)] = true
	}
	var out []CertLine
	for _, c := range s.State.Certificates {
		line := CertLine{Hosts: c.SNI, NotAfter: c.NotAfter, File: c.Name, Digest: c.Digest, Error: c.Error, Status: certStatus(c, now)}
		for _, h := range c.SNI {
			if !covers(c.DNSNames, h) && c.Error == "" {
				line.Uncovered = append(line.Uncovered, h)
			}
		}
		if s.LoadedCerts != nil && !loaded[c.Name] {
			line.Status = CertNotLoaded
		}
		if len(c.Routes) == 0 {
			if f.Namespace == "" && (f.Selector == nil || f.Selector.Empty()) {
				out = append(out, line)
			}
			continue
		}
		for _, id := range c.Routes {
			ns, name, _ := strings.Cut(id, "/")
			if s.Matches(f, ns, name) {
				l := line
				l.Namespace, l.Route = ns, name
				out = append(out, l)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b CertLine) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Route, b.Route), cmp.Compare(a.File, b.File))
	})
	return out
}

func certStatus(c stateapi.CertInfo, now time.Time) string {
	switch {
	case c.Error != "":
		return CertUnreadable
	case now.After(c.NotAfter):
		return CertExpired
	case now.Before(c.NotBefore):
		return CertNotYet
	case c.NotAfter.Sub(now) < certExpiringWithin:
		return CertExpiring
	}
	return CertValid
}

// covers reports whether a certificate for names serves host (a "*.domain" name covers one label).
func covers(names []string, host string) bool {
	host = strings.ToLower(host)
	for _, n := range names {
		n = strings.ToLower(n)
		if n == host {
			return true
		}
		if d, ok := strings.CutPrefix(n, "*."); ok {
			if _, rest, ok := strings.Cut(host, "."); ok && rest == d {
				return true
			}
		}
	}
	return false
}

// MapLine is one entry of a map, as `haroute state maps` shows it.
type MapLine struct {
	Map       string `json:"map"`
	Key       string `json:"key"`
	Namespace string `json:"namespace,omitempty"`
	Route     string `json:"route,omitempty"`
	// Value is the applied value (a backend, or a map's own value), Live HAProxy's ("" when it lacks
	// the key); Status is "ok", "missing" (HAProxy lacks it), "differs" or "extra" (only HAProxy has it).
	Value  string `json:"value"`
	Live   string `json:"live,omitempty"`
	Status string `json:"status"`
}

// MapsWhere joins the applied map entries with HAProxy's (ReadMaps), keyed by the Route whose backend
// an entry names; entries naming no Route pass only an empty filter.
func (s *Snapshot) MapsWhere(f Filter) []MapLine {
	if s.State == nil || s.State.Applied == nil {
		return nil
	}
	cfg := s.State.Applied
	routeOf := map[string]model.RouteInfo{}
	for _, r := range cfg.Routes {
		routeOf[r.Backend] = r
	}
	all := f.Namespace == "" && (f.Selector == nil || f.Selector.Empty())
	var out []MapLine
	add := func(l MapLine) {
		// The entry leads to a backend (its value), or is about one (its key: haroute_forwarded.map).
		for _, be := range []string{l.Value, l.Live, l.Key} {
			if r, ok := routeOf[be]; ok {
				l.Namespace, l.Route = r.Namespace, r.Name
				break
			}
		}
		if (l.Route == "" && all) || (l.Route != "" && s.Matches(f, l.Namespace, l.Route)) {
			out = append(out, l)
		}
	}
	for _, m := range cfg.Maps {
		live, read := s.Maps[m.Name]
		liveVal := map[string]string{}
		for _, e := range live {
			liveVal[e.Key] = e.Value
		}
		for _, e := range m.Entries {
			l := MapLine{Map: m.Name, Key: e.Key, Value: e.Value, Status: "unknown"}
			if read {
				v, ok := liveVal[e.Key]
				l.Live = v
				switch {
				case !ok:
					l.Status = "missing"
				case v != e.Value:
					l.Status = "differs"
				default:
					l.Status = "ok"
				}
				delete(liveVal, e.Key)
			}
			add(l)
		}
		for _, e := range live {
			if _, extra := liveVal[e.Key]; extra {
				add(MapLine{Map: m.Name, Key: e.Key, Live: e.Value, Status: "extra"})
			}
		}
	}
	return out
}

// WorkerLine is one HAProxy process, as `haroute state workers` shows it.
type WorkerLine struct {
	PID int `json:"pid"`
	// Role is master, current (takes new connections) or old (serves the connections of an earlier
	// configuration until they end).
	Role    string `json:"role"`
	Reloads int    `json:"reloads"`
	// Conns is the process's current connections (-1 when it could not be asked); Uptime its age.
	Conns   int    `json:"conns"`
	Uptime  string `json:"uptime,omitempty"`
	Version string `json:"version,omitempty"`
}

// Workers returns the master and its workers with their connections (ReadWorkers asks them).
func (s *Snapshot) Workers() []WorkerLine {
	if s.Procs == nil {
		return nil
	}
	out := []WorkerLine{{PID: s.Procs.Master.PID, Role: "master", Reloads: s.Procs.Master.Reloads, Conns: -1, Version: s.Procs.Version.String()}}
	serving, _ := s.Procs.Serving()
	for _, w := range s.Procs.Workers {
		line := WorkerLine{PID: w.PID, Role: "old", Reloads: w.Reloads, Conns: -1}
		if w.PID == serving.PID {
			line.Role = "current"
		}
		if info, ok := s.WorkerInfo[w.PID]; ok {
			if n, err := strconv.Atoi(info["CurrConns"]); err == nil {
				line.Conns = n
			}
			if sec, err := strconv.Atoi(info["Uptime_sec"]); err == nil {
				line.Uptime = (time.Duration(sec) * time.Second).String()
			}
			line.Version = info["Version"]
		}
		out = append(out, line)
	}
	return out
}

// ReadMaps asks HAProxy for every applied map's entries (`show map`); a map that cannot be read leaves
// a note and no live entries.
func (s *Snapshot) ReadMaps(ctx context.Context, admin socket.Runner, dir string) {
	if s.State == nil || s.State.Applied == nil || admin == nil {
		return
	}
	paths, err := render.PathsFor(s.State.Applied, dir)
	if err != nil {
		s.Notes = append(s.Notes, "map paths: "+err.Error())
		return
	}
	s.Maps = map[string][]socket.MapEntry{}
	for _, m := range s.State.Applied.Maps {
		entries, err := socket.ShowMap(ctx, admin, paths.Maps[m.Name])
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("map %s: %v", m.Name, err))
			delete(s.Maps, m.Name)
			continue
		}
		s.Maps[m.Name] = entries
	}
}

// ReadCerts asks HAProxy which certificate files it holds (`show ssl cert`).
func (s *Snapshot) ReadCerts(ctx context.Context, admin socket.Runner) {
	if admin == nil {
		return
	}
	paths, err := socket.ShowCertPaths(ctx, admin)
	if err != nil {
		s.Notes = append(s.Notes, "certificates: "+err.Error())
		return
	}
	if paths == nil {
		paths = []string{}
	}
	s.LoadedCerts = paths
}
