package plan

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// Compute plans the way from applied (nil: nothing known, e.g. first start) to desired (a Translate
// result, without pool; not nil). It never modifies its arguments; Next shares read-only data (whole
// backends, servers, map entries, PEM strings) with them, so treat all three as read-only.
//
//   - applied nil: Structural [o.Unknown, default Initial], Next = WithPool(desired).
//   - Settings that differ (any field but RouterName) are GlobalChanged, frontends that differ
//     FrontendChanged; backends are matched as matchBackends describes (BackendOptionsChanged,
//     NewBackend, PoolExhausted).
//   - With structural reasons, Next = WithPool(desired) and there are no Ops; the reasons are sorted
//     and deduplicated.
//   - Otherwise Next is desired with claimed spares standing in for new Routes' backends (map entries
//     and RouteInfo.Backend name the spare), released spares back in the pool, retired and free
//     backends kept; Ops = Diff(applied, Next). With o.ReloadEveryChange, non-empty Ops become a
//     reload (ReloadMode).
func Compute(applied, desired *model.Config) Plan { return ComputeWith(applied, desired, Options{}) }

// Options tune ComputeWith.
type Options struct {
	// Unknown is the reason when applied is nil (the zero value: Initial); the caller names why it
	// does not know what HAProxy runs (Restart, Drift, ...).
	Unknown Reason
	// ReloadEveryChange makes every change a reload (ReloadMode) where it would be runtime ops.
	ReloadEveryChange bool
	// PoolSizes sizes the spare pool a reload installs (nil: Settings.SparePoolSize).
	PoolSizes PoolSizes
	// Refill asks for a reload (PoolRefill) when a pool holds fewer free spares than PoolSizes
	// gives it, so that new Routes keep finding spares; without it the pool only refills at reloads
	// that happen anyway.
	Refill bool
	// DynamicBackends says that HAProxy adds and deletes backends at runtime (3.4+,
	// socket.Capabilities.DynamicBackends): a new Route whose options its profile carries gets its
	// own backend at once (AddBackend), a deleted Route's backend is deleted (DelBackend), and a
	// reload installs no spare pool. PoolSizes and Refill are then ignored.
	DynamicBackends bool
}

// ComputeWith is Compute with a spare pool sized by o, and optionally refilled.
func ComputeWith(applied, desired *model.Config, o Options) Plan {
	if applied == nil {
		r := o.Unknown
		if r.Kind == "" {
			r = Reason{Kind: Initial}
		}
		return Reload(desired, o, r)
	}
	reasons := settingsReasons(&applied.Settings, &desired.Settings)
	reasons = append(reasons, frontendReasons(applied.Frontends, desired.Frontends)...)
	reasons = append(reasons, listenerReasons(&applied.Listener, &desired.Listener)...)
	reasons = append(reasons, caFileReasons(applied.CAFiles, desired.CAFiles)...)
	var m matching
	if len(reasons) == 0 {
		m = matchBackends(applied, desired, o.DynamicBackends)
		reasons = append(reasons, m.reasons...)
	}
	if len(reasons) == 0 && o.Refill && !o.DynamicBackends {
		reasons = refillReasons(m.next, &desired.Settings, o.PoolSizes)
	}
	if len(reasons) > 0 {
		return Plan{Next: installed(desired, o), Structural: sortReasons(reasons)}
	}
	next := &model.Config{
		Settings:     desired.Settings,
		Frontends:    desired.Frontends,
		Maps:         renameMaps(desired.Maps, m.rename),
		Backends:     m.next,
		Certificates: desired.Certificates,
		CAFiles:      retainedCAFiles(applied.CAFiles, desired.CAFiles, m.next),
		Routes:       renameRoutes(desired.Routes, m.rename),
		Listener:     desired.Listener,
	}
	ops, err := diff(applied, next, o.DynamicBackends)
	if err != nil {
		// Matching keeps names and options, so Diff cannot refuse; if it ever does, a reload is the
		// safe way.
		return Reload(desired, o, Reason{Kind: DiffRefused, Detail: err.Error()})
	}
	next.Maps = keepUnchangedMaps(applied.Maps, next.Maps, ops)
	// Stopping the checks HAProxy started is part of every start, in reload mode too.
	if o.ReloadEveryChange && len(ops) > 0 && !OnlyDormantChecks(ops) {
		return Reload(desired, o, reloadModeReason(ops))
	}
	return Plan{Next: next, Ops: ops}
}

