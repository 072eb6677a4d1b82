package controller

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/haproxy"
)

// maxSearchChecks bounds the `haproxy -c` runs of one search for refused Routes. A bisection finds
// one bad Route among n in about 2·log2(n) checks (20 at 1,000 Routes); several bad Routes cost that
// each.
const maxSearchChecks = 48

// maxRefusalMessage bounds the HAProxy text a refusal found by bisection carries.
const maxRefusalMessage = 400

// refused is a Route the search found refused, with HAProxy's words.
type refused struct {
	route   *routev1.Route
	message string
}

// refusalSearch finds the Routes whose configuration HAProxy refuses: it checks desired states made of
// sets of Routes (translate) with `haproxy -c` (check).
type refusalSearch struct {
	check     func(context.Context, *model.Config) ([]haproxy.Refused, error)
	translate func(routes []*routev1.Route, extra []mapping.Problem) (Desired, error)
	log       *slog.Logger
	checks    int
}

// try checks the Routes routes. ok: HAProxy accepts them; otherwise named are the Routes its message
// names and text is the message. err is anything else (no binary, a render error, ctx).
func (s *refusalSearch) try(ctx context.Context, routes []*routev1.Route) (ok bool, named []haproxy.Refused, text string, err error) {
	if s.checks >= maxSearchChecks {
		return false, nil, "", fmt.Errorf("no answer within %d configuration checks", maxSearchChecks)
	}
	s.checks++
	d, err := s.translate(routes, nil)
	if err != nil {
		return false, nil, "", err
	}
	named, err = s.check(ctx, d.Config)
	if err == nil {
		return true, nil, "", nil
	}
	text, isRefusal := haproxy.RefusalText(err)
	if !isRefusal {
		return false, nil, "", err
	}
	return false, named, text, nil
}

// find returns the Routes of cands that HAProxy refuses alongside base, which it must accept. It
// first leaves out the Routes HAProxy's message names, round by round; when a refusal names none, it
// bisects cands. A refusal of base alone (a router-wide setting, the template) is an error with
// HAProxy's message.
func (s *refusalSearch) find(ctx context.Context, base, cands []*routev1.Route) ([]refused, error) {
	var found []refused
	for {
		ok, named, text, err := s.try(ctx, join(base, cands))
		if err != nil {
			return found, err
		}
		if ok {
			return found, nil
		}
		byKey := keyed(cands)
		var hit []refused
		for _, n := range named {
			if r, in := byKey[n.Namespace+"/"+n.Name]; in {
				hit = append(hit, refused{route: r, message: n.Message})
			}
		}
		if len(hit) > 0 {
			found = append(found, hit...)
			cands = minus(cands, hit)
			continue
		}
		// HAProxy named no Route: is it one of cands at all?
		baseOK, _, baseText, err := s.try(ctx, base)
		if err != nil {
			return found, err
		}
		if !baseOK {
			return found, fmt.Errorf("HAProxy refuses the configuration without the %d Routes checked: %s", len(cands), firstAlert(baseText))
		}
		s.log.Info("HAProxy refused the configuration without naming a Route: bisecting", "routes", len(cands))
		bad, err := s.bisect(ctx, base, cands, text)
		return append(found, bad...), err
	}
}

// bisect returns the Routes of cands HAProxy refuses, given that base+cands is refused (with text)
// and base is accepted.
func (s *refusalSearch) bisect(ctx context.Context, base, cands []*routev1.Route, text string) ([]refused, error) {
	if len(cands) == 1 {
		return []refused{{route: cands[0], message: firstAlert(text)}}, nil
	}
	a, b := cands[:len(cands)/2], cands[len(cands)/2:]
	var bad []refused
	okA, _, textA, err := s.try(ctx, join(base, a))
	if err != nil {
		return nil, err
	}
	if !okA {
		if bad, err = s.bisect(ctx, base, a, textA); err != nil {
			return nil, err
		}
	}
	baseB := join(base, minus(a, bad))
	okB, _, textB, err := s.try(ctx, join(baseB, b))
	if err != nil {
		return nil, err
	}
	if okB {
		return bad, nil
	}
	badB, err := s.bisect(ctx, baseB, b, textB)
	return append(bad, badB...), err
}

// firstAlert returns HAProxy's first alert line of a refusal (or its first line), bounded.
func firstAlert(text string) string {
	first := ""
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if first == "" {
			first = line
		}
		if strings.Contains(line, "[ALERT]") {
			first = line
			break
		}
	}
	if len(first) > maxRefusalMessage {
		first = first[:maxRefusalMessage] + "…"
	}
	if first == "" {
		return "HAProxy refused the configuration without a message"
	}
	return first
}

// join returns a and b in one new slice.
func join(a, b []*routev1.Route) []*routev1.Route {
	out := make([]*routev1.Route, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// keyed indexes routes by "namespace/name".
func keyed(routes []*routev1.Route) map[string]*routev1.Route {
	m := make(map[string]*routev1.Route, len(routes))
	for _, r := range routes {
		m[routeKey(r)] = r
	}
	return m
}

// minus returns routes without those of out.
func minus(routes []*routev1.Route, out []refused) []*routev1.Route {
	gone := make(map[string]bool, len(out))
	for _, f := range out {
		gone[routeKey(f.route)] = true
	}
	kept := make([]*routev1.Route, 0, len(routes))
	for _, r := range routes {
		if !gone[routeKey(r)] {
			kept = append(kept, r)
		}
	}
	return kept
}
