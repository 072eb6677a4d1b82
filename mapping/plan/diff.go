package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// Diff returns the runtime operations that turn from into to: the parts the runtime path owns
// (servers, map entries, certificates, the crt-list and CA files). Both configs must have the same
// backends (names, in order) with the same options, and the same map files; otherwise Diff returns an
// error. The one option that may differ is the TLS setting of a backend whose Route changes while one
// side has no servers (a spare claimed or released, a backend retired): it only ever reaches server
// lines, and every server is added or removed with the claim. Settings, frontends and RouteInfo are
// not compared.
//
// Compute uses Diff after matching (applied → Next); runtime/observe uses it to repair drift
// (live → applied).
//
// The operations come in this order, each group sorted by name:
//
//  0. Listener files (model.ListenerFiles) whose content changed: SetListenerFile, the default
//     certificate, then the client CRLs. One that appears or goes, and a changed client CA bundle,
//     are reloads (ListenerChanged); Diff leaves them alone.
//  1. CA files: SetCAFile (New when from lacks it) for new or changed bundles, so that servers
//     added below can verify with them.
//  2. Certificates: SetCertificate (New when from lacks it) for new or changed PEM; then the crt-list:
//     AddCrtListEntry for new certificates, DelCrtListEntry + AddCrtListEntry for an existing
//     certificate whose SNI filter or ALPN changed.
//  3. Servers, backend by backend in name order, for backends that keep or gain a Route: adds
//     (AddServer, EnableHealth when the server is health-checked, SetServerState unless the server
//     stays in maint), then weight, state and health-check changes (EnableHealth, DisableHealth) of
//     kept servers, then removals (SetServerState maint, DelServer). Servers go in before any map entry
//     can point at them, and a backend loses servers only after it has its new ones.
//  4. Map entries: every add and set across all maps, then every delete across all maps; within
//     each, haroute_forwarded.map and os_route_http_redirect.map's entries go where no request can
//     meet a state worse than before or after (see mapOps): a redirect ("1") is in before the map
//     changes it guards and goes after them, a "0" the other way round.
//  5. Server removals (maint, del) of backends that lose their Route (released spares, retired
//     backends): after the map deletes, so nothing selects a backend while it empties.
//  6. DelCrtListEntry + DelCertificate for removed certificates, then DelCAFile for removed CA files
//     (their servers are gone by now).
//
// Diff never emits ReplaceMap: single-entry edits keep the cross-map order above, and a map edit
// never depends on entry order (exact and longest-prefix lookups). runtime/apply may batch them.
func Diff(from, to *model.Config) ([]Op, error) { return diff(from, to, false) }

// diff is Diff; with dynamic (HAProxy 3.4+: Options.DynamicBackends) the two configs may differ in
// backends too (both lists sorted by name): a backend only to has is added (AddBackend, its servers,
// PublishBackend, in step 3), one only from has is deleted (UnpublishBackend, its servers' removal,
// DelBackend, in step 5), and one that from has Removing and to does not is published again after
// its servers (step 3).
func diff(from, to *model.Config, dynamic bool) ([]Op, error) {
	if from == nil || to == nil {
		return nil, errors.New("diff: nil config")
	}
	var serverOps, lateRemovals []Op
	if dynamic {
		var err error
		if serverOps, lateRemovals, err = dynamicServersOps(from.Backends, to.Backends); err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
	} else if err := sameBackends(from, to); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	} else {
		serverOps, lateRemovals = serversOps(from.Backends, to.Backends)
	}
	mapAdds, mapDels, err := mapOps(from.Maps, to.Maps)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	ops := listenerOps(&from.Listener, &to.Listener)
	caAdds, caDels := caOps(from.CAFiles, to.CAFiles)
	certAdds, certDels := certOps(from.Certificates, to.Certificates)
	ops = append(ops, caAdds...)
	ops = append(ops, certAdds...)
	ops = append(ops, serverOps...)
	ops = append(ops, mapAdds...)
	ops = append(ops, mapDels...)
	ops = append(ops, lateRemovals...)
	ops = append(ops, certDels...)
	ops = append(ops, caDels...)
	if len(ops) == 0 {
		return nil, nil
	}
	return ops, nil
}

// sameBackends returns an error unless from and to have the same backend names in the same order
// with the same options (see Diff for the one allowed TLS difference).
func sameBackends(from, to *model.Config) error {
	if len(from.Backends) != len(to.Backends) {
		return fmt.Errorf("%d backends, want %d: backends can only be added or removed by a reload", len(to.Backends), len(from.Backends))
	}
	var errs []error
	for i := range from.Backends {
		a, b := from.Backends[i], to.Backends[i]
		if a.Name != b.Name {
			return fmt.Errorf("backend %q where %q runs: backends can only be added or removed by a reload", b.Name, a.Name)
		}
		if err := sameOptionsForDiff(a, b); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sameOptionsForDiff returns an error unless a and b, two states of one backend, have the same
// options (see Diff for the one allowed TLS difference).
func sameOptionsForDiff(a, b *model.Backend) error {
	diffs := optionDiff(a, b)
	if len(diffs) == 1 && diffs[0] == "tls" && (a.Route != b.Route || b.Route == "") && (len(a.Servers) == 0 || len(b.Servers) == 0) {
		return nil
	}
	if len(diffs) > 0 {
		return fmt.Errorf("backend %q: options differ (%s)", a.Name, strings.Join(diffs, ", "))
	}
	return nil
}

// dynamicServersOps is serversOps for backend lists that may differ in names (see diff): the
// backends both have must have the same options (sameOptionsForDiff), the others are added or
// deleted whole.
func dynamicServersOps(from, to []*model.Backend) (early, late []Op, err error) {
	i, j := 0, 0
	for i < len(from) || j < len(to) {
		switch {
		case i < len(from) && j < len(to) && from[i].Name == to[j].Name:
			a, b := from[i], to[j]
			i++
			j++
			if err := sameOptionsForDiff(a, b); err != nil {
				return nil, nil, err
			}
			e, l := backendServerOps(a, b)
			early, late = append(early, e...), append(late, l...)
			if a.Removing && !b.Removing {
				early = append(early, PublishBackend{Backend: b.Name})
			}
		case j >= len(to) || (i < len(from) && from[i].Name < to[j].Name):
			a := from[i]
			i++
			late = append(late, UnpublishBackend{Backend: a.Name})
			_, l := backendServerOps(a, &model.Backend{Name: a.Name})
			late = append(late, l...)
			late = append(late, DelBackend{Backend: a.Name})
		default:
			b := to[j]
			j++
			if b.Spare || b.Retired {
				return nil, nil, fmt.Errorf("backend %q: a spare or retired backend cannot be added at runtime", b.Name)
			}
			if own := b.OwnLines(); len(own) > 0 {
				return nil, nil, fmt.Errorf("backend %q: its profile cannot carry %s", b.Name, strings.Join(own, ", "))
			}
			add := *b
			add.Servers = nil
			early = append(early, AddBackend{Backend: add})
			e, _ := backendServerOps(&model.Backend{Name: b.Name, Route: b.Route}, b)
			early = append(early, e...)
			early = append(early, PublishBackend{Backend: b.Name})
		}
	}
	return early, late, nil
}
