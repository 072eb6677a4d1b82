package views

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// Kinds of a DiffRow.
const (
	// DiffPending: the desired state differs from what haroute applied; the next sync applies it
	// (or a reload waits for its interval, or the Route changed since the router's last snapshot).
	DiffPending = "pending"
	// DiffDrift: HAProxy runs something other than what haroute applied; the next drift check
	// repairs it.
	DiffDrift = "drift"
	// DiffHeld: a server an operator keeps in maintenance or drain; haroute leaves it.
	DiffHeld = "held"
	// DiffStaleFile: the files on disk differ from what HAProxy runs: a reload or restart would
	// change traffic.
	DiffStaleFile = "stale-file"
)

// DiffRow is one object (a Route, a server of a Route, a map entry) on which the desired state, the
// applied state, HAProxy and the files on disk do not all agree. A value is "" where the source
// does not have the object, "-" where the source does not describe such objects (HAProxy has no
// Routes, only servers and map entries).
type DiffRow struct {
	// Kinds are the disagreements, in the order pending, drift (or held), stale-file.
	Kinds     []string `json:"kinds"`
	Namespace string   `json:"namespace,omitempty"`
	Route     string   `json:"route,omitempty"`
	// Object is "route", "server <addr:port>" or "map <file> <key>".
	Object  string `json:"object"`
	Desired string `json:"desired"`
	Applied string `json:"applied"`
	Live    string `json:"live"`
	Files   string `json:"files"`
}

// Files is what haroute run wrote to disk: the servers of haproxy.cfg by backend and the map files.
type Files struct {
	Servers map[string][]FileServer
	Maps    map[string][]model.MapEntry
}

// FileServer is one server line of haproxy.cfg.
type FileServer struct {
	Name, Addr string
	Weight     int
	Disabled   bool
}

// notDescribed marks a source that does not describe a kind of object.
const notDescribed = "-"

// factKey identifies one object across the sources.
type factKey struct{ route, object string }

// facts are one source's objects and their values.
type facts map[factKey]string

// Diff compares desired (a Translate result; nil when not given) with the applied state, HAProxy's
// servers and maps (ReadMaps first) and the files (nil when not read), and returns the objects on
// which they disagree, sorted by Route and object. Objects are keyed by Route, never by HAProxy's
// backend names, so that a spare serving a new Route equals the Route's own backend after a reload.
func (s *Snapshot) Diff(desired *model.Config, files *Files, f Filter) []DiffRow {
	var applied *model.Config
	if s.State != nil {
		applied = s.State.Applied
	}
	var d, a, l, fl facts
	if desired != nil {
		d = modelFacts(desired)
	}
	if applied != nil {
		a = modelFacts(applied)
		if s.Servers != nil || s.Maps != nil {
			l = s.liveFacts(applied)
		}
		if files != nil {
			fl = fileFacts(applied, files)
		}
	}
	held := map[factKey]bool{}
	if s.State != nil && applied != nil {
		for _, h := range s.State.Held { // "<backend>/<server>: <state>"
			if k, ok := heldKey(applied, h); ok {
				held[k] = true
			}
		}
	}
	keys := map[factKey]bool{}
	for _, src := range []facts{d, a, l, fl} {
		for k := range src {
			keys[k] = true
		}
	}
	var rows []DiffRow
	for k := range keys {
		ns, name, _ := strings.Cut(k.route, "/")
		if k.route != "" && !s.Matches(f, ns, name) || k.route == "" && (f.Namespace != "" || (f.Selector != nil && !f.Selector.Empty())) {
			continue
		}
		route := k.object == "route"
		row := DiffRow{Namespace: ns, Route: name, Object: k.object,
			Desired: value(d, k, false), Applied: value(a, k, false), Live: value(l, k, route), Files: value(fl, k, route)}
		if d != nil && a != nil && row.Desired != row.Applied {
			row.Kinds = append(row.Kinds, DiffPending)
		}
		if !route && a != nil && l != nil && row.Applied != row.Live {
			if held[k] {
				row.Kinds = append(row.Kinds, DiffHeld)
			} else {
				row.Kinds = append(row.Kinds, DiffDrift)
			}
		}
		if !route && l != nil && fl != nil && row.Live != row.Files {
			row.Kinds = append(row.Kinds, DiffStaleFile)
		}
		if len(row.Kinds) > 0 {
			rows = append(rows, row)
		}
	}
	slices.SortFunc(rows, func(x, y DiffRow) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Route, y.Route), cmp.Compare(x.Object, y.Object))
	})
	return rows
}

func value(src facts, k factKey, notApplicable bool) string {
	if src == nil || notApplicable {
		return notDescribed
	}
	return src[k]
}

// modelFacts lists a model's Routes, their servers and the map entries.
func modelFacts(cfg *model.Config) facts {
	out := facts{}
	routeOf := map[string]string{}
	for _, r := range cfg.Routes {
		id := r.Namespace + "/" + r.Name
		routeOf[r.Backend] = id
		tls := r.Termination
		if r.InsecurePolicy != "" {
			tls += "/" + r.InsecurePolicy
		}
		out[factKey{id, "route"}] = fmt.Sprintf("host=%s path=%s tls=%s", r.Host, r.Path, tls)
	}
	for _, b := range cfg.Backends {
		id := routeOf[b.Name]
		if id == "" {
			continue
		}
		for _, sv := range b.Servers {
			state := sv.State
			if state == "" {
				state = model.StateReady
			}
			out[factKey{id, serverObject(sv.Addr, int(sv.Port))}] = fmt.Sprintf("weight=%d %s", sv.Weight, state)
		}
	}
	addMapFacts(out, routeOf, cfg.Maps, func(m model.MapFile) []model.MapEntry { return m.Entries })
	return out
}

