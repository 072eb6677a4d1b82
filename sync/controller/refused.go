package controller

import (
	"context"
	"errors"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/haproxy"
)

// Bounds of the Routes HAProxy refused.
const (
	// refusalTTL is how long a refused Route stays out while it does not change: then it is tried
	// again (a Secret it names, or HAProxy itself, may have changed).
	refusalTTL = 10 * time.Minute
	// maxRefusalRounds bounds the syncs one sync runs at once to leave out the Routes HAProxy named.
	maxRefusalRounds = 3
)

// errRefusedRoutes is returned by an update that HAProxy refused naming some Routes: the sync runs
// again at once without them.
var errRefusedRoutes = errors.New("HAProxy refused the configuration of some Routes; they are left out")

// refusal is a Route HAProxy refused, as it was then.
type refusal struct {
	route   *routev1.Route
	message string
	at      time.Time
}

// leaveOutRefused removes from routes those HAProxy refused that have not changed since (nor aged
// past refusalTTL), and returns the rest with a RefusedByHAProxy problem for each one left out. A
// refusal whose Route changed, went away or aged out is forgotten: the Route is tried again.
func (l *loop) leaveOutRefused(routes []*routev1.Route, now time.Time) ([]*routev1.Route, []mapping.Problem) {
	if len(l.refused) == 0 {
		return routes, nil
	}
	kept := make([]*routev1.Route, 0, len(routes))
	present := map[string]bool{}
	var problems []mapping.Problem
	for _, r := range routes {
		key := r.Namespace + "/" + r.Name
		present[key] = true
		ref, ok := l.refused[key]
		if ok && now.Sub(ref.at) < refusalTTL && sameRouteInput(ref.route, r) {
			problems = append(problems, refusedProblem(r, ref.message))
			continue
		}
		delete(l.refused, key)
		kept = append(kept, r)
	}
	for key := range l.refused {
		if !present[key] {
			delete(l.refused, key)
		}
	}
	return kept, problems
}

// recordRefused remembers the Routes an Outcome says HAProxy refused; it reports whether any of them
// is a Route of routes not already left out (so that a sync without them may succeed).
func (l *loop) recordRefused(out haproxy.Outcome, routes []*routev1.Route, now time.Time) bool {
	byKey := make(map[string]*routev1.Route, len(routes))
	for _, r := range routes {
		byKey[r.Namespace+"/"+r.Name] = r
	}
	added := false
	for _, f := range out.Refused {
		key := f.Namespace + "/" + f.Name
		r, ok := byKey[key]
		if !ok {
			continue
		}
		if _, known := l.refused[key]; known {
			continue
		}
		l.refused[key] = refusal{route: r.DeepCopy(), message: f.Message, at: now}
		l.c.log().Warn("route refused by HAProxy: left out, the others are served", "route", key, "haproxy", f.Message)
		added = true
	}
	return added
}

// sameRouteInput reports whether a Route is unchanged in what decides its configuration.
func sameRouteInput(a, b *routev1.Route) bool {
	return equality.Semantic.DeepEqual(a.Spec, b.Spec) && equality.Semantic.DeepEqual(a.Annotations, b.Annotations) &&
		equality.Semantic.DeepEqual(a.Labels, b.Labels)
}

// checker is the HAProxy side's `haproxy -c` on a desired state (haproxy.Instance.Check), used to find
// the Routes a refusal does not name.
type checker interface {
	Check(ctx context.Context, desired *model.Config) ([]haproxy.Refused, error)
}

// searchRefused runs when `haproxy -c` refused an update without naming a Route (HAProxy's message
// points at no Route's file or backend): it bisects the Routes that changed since the last accepted
// state, with the unchanged ones as the base HAProxy accepted, and records the ones it finds. It
// reports whether it found any. Without a binary to check with (a sidecar with --check-binary=none)
// it does nothing: the update's error stands, and the sync retries.
func (l *loop) searchRefused(ctx context.Context, rep *syncReport, err error) bool {
	if _, ok := haproxy.RefusalText(err); !ok {
		return false
	}
	ch, ok := l.c.HAProxy.(checker)
	if !ok {
		return false
	}
	var base, cands []*routev1.Route
	for _, r := range rep.kept {
		if a, ok := l.appliedRoutes[routeKey(r)]; ok && sameRouteInput(a, r) {
			base = append(base, r)
		} else {
			cands = append(cands, r)
		}
	}
	if len(cands) == 0 {
		return false
	}
	s := &refusalSearch{
		check: ch.Check,
		translate: func(routes []*routev1.Route, extra []mapping.Problem) (Desired, error) {
			in := rep.input
			in.Routes = routes
			return translateInput(in, nil, routes, extra, translateWith(l.c.Options))
		},
		log: l.c.log(),
	}
	found, serr := s.find(ctx, base, cands)
	if serr != nil && !errors.Is(serr, haproxy.ErrNoCheck) {
		l.c.log().Warn("searching the Routes HAProxy refused", "changed", len(cands), "checks", s.checks, "error", serr)
	}
	now := time.Now()
	for _, f := range found {
		key := routeKey(f.route)
		l.refused[key] = refusal{route: f.route.DeepCopy(), message: f.message, at: now}
		l.c.log().Warn("route refused by HAProxy (found by bisection): left out, the others are served", "route", key, "haproxy", f.message)
	}
	return len(found) > 0
}
