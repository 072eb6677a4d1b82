package oracle

import (
	"fmt"
	"strings"

	routev1 "github.com/openshift/api/route/v1"
)

// HeaderAct is one header action of a Route (spec.httpHeaders.actions): Set Name to Value, or Delete
// Name when Value is "".
type HeaderAct struct{ Name, Value string }

// The header actions the walk uses. Their names start with testkit.HeaderPrefix, so the backends
// report what they received (testkit.HeaderSummary) and the answers compare what the client got;
// every request carries X-Hdr-Client and every backend answers X-Hdr-Origin, so that deleting,
// replacing and reading them leave a trace.
var (
	requestHeaderNames  = []string{"X-Hdr-A", "X-Hdr-B", "X-Hdr-Client"}
	responseHeaderNames = []string{"X-Hdr-A", "X-Hdr-B", "X-Hdr-Origin"}
	// headerLiterals are literal values (haroute_header_values.map carries them): spaces, quotes,
	// a backslash, '#', '$', ';', "%%" (one '%') and UTF-8.
	headerLiterals = []string{"one", "two  words", " lead and trail ", `quotes ' " \ # $ ;`, "100%% sure", "café ü", "x=1; y=2"}
)

// Dynamic values of each list (HAProxy evaluates them: the rule holds them, a change is a reload).
const (
	requestDynamic  = "%[req.hdr(X-Hdr-Client),lower]"
	responseDynamic = "%[res.hdr(X-Hdr-Origin),lower]"
)

// headerActions returns spec.httpHeaders for the Route's actions, nil for none.
func (r *Route) headerActions() *routev1.RouteHTTPHeaders {
	if len(r.RequestHeaders) == 0 && len(r.ResponseHeaders) == 0 {
		return nil
	}
	list := func(acts []HeaderAct) []routev1.RouteHTTPHeader {
		out := make([]routev1.RouteHTTPHeader, len(acts))
		for i, a := range acts {
			out[i] = routev1.RouteHTTPHeader{Name: a.Name, Action: routev1.RouteHTTPHeaderActionUnion{Type: routev1.Delete}}
			if a.Value != "" {
				out[i].Action = routev1.RouteHTTPHeaderActionUnion{Type: routev1.Set, Set: &routev1.RouteSetHTTPHeader{Value: a.Value}}
			}
		}
		return out
	}
	return &routev1.RouteHTTPHeaders{Actions: routev1.RouteHTTPHeaderActions{Request: list(r.RequestHeaders), Response: list(r.ResponseHeaders)}}
}

// describeHeaders summarises a Route's header actions for logs.
func describeHeaders(acts []HeaderAct) string {
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.Name + " delete"
		if a.Value != "" {
			out[i] = fmt.Sprintf("%s=%q", a.Name, a.Value)
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// headers changes the header actions of a Route that is not passthrough, mostly one that has some:
// most steps change a literal value (a map entry at runtime); the others add the first actions, turn
// an action into another kind (literal, dynamic, delete), add or remove one, or remove them all
// (reloads, HeaderActionsChanged).
func (wk *Walker) headers() (Mutation, bool) {
	rs := wk.routes(func(r *Route) bool { return wk.unstable(r) && r.Kind != KindPassthrough })
	if len(rs) == 0 {
		return Mutation{}, false
	}
	r := pick(wk.rng, rs)
	var with []*Route
	for _, x := range rs {
		if len(x.RequestHeaders)+len(x.ResponseHeaders) > 0 {
			with = append(with, x)
		}
	}
	if len(with) > 0 && wk.rng.IntN(4) != 0 {
		r = pick(wk.rng, with)
	}
	m := Mutation{Kind: MutHeaders, Route: r.Key()}
	if len(r.RequestHeaders)+len(r.ResponseHeaders) == 0 {
		for n := 1 + wk.rng.IntN(3); n > 0; n-- {
			wk.addHeaderAct(r)
		}
		m.Detail = "actions added: request " + describeHeaders(r.RequestHeaders) + ", response " + describeHeaders(r.ResponseHeaders)
		return m, true
	}
	acts, names, dynamic, list := &r.RequestHeaders, requestHeaderNames, requestDynamic, "request"
	if len(r.RequestHeaders) == 0 || (len(r.ResponseHeaders) > 0 && wk.rng.IntN(2) == 0) {
		acts, names, dynamic, list = &r.ResponseHeaders, responseHeaderNames, responseDynamic, "response"
	}
	var literal []int
	for i, a := range *acts {
		if a.Value != "" && a.Value != dynamic {
			literal = append(literal, i)
		}
	}
	switch n := wk.rng.IntN(10); {
	case n < 6 && len(literal) > 0:
		i := pick(wk.rng, literal)
		old := (*acts)[i].Value
		for (*acts)[i].Value == old {
			(*acts)[i].Value = pick(wk.rng, headerLiterals)
		}
		m.Detail = fmt.Sprintf("%s %s: %q → %q", list, (*acts)[i].Name, old, (*acts)[i].Value)
	case n < 8:
		i := wk.rng.IntN(len(*acts))
		a := &(*acts)[i]
		old := a.Value
		switch a.Value {
		case "":
			a.Value = pick(wk.rng, headerLiterals)
		case dynamic:
			a.Value = ""
		default:
			a.Value = dynamic
		}
		m.Detail = fmt.Sprintf("%s %s: %q → %q", list, a.Name, old, a.Value)
	case n < 9 && len(*acts) < len(names):
		wk.addHeaderAct(r)
		m.Detail = "action added: request " + describeHeaders(r.RequestHeaders) + ", response " + describeHeaders(r.ResponseHeaders)
	case n < 9:
		i := wk.rng.IntN(len(*acts))
		m.Detail = fmt.Sprintf("%s %s removed", list, (*acts)[i].Name)
		*acts = append((*acts)[:i:i], (*acts)[i+1:]...)
	default:
		r.RequestHeaders, r.ResponseHeaders = nil, nil
		m.Detail = "every action removed"
	}
	return m, true
}

// addHeaderAct adds an action on a name the Route's list does not use yet (nothing when both lists
// use every name): a literal Set, a dynamic Set or a Delete.
func (wk *Walker) addHeaderAct(r *Route) {
	acts, names, dynamic := &r.RequestHeaders, requestHeaderNames, requestDynamic
	if wk.rng.IntN(2) == 0 {
		acts, names, dynamic = &r.ResponseHeaders, responseHeaderNames, responseDynamic
	}
	var free []string
	for _, n := range names {
		used := false
		for _, a := range *acts {
			used = used || a.Name == n
		}
		if !used {
			free = append(free, n)
		}
	}
	if len(free) == 0 {
		return
	}
	a := HeaderAct{Name: pick(wk.rng, free)}
	switch x := wk.rng.IntN(6); {
	case x < 4:
		a.Value = pick(wk.rng, headerLiterals)
	case x < 5:
		a.Value = dynamic
	}
	*acts = append(*acts, a)
}