// addMapFacts adds the entries of maps (as entriesOf gives them), a backend value or key replaced by
// its Route.
func addMapFacts(out facts, routeOf map[string]string, maps []model.MapFile, entriesOf func(model.MapFile) []model.MapEntry) {
	for _, m := range maps {
		for _, e := range entriesOf(m) {
			k, v := mapFact(routeOf, m.Name, e)
			out[k] = v
		}
	}
}

// mapFact keys a map entry by the Route it leads to (its value names the Route's backend) or is
// about (its key names it: haroute_forwarded.map). The redirect map's entries are keyed by host and
// path, their values 1 or 0.
func mapFact(routeOf map[string]string, mapName string, e model.MapEntry) (factKey, string) {
	if mapName == model.MapHTTPRedirect {
		return factKey{"", "map " + mapName + " " + e.Key}, "redirect " + e.Value
	}
	if id, ok := routeOf[e.Key]; ok {
		return factKey{id, "map " + mapName + " " + id}, e.Value
	}
	if id, ok := routeOf[e.Value]; ok {
		return factKey{id, "map " + mapName + " " + e.Key}, "route " + id
	}
	return factKey{"", "map " + mapName + " " + e.Key}, "backend " + e.Value
}

func serverObject(addr string, port int) string {
	return "server " + net.JoinHostPort(addr, strconv.Itoa(port))
}

// liveFacts lists HAProxy's servers of the applied Routes' backends and its map entries, attributed
// through the applied state's backend names.
func (s *Snapshot) liveFacts(applied *model.Config) facts {
	out := facts{}
	routeOf := map[string]string{}
	for _, r := range applied.Routes {
		routeOf[r.Backend] = r.Namespace + "/" + r.Name
	}
	if s.Servers != nil {
		for be, id := range routeOf {
			for _, sv := range s.Servers[be] {
				state := model.StateReady
				switch {
				case sv.AdminState&adminMaint != 0:
					state = model.StateMaint
				case sv.AdminState&adminDrain != 0:
					state = model.StateDrain
				}
				out[factKey{id, serverObject(sv.Addr, sv.Port)}] = fmt.Sprintf("weight=%d %s", sv.UserWeight, state)
			}
		}
	}
	if s.Maps != nil {
		addMapFacts(out, routeOf, applied.Maps, func(m model.MapFile) []model.MapEntry { return toModel(s.Maps[m.Name]) })
	}
	return out
}

// fileFacts lists the files' servers of the applied Routes' backends and their map entries.
func fileFacts(applied *model.Config, files *Files) facts {
	out := facts{}
	routeOf := map[string]string{}
	for _, r := range applied.Routes {
		routeOf[r.Backend] = r.Namespace + "/" + r.Name
	}
	for be, id := range routeOf {
		for _, sv := range files.Servers[be] {
			host, port, err := net.SplitHostPort(sv.Addr)
			if err != nil {
				continue
			}
			p, _ := strconv.Atoi(port)
			state := model.StateReady
			if sv.Disabled {
				state = model.StateMaint
			}
			out[factKey{id, serverObject(host, p)}] = fmt.Sprintf("weight=%d %s", sv.Weight, state)
		}
	}
	addMapFacts(out, routeOf, applied.Maps, func(m model.MapFile) []model.MapEntry { return files.Maps[m.Name] })
	return out
}

func toModel(entries []socket.MapEntry) []model.MapEntry {
	out := make([]model.MapEntry, len(entries))
	for i, e := range entries {
		out[i] = model.MapEntry{Key: e.Key, Value: e.Value}
	}
	return out
}

// heldKey finds the object of a held server ("<backend>/<server>: <state>") in the applied state.
func heldKey(applied *model.Config, held string) (factKey, bool) {
	i := strings.LastIndex(held, ": ")
	if i < 0 {
		return factKey{}, false
	}
	be, server, ok := strings.Cut(held[:i], "/")
	if !ok {
		return factKey{}, false
	}
	b := applied.Backend(be)
	if b == nil || b.Route == "" {
		return factKey{}, false
	}
	for _, sv := range b.Servers {
		if sv.Name == server {
			return factKey{b.Route, serverObject(sv.Addr, int(sv.Port))}, true
		}
	}
	return factKey{}, false
}

// FileFindings are doctor's findings about the files on disk: one FILES_STALE per object whose file
// differs from what HAProxy runs (ReadMaps first), since a reload or restart would change traffic.
func (s *Snapshot) FileFindings(files *Files) []Finding {
	var out []Finding
	for _, r := range s.Diff(nil, files, Filter{}) {
		if !slices.Contains(r.Kinds, DiffStaleFile) {
			continue
		}
		obj := "haproxy"
		if r.Route != "" {
			obj = "route " + r.Namespace + "/" + r.Route
		}
		out = append(out, Finding{Level: LevelWarn, Code: "FILES_STALE", Object: obj,
			Message: fmt.Sprintf("%s: HAProxy runs %q, the files on disk say %q: a reload or restart would change traffic", r.Object, absentText(r.Live), absentText(r.Files)),
			Hint:    "haroute diff --no-desired lists every such object; a change made by hand on the socket (drift) or to the files explains it"})
	}
	return out
}

func absentText(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
