package mapping

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/routetest"
)

var (
	setHeader    = routetest.SetHeader
	deleteHeader = routetest.DeleteHeader
	withHeaders  = routetest.Headers
)

// headerRoute is an edge Route with the given header actions.
func headerRoute(request, response []routev1.RouteHTTPHeader) *routev1.Route {
	return newRoute("ns", "r", "www.example.com", 0, withTLS(routev1.TLSTerminationEdge, ""), withHeaders(request, response))
}

// TestRouteHeaderActions: admitted actions become the backend's rules in list order; a literal value
// goes to haroute_header_values.map under "<backend>/req|res/<index>" (URL-encoded, "%%" as one
// '%'), a dynamic or over-long one stays in its rule.
func TestRouteHeaderActions(t *testing.T) {
	long := strings.Repeat("v", model.MaxMappedHeaderValue+1)
	r := headerRoute(
		[]routev1.RouteHTTPHeader{setHeader("X-Literal", "a b;c'%%d"), deleteHeader("X-Gone"), setHeader("X-Host", "%[req.hdr(Host),lower]"), setHeader("X-Long", long)},
		[]routev1.RouteHTTPHeader{setHeader("X-Frame-Options", "DENY"), deleteHeader("Server"), setHeader("X-Der", "%{+Q}[ssl_c_der,base64]")},
	)
	cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
	if len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	b := cfg.Backend("be_edge_http:ns:r")
	wantReq := []model.HeaderRule{
		{Action: model.HeaderSet, Name: "X-Literal", Key: "be_edge_http:ns:r/req/0"},
		{Action: model.HeaderDelete, Name: "X-Gone"},
		{Action: model.HeaderSet, Name: "X-Host", Value: "%[req.hdr(Host),lower]"},
		{Action: model.HeaderSet, Name: "X-Long", Value: long},
	}
	wantRes := []model.HeaderRule{
		{Action: model.HeaderSet, Name: "X-Frame-Options", Key: "be_edge_http:ns:r/res/0"},
		{Action: model.HeaderDelete, Name: "Server"},
		{Action: model.HeaderSet, Name: "X-Der", Value: "%{+Q}[ssl_c_der,base64]"},
	}
	if !reflect.DeepEqual(b.RequestHeaders, wantReq) || !reflect.DeepEqual(b.ResponseHeaders, wantRes) {
		t.Fatalf("rules\n  %+v\n  %+v\nwant\n  %+v\n  %+v", b.RequestHeaders, b.ResponseHeaders, wantReq, wantRes)
	}
	wantMap := []model.MapEntry{
		{Key: "be_edge_http:ns:r/req/0", Value: "a%20b%3Bc%27%25d"},
		{Key: "be_edge_http:ns:r/res/0", Value: "DENY"},
	}
	if got := cfg.Map(model.MapHeaderValues).Entries; !reflect.DeepEqual(got, wantMap) {
		t.Fatalf("map entries %+v, want %+v", got, wantMap)
	}
	if v, err := model.DecodeMappedHeaderValue(wantMap[0].Value); err != nil || v != "a b;c'%d" {
		t.Fatalf("decoded %q, %v", v, err)
	}
}

// TestRouteHeaderActionsAtTheLimits: what the Route API accepts at its bounds is admitted.
func TestRouteHeaderActionsAtTheLimits(t *testing.T) {
	twenty := make([]routev1.RouteHTTPHeader, model.MaxRouteHeaderActions)
	for i := range twenty {
		twenty[i] = setHeader(fmt.Sprintf("X-%d", i), "v")
	}
	for _, tc := range []struct {
		name               string
		request, response  []routev1.RouteHTTPHeader
		termination        routev1.TLSTerminationType
		emptyOnPassthrough bool
	}{
		{name: "20 actions each", request: twenty, response: twenty},
		{name: "a 255-byte name", request: []routev1.RouteHTTPHeader{deleteHeader(strings.Repeat("n", 255))}},
		{name: "every token character", request: []routev1.RouteHTTPHeader{setHeader("!#$%&'*+-.^_`|~09azAZ", "v")}},
		{name: "a 16384-byte value", response: []routev1.RouteHTTPHeader{setHeader("X-Big", strings.Repeat("v", 16384))}},
		{name: "UTF-8, quotes, backslash, %%", request: []routev1.RouteHTTPHeader{setHeader("X-Text", `café "q" 'q' \n 100%% ${HOME} #`)}},
		{name: "flags and converters", request: []routev1.RouteHTTPHeader{setHeader("X-Dyn", "%{+Q,-X}[req.hdr(X-A),lower,base64] %[ssl_c_der]")}},
		{name: "res.hdr on a response", response: []routev1.RouteHTTPHeader{setHeader("X-Up", "%[res.hdr(Server)]")}},
		{name: "case-different names", request: []routev1.RouteHTTPHeader{deleteHeader("X-A"), deleteHeader("x-a")}},
		{name: "plain HTTP", request: []routev1.RouteHTTPHeader{deleteHeader("X-A")}, termination: "-"},
		{name: "reencrypt", request: []routev1.RouteHTTPHeader{deleteHeader("X-A")}, termination: routev1.TLSTerminationReencrypt},
		{name: "empty httpHeaders on passthrough", termination: routev1.TLSTerminationPassthrough, emptyOnPassthrough: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := headerRoute(tc.request, tc.response)
			switch tc.termination {
			case "-":
				r.Spec.TLS = nil
			case "":
			default:
				r.Spec.TLS.Termination = tc.termination
			}
			if tc.emptyOnPassthrough {
				r.Spec.HTTPHeaders = &routev1.RouteHTTPHeaders{}
			}
			opts := testOptions()
			opts.DefaultDestinationCAFile = "/ca.pem"
			cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, opts)
			if len(problems) != 0 || len(cfg.Routes) != 1 {
				t.Fatalf("problems %v, admitted %v", problems, cfg.Routes)
			}
			b := cfg.Backends[0]
			if len(b.RequestHeaders) != len(tc.request) || len(b.ResponseHeaders) != len(tc.response) {
				t.Fatalf("%d request and %d response rules, want %d and %d", len(b.RequestHeaders), len(b.ResponseHeaders), len(tc.request), len(tc.response))
			}
		})
	}
}

