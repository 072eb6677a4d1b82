package plan

import (
	"slices"

	"github.com/haroute/haroute/mapping/model"
)

// keepServerIDs returns the desired servers of a backend with the ids HAProxy runs: a server that is
// applied under the same name keeps its applied id (ids cannot change at runtime), and a new server
// whose id is held by another applied server of the backend — one being removed, whose deletion
// HAProxy may defer — takes the next free one (model.NextServerID). Both differ from Translate's ids
// only after two names hashed to the same id; the next reload renders Translate's. desired is not
// modified; it is returned as it is when nothing changes.
func keepServerIDs(applied, desired []model.Server) []model.Server {
	if len(applied) == 0 || len(desired) == 0 || sameIDs(applied, desired) {
		return desired
	}
	appliedID := make(map[string]int32, len(applied))
	held := make(map[int32]bool, len(applied)+len(desired))
	for _, s := range applied {
		appliedID[s.Name] = s.ID
		held[s.ID] = true
	}
	var out []model.Server
	set := func(i int, id int32) {
		if out == nil {
			out = slices.Clone(desired)
		}
		out[i].ID = id
	}
	// Kept servers first, so that a new server cannot take an id one of them keeps.
	for i, s := range desired {
		if id, ok := appliedID[s.Name]; ok && id != s.ID {
			set(i, id)
		}
	}
	for i, s := range desired {
		if _, ok := appliedID[s.Name]; ok {
			continue
		}
		if held[s.ID] {
			set(i, model.NextServerID(s.ID, func(id int32) bool { return !held[id] }))
		}
		if out != nil {
			held[out[i].ID] = true
		} else {
			held[s.ID] = true
		}
	}
	if out == nil {
		return desired
	}
	return out
}

// sameIDs reports whether every desired server is applied under its name with its id: then
// keepServerIDs has nothing to change. It is the common case (a backend whose servers did not change,
// or only lost some), checked by one walk over both lists, which are sorted by name.
func sameIDs(applied, desired []model.Server) bool {
	i := 0
	for j := range desired {
		for i < len(applied) && applied[i].Name < desired[j].Name {
			i++
		}
		if i == len(applied) || applied[i].Name != desired[j].Name || applied[i].ID != desired[j].ID {
			return false
		}
		i++
	}
	return true
}

// serversOps returns the server operations between two backend lists of the same names (Diff steps 3
// and 5): early holds, backend by backend in name order, the adds (with their health checks), the
// states of the new servers, weight and state changes, and the removals of backends that keep or gain
// a Route; late holds the removals of backends without a Route in to (released spares, retired
// backends), to run after the map deletes.
func serversOps(from, to []*model.Backend) (early, late []Op) {
	for i := range to {
		e, l := backendServerOps(from[i], to[i])
		early = append(early, e...)
		late = append(late, l...)
	}
	return early, late
}

// backendServerOps returns the server operations of one backend (see serversOps). A server is
// identified by its name, which carries its address and port; a server whose address, port, id or
// verified host changes under the same name is removed and added again (none of them can change at
// runtime; the id only differs when someone re-added the server by hand).
func backendServerOps(a, b *model.Backend) (early, late []Op) {
	if len(a.Servers) == len(b.Servers) && (len(a.Servers) == 0 || &a.Servers[0] == &b.Servers[0]) {
		return nil, nil // no servers, or the very same ones (matchBackends keeps equal servers' slice)
	}
	var adds, readies, changes, removals []Op
	opsBackend := *b
	opsBackend.Servers = nil
	add := func(s model.Server) {
		adds = append(adds, AddServer{Backend: opsBackend, Server: s})
		if s.HealthCheck {
			adds = append(adds, EnableHealth{Backend: b.Name, Server: s.Name})
		}
		if s.State != model.StateMaint {
			readies = append(readies, SetServerState{Backend: b.Name, Server: s.Name, State: s.State})
		}
	}
	remove := func(dst *[]Op, s model.Server) {
		if s.State != model.StateMaint {
			*dst = append(*dst, SetServerState{Backend: a.Name, Server: s.Name, State: model.StateMaint})
		}
		*dst = append(*dst, DelServer{Backend: a.Name, Server: s.Name})
	}
	i, j := 0, 0
	for i < len(a.Servers) || j < len(b.Servers) {
		// Equality first: it is the common case and cheaper than ordering long names.
		if i < len(a.Servers) && j < len(b.Servers) && a.Servers[i].Name == b.Servers[j].Name {
			sa, sb := &a.Servers[i], &b.Servers[j]
			i++
			j++
			switch {
			case sa.Addr != sb.Addr || sa.Port != sb.Port || sa.ID != sb.ID || sa.VerifyHost != sb.VerifyHost:
				remove(&adds, *sa)
				add(*sb)
				continue
			case sa.Weight != sb.Weight:
				changes = append(changes, SetServerWeight{Backend: b.Name, Server: sb.Name, Weight: sb.Weight})
			}
			if sa.State != sb.State {
				changes = append(changes, SetServerState{Backend: b.Name, Server: sb.Name, State: sb.State})
			}
			switch {
			case sb.HealthCheck && !sa.HealthCheck:
				changes = append(changes, EnableHealth{Backend: b.Name, Server: sb.Name})
			case sa.HealthCheck && !sb.HealthCheck:
				changes = append(changes, DisableHealth{Backend: b.Name, Server: sb.Name})
			}
			continue
		}
		if j >= len(b.Servers) || (i < len(a.Servers) && a.Servers[i].Name < b.Servers[j].Name) {
			remove(&removals, a.Servers[i])
			i++
		} else {
			add(b.Servers[j])
			j++
		}
	}
	early = append(append(adds, readies...), changes...)
	if b.Route == "" {
		return early, removals
	}
	return append(early, removals...), nil
}

// AsStarted returns cfg as HAProxy runs it right after loading its files: every server line
// configures a check, and HAProxy starts every configured check, so every server is health-checked.
// DormantChecks are the ops that turn that into cfg. cfg is not modified.
func AsStarted(cfg *model.Config) *model.Config {
	if cfg == nil {
		return nil
	}
	out := *cfg
	out.Backends = slices.Clone(cfg.Backends)
	for i, b := range out.Backends {
		if !slices.ContainsFunc(b.Servers, func(s model.Server) bool { return !s.HealthCheck }) {
			continue
		}
		nb := *b // cfg's backends are shared, never modified
		nb.Servers = slices.Clone(b.Servers)
		for j := range nb.Servers {
			nb.Servers[j].HealthCheck = true
		}
		out.Backends[i] = &nb
	}
	return &out
}

// DormantChecks returns the ops that stop the checks HAProxy started but cfg does not want (a
// DisableHealth for every server without HealthCheck), in backend and server order: what follows
// every start and reload from cfg's files.
func DormantChecks(cfg *model.Config) []Op {
	if cfg == nil {
		return nil
	}
	var ops []Op
	for _, b := range cfg.Backends {
		for _, s := range b.Servers {
			if !s.HealthCheck {
				ops = append(ops, DisableHealth{Backend: b.Name, Server: s.Name})
			}
		}
	}
	return ops
}

// OnlyDormantChecks reports whether ops only stop checks (DisableHealth): what a start from files
// needs anyway, so they leave nothing a restart from those files would lose.
func OnlyDormantChecks(ops []Op) bool {
	for _, op := range ops {
		if _, ok := op.(DisableHealth); !ok {
			return false
		}
	}
	return len(ops) > 0
}
