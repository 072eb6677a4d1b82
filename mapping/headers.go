package mapping

import (
	"fmt"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

// routeHeaders holds a Route's checked header actions (spec.httpHeaders.actions).
type routeHeaders struct {
	request, response []model.HeaderAction
}

// rules returns the backend's header rules for the Route's actions and the model.MapHeaderValues
// entries of the values the map carries.
func (h routeHeaders) rules(backend string) (req, res []model.HeaderRule, entries []model.MapEntry) {
	req, e1 := model.RouteHeaderRules(backend, false, h.request)
	res, e2 := model.RouteHeaderRules(backend, true, h.response)
	return req, res, append(e1, e2...)
}

// routeHTTPHeaders checks spec.httpHeaders.actions as OpenShift's API does (the Route CRD's rules and
// library-go's route validation), so that a Route the API server would refuse is rejected here too
// (a folder of manifests has no API server): at most 20 actions per list; each with a header name of
// 1-255 token characters, not Strict-Transport-Security, Proxy, Cookie or Set-Cookie, and not twice in
// one list; type Set with a value, or Delete without one; a value of 1-16384 bytes without control
// characters whose '%' only starts "%%" or a dynamic value of the fetches the list allows (req.hdr on
// requests, res.hdr on responses, ssl_c_der on both) and the converters lower and base64. Header
// actions on a passthrough Route are refused (HAProxy never sees its HTTP). The first failure is
// reported, naming the field and the rule.
func routeHTTPHeaders(r *routev1.Route, kind model.BackendKind) (routeHeaders, *rejection) {
	h := r.Spec.HTTPHeaders
	if h == nil || (len(h.Actions.Request) == 0 && len(h.Actions.Response) == 0) {
		return routeHeaders{}, nil
	}
	if kind == model.KindPassthrough {
		return routeHeaders{}, reject(ReasonInvalidRoute, "spec.httpHeaders.actions: header actions are not permitted when spec.tls.termination is passthrough")
	}
	req, rej := headerActions("spec.httpHeaders.actions.request", h.Actions.Request, false)
	if rej != nil {
		return routeHeaders{}, rej
	}
	res, rej := headerActions("spec.httpHeaders.actions.response", h.Actions.Response, true)
	if rej != nil {
		return routeHeaders{}, rej
	}
	return routeHeaders{request: req, response: res}, nil
}

// headerActions checks one list of header actions (field names it in messages).
func headerActions(field string, list []routev1.RouteHTTPHeader, response bool) ([]model.HeaderAction, *rejection) {
	if len(list) > model.MaxRouteHeaderActions {
		return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s: %d actions: at most %d are allowed", field, len(list), model.MaxRouteHeaderActions))
	}
	out := make([]model.HeaderAction, 0, len(list))
	seen := make(map[string]int, len(list))
	for i, h := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		if err := model.CheckRouteHeaderName(h.Name); err != nil {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s.name: %v", at, err))
		}
		if j, dup := seen[h.Name]; dup {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s.name %s: already the name of %s[%d]; each header may have one action", at, quoteShort(h.Name), field, j))
		}
		seen[h.Name] = i
		switch h.Action.Type {
		case routev1.Delete:
			if h.Action.Set != nil {
				return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s.action.set: forbidden when type is Delete", at))
			}
			out = append(out, model.HeaderAction{Action: model.HeaderDelete, Name: h.Name})
		case routev1.Set:
			if h.Action.Set == nil {
				return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s.action.set: required when type is Set", at))
			}
			if err := model.CheckRouteHeaderValue(h.Action.Set.Value, response); err != nil {
				return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s.action.set.value: %v", at, err))
			}
			out = append(out, model.HeaderAction{Action: model.HeaderSet, Name: h.Name, Value: h.Action.Set.Value})
		default:
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s.action.type %s: want Set or Delete", at, quoteShort(string(h.Action.Type))))
		}
	}
	return out, nil
}