// TestRouteHeaderActionsRejected: every rule of the Route API's validation rejects the Route with
// InvalidRoute, naming the field (with the index of the action) and the rule.
func TestRouteHeaderActionsRejected(t *testing.T) {
	type lists struct{ request, response []routev1.RouteHTTPHeader }
	req := func(hs ...routev1.RouteHTTPHeader) lists { return lists{request: hs} }
	res := func(hs ...routev1.RouteHTTPHeader) lists { return lists{response: hs} }
	tooMany := make([]routev1.RouteHTTPHeader, model.MaxRouteHeaderActions+1)
	for i := range tooMany {
		tooMany[i] = deleteHeader(fmt.Sprintf("X-%d", i))
	}
	ok := deleteHeader("X-Ok")
	tests := []struct {
		name    string
		actions lists
		want    string // the start of the message
	}{
		{"Strict-Transport-Security on a response", res(setHeader("Strict-Transport-Security", "max-age=1")), "spec.httpHeaders.actions.response[0].name: header name \"Strict-Transport-Security\": reserved"},
		{"strict-transport-security deleted on a request", req(deleteHeader("strict-transport-security")), "spec.httpHeaders.actions.request[0].name: header name \"strict-transport-security\": reserved"},
		{"Content-Length on a request", req(setHeader("Content-Length", "5")), "spec.httpHeaders.actions.request[0].name: header name \"Content-Length\": header actions may not modify the message framing"},
		{"Transfer-Encoding deleted on a response", res(deleteHeader("transfer-encoding")), "spec.httpHeaders.actions.response[0].name: header name \"transfer-encoding\": header actions may not modify the message framing"},
		{"Proxy on a request", req(ok, setHeader("Proxy", "x")), "spec.httpHeaders.actions.request[1].name: header name \"Proxy\": reserved"},
		{"PROXY on a response", res(deleteHeader("PROXY")), "spec.httpHeaders.actions.response[0].name: header name \"PROXY\": reserved"},
		{"Cookie on a request", req(setHeader("Cookie", "a=b")), "spec.httpHeaders.actions.request[0].name: header name \"Cookie\": reserved"},
		{"cookie on a response", res(deleteHeader("cookie")), "spec.httpHeaders.actions.response[0].name: header name \"cookie\": reserved"},
		{"Set-Cookie on a response", res(setHeader("Set-Cookie", "a=b")), "spec.httpHeaders.actions.response[0].name: header name \"Set-Cookie\": reserved"},
		{"SET-COOKIE on a request", req(deleteHeader("SET-COOKIE")), "spec.httpHeaders.actions.request[0].name: header name \"SET-COOKIE\": reserved"},
		{"an empty name", req(deleteHeader("")), "spec.httpHeaders.actions.request[0].name: header name of 0 bytes"},
		{"a 256-byte name", req(deleteHeader(strings.Repeat("n", 256))), "spec.httpHeaders.actions.request[0].name: header name of 256 bytes"},
		{"a space in a name", req(deleteHeader("X A")), "spec.httpHeaders.actions.request[0].name: header name \"X A\": want an HTTP token"},
		{"a colon in a name", res(deleteHeader("X:A")), "spec.httpHeaders.actions.response[0].name: header name \"X:A\": want an HTTP token"},
		{"a line break in a name", req(setHeader("X-A\nX-B", "v")), "spec.httpHeaders.actions.request[0].name: header name \"X-A\\nX-B\": want an HTTP token"},
		{"a non-ASCII name", req(deleteHeader("X-é")), "spec.httpHeaders.actions.request[0].name: header name \"X-é\": want an HTTP token"},
		{"a name twice", req(deleteHeader("X-A"), ok, setHeader("X-A", "v")), "spec.httpHeaders.actions.request[2].name \"X-A\": already the name of spec.httpHeaders.actions.request[0]"},
		{"an unknown type", req(routev1.RouteHTTPHeader{Name: "X-A", Action: routev1.RouteHTTPHeaderActionUnion{Type: "Append"}}), "spec.httpHeaders.actions.request[0].action.type \"Append\": want Set or Delete"},
		{"Set without set", res(routev1.RouteHTTPHeader{Name: "X-A", Action: routev1.RouteHTTPHeaderActionUnion{Type: routev1.Set}}), "spec.httpHeaders.actions.response[0].action.set: required when type is Set"},
		{"Delete with set", req(routev1.RouteHTTPHeader{Name: "X-A", Action: routev1.RouteHTTPHeaderActionUnion{Type: routev1.Delete, Set: &routev1.RouteSetHTTPHeader{Value: "v"}}}), "spec.httpHeaders.actions.request[0].action.set: forbidden when type is Delete"},
		{"an empty value", req(setHeader("X-A", "")), "spec.httpHeaders.actions.request[0].action.set.value: header value of 0 bytes: want 1-16384"},
		{"a value of 16385 bytes", res(setHeader("X-A", strings.Repeat("v", 16385))), "spec.httpHeaders.actions.response[0].action.set.value: header value of 16385 bytes: want 1-16384"},
		{"a line break in a value", req(setHeader("X-A", "a\r\nX-Injected: 1")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"a\\r\\nX-Injected: 1\": contains a control character"},
		{"a tab in a value", req(setHeader("X-A", "a\tb")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"a\\tb\": contains a control character"},
		{"DEL in a value", res(setHeader("X-A", "a\x7f")), "spec.httpHeaders.actions.response[0].action.set.value: header value \"a\\x7f\": contains a control character"},
		{"a lone percent", req(setHeader("X-A", "100%")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"100%\": '%' must start %% or a dynamic value"},
		{"an environment variable", req(setHeader("X-A", "%[env(HOME)]")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"%[env(HOME)]\": dynamic value %[env(HOME)]: only the fetches req.hdr(<name>), ssl_c_der are allowed"},
		{"the source address", req(setHeader("X-A", "%[src]")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"%[src]\": dynamic value %[src]: only the fetches req.hdr(<name>), ssl_c_der"},
		{"res.hdr on a request", req(setHeader("X-A", "%[res.hdr(Server)]")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"%[res.hdr(Server)]\": dynamic value %[res.hdr(Server)]: only the fetches req.hdr(<name>), ssl_c_der"},
		{"req.hdr on a response", res(setHeader("X-A", "%[req.hdr(Host)]")), "spec.httpHeaders.actions.response[0].action.set.value: header value \"%[req.hdr(Host)]\": dynamic value %[req.hdr(Host)]: only the fetches res.hdr(<name>), ssl_c_der"},
		{"a header name with a comma", req(setHeader("X-A", "%[req.hdr(a,1)]")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"%[req.hdr(a,1)]\": dynamic value %[req.hdr(a,1)]: want req.hdr(<name>)"},
		{"another converter", req(setHeader("X-A", "%[req.hdr(Host),upper]")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"%[req.hdr(Host),upper]\": dynamic value %[req.hdr(Host),upper]: only the converters lower and base64"},
		{"an unterminated expression", req(setHeader("X-A", "%[req.hdr(Host)")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"%[req.hdr(Host)\": unterminated %[...]"},
		{"an unknown flag", req(setHeader("X-A", "%{+M}[ssl_c_der]")), "spec.httpHeaders.actions.request[0].action.set.value: header value \"%{+M}[ssl_c_der]\": unknown log-format flag \"+M\""},
		{"21 request actions", req(tooMany...), "spec.httpHeaders.actions.request: 21 actions: at most 20 are allowed"},
		{"21 response actions", res(tooMany...), "spec.httpHeaders.actions.response: 21 actions: at most 20 are allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := headerRoute(tc.actions.request, tc.actions.response)
			cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
			if len(cfg.Routes) != 0 || len(problems) != 1 {
				t.Fatalf("admitted %v, problems %v; want the Route rejected", cfg.Routes, problems)
			}
			if p := problems[0]; p.Warning || p.Reason != ReasonInvalidRoute || !strings.HasPrefix(p.Message, tc.want) {
				t.Fatalf("got %s\nwant InvalidRoute %q...", p, tc.want)
			}
			if got := cfg.Map(model.MapHeaderValues).Entries; len(got) != 0 {
				t.Fatalf("header values of a rejected Route: %v", got)
			}
		})
	}
}

// TestRouteHeaderActionsOnPassthrough: a passthrough Route with header actions is rejected, as the
// Route API refuses it (HAProxy never sees the Route's HTTP).
func TestRouteHeaderActionsOnPassthrough(t *testing.T) {
	r := headerRoute(nil, []routev1.RouteHTTPHeader{setHeader("X-Frame-Options", "DENY")})
	r.Spec.TLS.Termination = routev1.TLSTerminationPassthrough
	cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
	if len(cfg.Routes) != 0 || len(problems) != 1 || problems[0].Reason != ReasonInvalidRoute ||
		problems[0].Message != "spec.httpHeaders.actions: header actions are not permitted when spec.tls.termination is passthrough" {
		t.Fatalf("admitted %v, problems %v", cfg.Routes, problems)
	}
}