// reloadModeReason is the reason of a reload that stands for runtime ops (Options.ReloadEveryChange).
func reloadModeReason(ops []Op) Reason {
	return Reason{Kind: ReloadMode, Detail: fmt.Sprintf("%d runtime ops", len(ops))}
}

// Reload is the structural plan for desired with reason r: Next is desired as a reload installs it
// (installed: with a full pool sized by o.PoolSizes, or none on 3.4+), no ops. Callers use it for reasons only they can see (TemplateChanged).
func Reload(desired *model.Config, o Options, r Reason) Plan {
	return Plan{Next: installed(desired, o), Structural: []Reason{r}}
}

// installed returns desired as a reload installs it: with a full spare pool (WithPoolSizes), or,
// on an HAProxy that adds backends at runtime (Options.DynamicBackends), as it is.
func installed(desired *model.Config, o Options) *model.Config {
	if o.DynamicBackends {
		out := *desired
		return &out
	}
	return WithPoolSizes(desired, o.PoolSizes)
}

// refillReasons returns a PoolRefill reason per pool whose free spares among backends are fewer than
// its size.
func refillReasons(backends []*model.Backend, s *model.Settings, sizes PoolSizes) []Reason {
	free := FreeSpares(&model.Config{Backends: backends})
	var out []Reason
	for _, k := range Pools(s) {
		if want := sizes.size(s, k); free[k] < want {
			out = append(out, Reason{Kind: PoolRefill, Subject: k.String(), Detail: fmt.Sprintf("%d free spares, %d wanted", free[k], want)})
		}
	}
	return out
}

// settingsReasons returns a GlobalChanged reason per settings field that differs, RouterName aside
// (it only appears in Route status). Nested structs (Timeouts) are compared field by field.
func settingsReasons(a, b *model.Settings) []Reason {
	var out []Reason
	var walk func(prefix string, va, vb reflect.Value)
	walk = func(prefix string, va, vb reflect.Value) {
		t := va.Type()
		for i := 0; i < t.NumField(); i++ {
			name := prefix + t.Field(i).Name
			if name == "RouterName" {
				continue
			}
			fa, fb := va.Field(i), vb.Field(i)
			if fa.Kind() == reflect.Struct {
				walk(name+".", fa, fb)
				continue
			}
			if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
				out = append(out, Reason{Kind: GlobalChanged, Subject: name, Detail: fmt.Sprintf("%v → %v", fa.Interface(), fb.Interface())})
			}
		}
	}
	walk("", reflect.ValueOf(*a), reflect.ValueOf(*b))
	return out
}

// frontendText describes a frontend for a reason's detail: name, mode and listening addresses.
func frontendText(f model.Frontend) string {
	s := fmt.Sprintf("%s %s %s", f.Name, f.Mode, f.Bind)
	if f.BindV6 != "" {
		s += " (IPv6 " + f.BindV6 + ")"
	}
	return s
}

// frontendReasons returns a FrontendChanged reason per frontend added, removed, changed or moved.
func frontendReasons(a, b []model.Frontend) []Reason {
	if reflect.DeepEqual(a, b) {
		return nil
	}
	var out []Reason
	for i := 0; i < max(len(a), len(b)); i++ {
		switch {
		case i >= len(a):
			out = append(out, Reason{Kind: FrontendChanged, Subject: b[i].Name, Detail: "added"})
		case i >= len(b):
			out = append(out, Reason{Kind: FrontendChanged, Subject: a[i].Name, Detail: "removed"})
		case a[i] != b[i]:
			out = append(out, Reason{Kind: FrontendChanged, Subject: b[i].Name, Detail: frontendText(a[i]) + " → " + frontendText(b[i])})
		}
	}
	return out
}

// sortReasons sorts reasons by kind, subject and detail and drops duplicates.
func sortReasons(rs []Reason) []Reason {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Subject != b.Subject {
			return a.Subject < b.Subject
		}
		return a.Detail < b.Detail
	})
	out := rs[:0]
	for i, r := range rs {
		if i == 0 || r != rs[i-1] {
			out = append(out, r)
		}
	}
	return out
}

