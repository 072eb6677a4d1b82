package plan

import "github.com/haroute/haroute/mapping/model"

// serversOps returns the server operations between two backend lists of the same names (Diff steps 3
// and 5): early holds, backend by backend in name order, the adds (with their health checks), the
// states of the new servers, weight and state changes, and the removals of backends that keep or gain
// a Route; late holds the removals of backends without a Route in to (released spares, retired
// backends), to run after the map deletes.
func serversOps(from, to []model.Backend) (early, late []Op) {
	for i := range to {
		e, l := backendServerOps(&from[i], &to[i])
		early = append(early, e...)
		late = append(late, l...)
	}
	return early, late
}

// backendServerOps returns the server operations of one backend (see serversOps). A server is
// identified by its name, which carries its address and port; a server whose address, port or
// verified host changes under the same name is removed and added again.
func backendServerOps(a, b *model.Backend) (early, late []Op) {
	if len(a.Servers) == 0 && len(b.Servers) == 0 {
		return nil, nil
	}
	var adds, readies, changes, removals []Op
	opsBackend := *b
	opsBackend.Servers = nil
	add := func(s model.Server) {
		adds = append(adds,
			AddServer{Backend: opsBackend, Server: s},
			EnableHealth{Backend: b.Name, Server: s.Name})
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
			case sa.Addr != sb.Addr || sa.Port != sb.Port || sa.VerifyHost != sb.VerifyHost:
				remove(&adds, *sa)
				add(*sb)
				continue
			case sa.Weight != sb.Weight:
				changes = append(changes, SetServerWeight{Backend: b.Name, Server: sb.Name, Weight: sb.Weight})
			}
			if sa.State != sb.State {
				changes = append(changes, SetServerState{Backend: b.Name, Server: sb.Name, State: sb.State})
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
