package haproxy

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// claims counts, per pool, the spares that next claims and applied had free.
func claims(applied, next *model.Config) map[plan.PoolKey]int {
	out := map[plan.PoolKey]int{}
	aligned := len(applied.Backends) == len(next.Backends)
	for i, b := range next.Backends {
		if aligned && applied.Backends[i] == b {
			continue // the applied backend itself: nothing claimed (names are unique)
		}
		if !b.Spare || b.Route == "" {
			continue
		}
		if a := applied.Backend(b.Name); a != nil && a.Route == "" {
			out[plan.PoolKey{Kind: b.Kind, Balance: b.Balance}]++
		}
	}
	return out
}

// lowPools returns the pools of next that Demand finds low, given how long a refill would take: the
// wait until a reload may be sent, plus twice the last reload (at least refillMargin).
func (i *Instance) lowPools(next *model.Config, now time.Time) []plan.PoolKey {
	lead := max(refillMargin, 2*i.lastReload)
	if at := i.reloader.ReadyAt(); at.After(now) {
		lead += at.Sub(now)
	}
	free := i.freeSpares(next)
	var out []plan.PoolKey
	for _, k := range plan.Pools(&next.Settings) {
		if i.demand.Low(k, free[k], now, lead) {
			out = append(out, k)
		}
	}
	return out
}

// freeSpares returns plan.FreeSpares(next), counted from the last state counted when both have as
// many backends: only the positions whose backend is not the very same pointer are looked at, so
// that a plan that changed a few backends costs what it changed.
func (i *Instance) freeSpares(next *model.Config) map[plan.PoolKey]int {
	last := i.spares.of
	if last == nil || len(last.Backends) != len(next.Backends) {
		i.spares.of, i.spares.free = next, plan.FreeSpares(next)
		return maps.Clone(i.spares.free)
	}
	free := maps.Clone(i.spares.free)
	isFree := func(b *model.Backend) bool { return b.Spare && b.Route == "" }
	for k, b := range next.Backends {
		if o := last.Backends[k]; o != b {
			if isFree(o) {
				free[plan.PoolKey{Kind: o.Kind, Balance: o.Balance}]--
			}
			if isFree(b) {
				free[plan.PoolKey{Kind: b.Kind, Balance: b.Balance}]++
			}
		}
	}
	for k, n := range free {
		if n == 0 {
			delete(free, k)
		}
	}
	i.spares.of, i.spares.free = next, free
	return maps.Clone(free)
}

// withDeferred returns next with the servers whose deletion HAProxy deferred put back, in maint, as
// they were in prev, and the backends whose deletion it deferred (HAProxy 3.4+) put back as prev
// had them, Removing, with only those servers. next is not modified (it shares slices with the
// desired state).
func withDeferred(next, prev *model.Config, deferred []plan.DelServer, deferredBackends []string) *model.Config {
	if len(deferred) == 0 && len(deferredBackends) == 0 || prev == nil {
		return next
	}
	out := *next
	out.Backends = slices.Clone(next.Backends)
	for _, name := range deferredBackends {
		old := prev.Backend(name)
		k := sort.Search(len(out.Backends), func(k int) bool { return out.Backends[k].Name >= name })
		if old == nil || (k < len(out.Backends) && out.Backends[k].Name == name) {
			continue
		}
		kept := *old
		kept.Route, kept.Retired, kept.Removing, kept.Servers = "", true, true, []model.Server{}
		out.Backends = slices.Insert(out.Backends, k, &kept)
	}
	for _, d := range deferred {
		old := prev.Backend(d.Backend)
		k := sort.Search(len(out.Backends), func(k int) bool { return out.Backends[k].Name >= d.Backend })
		if old == nil || k == len(out.Backends) || out.Backends[k].Name != d.Backend {
			continue
		}
		nb := *out.Backends[k] // next's backends are shared, never modified
		b := &nb
		var srv *model.Server
		for j := range old.Servers {
			if old.Servers[j].Name == d.Server {
				srv = &old.Servers[j]
			}
		}
		j := sort.Search(len(b.Servers), func(j int) bool { return b.Servers[j].Name >= d.Server })
		if srv == nil || (j < len(b.Servers) && b.Servers[j].Name == d.Server) {
			continue
		}
		kept := *srv
		kept.State = model.StateMaint
		b.Servers = slices.Insert(slices.Clone(b.Servers), j, kept)
		out.Backends[k] = b
	}
	return &out
}

// maxMaskQuote bounds each line quoted in a TemplateChanged detail.
const maxMaskQuote = 120

// templateChanged compares the masked configuration files of the applied state with the ones of a
// runtime plan's Next (render.Renderer.Masks): a difference is a TemplateChanged reason naming the
// file and the first line that differs. Without applied masks (unknown) there is nothing to compare.
// Files that did not change keep their mask slice, which compares at once.
func templateChanged(applied, next map[string][]byte) (plan.Reason, bool) {
	if applied == nil {
		return plan.Reason{}, false
	}
	for _, p := range slices.Sorted(maps.Keys(next)) {
		if r, changed := maskChanged(p, applied[p], next[p]); changed {
			return r, true
		}
	}
	for _, p := range slices.Sorted(maps.Keys(applied)) {
		if _, ok := next[p]; !ok {
			if r, changed := maskChanged(p, applied[p], nil); changed {
				return r, true
			}
		}
	}
	return plan.Reason{}, false
}

// maskChanged compares the masks of one file (nil: the file is not there).
func maskChanged(file string, applied, next []byte) (plan.Reason, bool) {
	if bytes.Equal(applied, next) {
		return plan.Reason{}, false
	}
	a, n := bytes.Split(applied, []byte("\n")), bytes.Split(next, []byte("\n"))
	k := 0
	for k < len(a) && k < len(n) && bytes.Equal(a[k], n[k]) {
		k++
	}
	line := func(ls [][]byte) string {
		if k >= len(ls) {
			return "(end)"
		}
		s := string(bytes.TrimSpace(ls[k]))
		if len(s) > maxMaskQuote {
			s = s[:maxMaskQuote] + "…"
		}
		return fmt.Sprintf("%q", s)
	}
	return plan.Reason{
		Kind:    plan.TemplateChanged,
		Subject: file,
		Detail:  fmt.Sprintf("masked line %d: applied %s, now %s", k+1, line(a), line(n)),
	}, true
}