// renameMaps returns maps with every key and value that names a renamed backend replaced by the
// applied name (values of the host maps, keys of os_route_http_redirect.map), entries re-sorted.
// Without renames the maps are returned as they are. Host keys never contain ':', so they cannot be
// mistaken for backend names.
func renameMaps(maps []model.MapFile, rename map[string]string) []model.MapFile {
	if len(rename) == 0 {
		return maps
	}
	out := make([]model.MapFile, len(maps))
	for i, mf := range maps {
		entries := make([]model.MapEntry, len(mf.Entries))
		resort := false
		for j, e := range mf.Entries {
			if v, ok := rename[e.Value]; ok {
				e.Value = v
			}
			if k, ok := rename[e.Key]; ok {
				e.Key, resort = k, true
			}
			entries[j] = e
		}
		if resort {
			sort.Slice(entries, func(a, b int) bool { return entries[a].Key < entries[b].Key })
		}
		out[i] = model.MapFile{Name: mf.Name, Entries: entries}
	}
	return out
}

// renameRoutes returns routes with RouteInfo.Backend renamed where a spare serves the Route.
func renameRoutes(routes []model.RouteInfo, rename map[string]string) []model.RouteInfo {
	if len(rename) == 0 || routes == nil {
		return routes
	}
	out := make([]model.RouteInfo, len(routes))
	for i, r := range routes {
		if n, ok := rename[r.Backend]; ok {
			r.Backend = n
		}
		out[i] = r
	}
	return out
}

// keepUnchangedMaps returns next's map files with every map that no op changes replaced by the
// applied one (the same entries, since Diff compares every entry): later stages that compare Next with
// the applied state (render, the files written through) then find those maps identical at once.
// Both lists have the same maps in the same order (Diff checked).
func keepUnchangedMaps(applied, next []model.MapFile, ops []Op) []model.MapFile {
	touched := map[string]bool{}
	for _, op := range ops {
		switch op := op.(type) {
		case AddMapEntry:
			touched[op.Map] = true
		case SetMapEntry:
			touched[op.Map] = true
		case DelMapEntry:
			touched[op.Map] = true
		case ReplaceMap:
			touched[op.Map] = true
		}
	}
	out := make([]model.MapFile, len(next))
	for i := range next {
		if touched[next[i].Name] || i >= len(applied) || applied[i].Name != next[i].Name {
			out[i] = next[i]
		} else {
			out[i] = applied[i]
		}
	}
	return out
}

// retainedCAFiles returns desired's CA files plus those of applied that the servers of a retiring
// backend (see matchBackends) still verify with: HAProxy refuses to delete a CA file in use, and the
// next plan deletes it once those servers are gone. Sorted by name, as model.Config keeps them.
func retainedCAFiles(applied, desired []model.CAFile, next []*model.Backend) []model.CAFile {
	out := desired
	for _, b := range next {
		if b.Route != "" || b.TLS == nil || len(b.Servers) == 0 || strings.HasPrefix(b.TLS.CAFile, "/") {
			continue
		}
		name := b.TLS.CAFile
		if _, found := slices.BinarySearchFunc(out, name, func(c model.CAFile, n string) int { return strings.Compare(c.Name, n) }); found {
			continue
		}
		i, found := slices.BinarySearchFunc(applied, name, func(c model.CAFile, n string) int { return strings.Compare(c.Name, n) })
		if !found {
			continue // not loaded either: nothing to keep
		}
		if len(out) == len(desired) {
			out = slices.Clone(desired) // desired is shared read-only
		}
		j, _ := slices.BinarySearchFunc(out, name, func(c model.CAFile, n string) int { return strings.Compare(c.Name, n) })
		out = slices.Insert(out, j, applied[i])
	}
	return out
}

// Draining returns the names of the backends of c that keep servers without a Route (free spares,
// retired backends): those of Routes removed by the last plan, kept so that requests already on
// their way finish, and deletions HAProxy deferred; the backends being removed at runtime
// (model.Backend.Removing); and hand-over backends serving a Route while the Route's own backend is
// recreated from another profile (3.4+: the plan after its deletion adds it back). The next plan removes them: callers plan again
// soon while there are any, and ComputeDelta needs them among its dirty backends.
func Draining(c *model.Config) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, b := range c.Backends {
		if b.Route == "" && (len(b.Servers) > 0 || b.Removing) || b.Route != "" && model.IsHandover(b.Name) {
			out = append(out, b.Name)
		}
	}
	return out
}
