package controller

import (
	"maps"
	"reflect"
	"time"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/runtime/haproxy"
)

// routeChanges returns the Routes ("<ns>/<name>") whose serving changed from prev to next by out:
// for runtime operations, the Routes of the backends, map entries and certificates the operations
// touched (the cost follows the size of the change, not of the cluster); for a reload, every Route
// whose RouteInfo or backend differs (a reload is rare and rewrites everything anyway).
func routeChanges(prev, next *model.Config, out haproxy.Outcome) map[string]bool {
	if next == nil {
		return nil
	}
	if out.Reloaded || prev == nil {
		return reloadChanges(prev, next)
	}
	routeOf := backendRoutes(next)
	changed := map[string]bool{}
	mark := func(backend string) {
		if r := routeOf[backend]; r != "" {
			changed[r] = true
		}
	}
	certRoutes := map[string][]string{}
	for _, r := range next.Routes {
		if r.Certificate != "" {
			certRoutes[r.Certificate] = append(certRoutes[r.Certificate], r.Namespace+"/"+r.Name)
		}
	}
	for _, op := range out.Plan.Ops {
		switch o := op.(type) {
		case plan.AddServer:
			mark(o.Backend.Name)
		case plan.DelServer:
			mark(o.Backend)
		case plan.SetServerWeight:
			mark(o.Backend)
		case plan.SetServerState:
			mark(o.Backend)
		case plan.EnableHealth:
			mark(o.Backend)
		case plan.DisableHealth:
			mark(o.Backend)
		case plan.AddMapEntry:
			mark(o.Value)
		case plan.SetMapEntry:
			mark(o.Value)
		case plan.ReplaceMap:
			for _, e := range o.Entries {
				mark(e.Value)
			}
		case plan.SetCertificate:
			for _, r := range certRoutes[o.Cert.Name] {
				changed[r] = true
			}
		case plan.AddCrtListEntry:
			for _, r := range certRoutes[o.Cert.Name] {
				changed[r] = true
			}
		}
	}
	return changed
}

// reloadChanges compares every Route of prev and next.
func reloadChanges(prev, next *model.Config) map[string]bool {
	changed := map[string]bool{}
	if prev == nil {
		for _, r := range next.Routes {
			changed[r.Namespace+"/"+r.Name] = true
		}
		return changed
	}
	before := map[string]model.RouteInfo{}
	for _, r := range prev.Routes {
		before[r.Namespace+"/"+r.Name] = r
	}
	prevBackends, nextBackends := backendsByRoute(prev), backendsByRoute(next)
	for _, r := range next.Routes {
		id := r.Namespace + "/" + r.Name
		old, ok := before[id]
		if !ok {
			changed[id] = true
			continue
		}
		old.Backend, r.Backend = "", "" // a spare renamed by the reload is no change
		if old != r || !sameBackend(prevBackends[id], nextBackends[id]) {
			changed[id] = true
		}
	}
	return changed
}

// sameBackend compares two backends, their names aside.
func sameBackend(a, b *model.Backend) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Name, y.Name, x.Spare, y.Spare = "", "", false, false
	return reflect.DeepEqual(x, y)
}

func backendRoutes(cfg *model.Config) map[string]string {
	out := make(map[string]string, len(cfg.Backends))
	for _, b := range cfg.Backends {
		if b.Route != "" {
			out[b.Name] = b.Route
		}
	}
	return out
}

func backendsByRoute(cfg *model.Config) map[string]*model.Backend {
	out := make(map[string]*model.Backend, len(cfg.Backends))
	for i := range cfg.Backends {
		if b := cfg.Backends[i]; b.Route != "" {
			out[b.Route] = b
		}
	}
	return out
}

// recordChanges sets the last change of the Routes that changed and forgets the Routes next no
// longer serves.
func recordChanges(last map[string]stateapi.RouteChange, prev, next *model.Config, out haproxy.Outcome, at time.Time) map[string]stateapi.RouteChange {
	if last == nil {
		last = map[string]stateapi.RouteChange{}
	}
	ch := stateapi.RouteChange{At: at, Via: stateapi.ViaRuntime}
	if out.Reloaded || prev == nil {
		ch = stateapi.RouteChange{At: at, Via: stateapi.ViaReload, Reason: string(out.Reason.Kind)}
	}
	for id := range routeChanges(prev, next, out) {
		last[id] = ch
	}
	if next != nil && (out.Reloaded || len(last) > len(next.Routes)) {
		serving := make(map[string]bool, len(next.Routes))
		for _, r := range next.Routes {
			serving[r.Namespace+"/"+r.Name] = true
		}
		maps.DeleteFunc(last, func(id string, _ stateapi.RouteChange) bool { return !serving[id] })
	}
	return last
}
