package parity

// spoofed are forwarding headers a client sends itself, which a router appends to, replaces or keeps.
var spoofed = []string{
	"X-Forwarded-For", "203.0.113.7",
	"X-Forwarded-Host", "spoofed.example",
	"X-Forwarded-Port", "1234",
	"X-Forwarded-Proto", "https",
	"Forwarded", "for=203.0.113.7;proto=https",
}

// forgedTLS are the client-certificate headers a router sets itself for mutual TLS; a client that
// sends them pretends to have presented a certificate. Proxy is the httpoxy header.
var forgedTLS = []string{
	"X-SSL", "forged", "X-SSL-Client-CN", "forged", "X-SSL-Client-DER", "Zm9yZ2Vk", "X-SSL-Client-DN", "CN=forged",
	"X-SSL-Client-NotAfter", "forged", "X-SSL-Client-NotBefore", "forged", "X-SSL-Client-SHA1", "forged",
	"X-SSL-Client-Serial", "forged", "X-SSL-Client-Subject", "forged", "X-SSL-Client-Verify", "0",
	"X-SSL-Client-Version", "forged", "X-SSL-Issuer", "forged", "X-SSL-Client-Cert", "forged", "Proxy", "http://192.0.2.1:3128",
}

// forwardedGroup: the forwarding headers a pod receives under each set-forwarded-headers policy,
// with and without the client's own, over HTTP and HTTPS; client-sent client-certificate headers.
func forwardedGroup() Group {
	const ann = "haproxy.router.openshift.io/set-forwarded-headers"
	g := Group{Name: "forwarded"}
	for _, c := range []struct{ name, value string }{
		{"default", ""}, {"append", "append"}, {"replace", "replace"}, {"if-none", "if-none"}, {"never", "never"},
		{"bogus", "sometimes"}, {"hostile", "append\nhttp-request set-header X-Injected yes"},
	} {
		name := "fwd-" + c.name
		r := route(name, "a")
		if c.value != "" {
			r = annotated(r, ann, c.value)
		}
		g.Routes = append(g.Routes, r)
		g.Requests = append(g.Requests,
			get("forwarded/"+c.name, host(name), "/"),
			withHeader(get("forwarded/"+c.name+"-spoofed", host(name), "/"), spoofed...))
	}
	g.Routes = append(g.Routes, edge(route("fwd-edge", "a"), "Allow"), reencrypt(route("fwd-reencrypt", "secure"), ""))
	g.Requests = append(g.Requests,
		gets("forwarded/edge-https", host("fwd-edge"), "/"),
		withHeader(gets("forwarded/edge-https-spoofed", host("fwd-edge"), "/"), spoofed...),
		get("forwarded/edge-http", host("fwd-edge"), "/"),
		gets("forwarded/reencrypt", host("fwd-reencrypt"), "/"),
		from(get("forwarded/default-from-other", host("fwd-default"), "/"), "127.0.0.2"),
		get("forwarded/default-upper-host", "FWD-DEFAULT.parity.test", "/"),
		get("forwarded/default-host-port", host("fwd-default")+":80", "/"),
		noted(withHeader(get("forwarded/forged-tls-http", host("fwd-default"), "/"), forgedTLS...),
			"client-sent client-certificate headers over plain HTTP"),
		noted(withHeader(gets("forwarded/forged-tls-edge", host("fwd-edge"), "/"), forgedTLS...),
			"client-sent client-certificate headers on an edge Route, without a client certificate"),
		withHeader(gets("forwarded/forged-tls-reencrypt", host("fwd-reencrypt"), "/"), forgedTLS...),
	)
	return g
}

// actionsGroup: spec.httpHeaders.actions, request and response, with the dynamic values the API
// allows and values that need quoting.
func actionsGroup() Group {
	set := func(name, value string) HeaderAction { return HeaderAction{Name: name, Value: value} }
	del := func(name string) HeaderAction { return HeaderAction{Name: name, Delete: true} }
	withActions := func(r Route, req, resp []HeaderAction) Route {
		r.Headers = &HeaderActions{Request: req, Response: resp}
		return r
	}
	return Group{
		Name: "actions",
		Routes: []Route{
			withActions(route("hdr-set", "a"),
				[]HeaderAction{set("X-Parity-Static", "static value"), set("X-Parity-Host", "%[req.hdr(Host),lower]"), del("X-Remove-Me")},
				[]HeaderAction{set("X-Frame-Options", "DENY"), set("Cache-Control", "no-store"), del("X-Backend")}),
			withActions(route("hdr-quote", "a"),
				[]HeaderAction{set("X-Quoted", `it's "quoted" \ slashed`), set("X-Percent", "100%% sure")},
				[]HeaderAction{set("X-Quoted", `a'b"c`)}),
			withActions(route("hdr-forwarded", "a"),
				[]HeaderAction{set("X-Forwarded-For", "static"), del("Forwarded"), set("Host", "rewritten.parity.test")}, nil),
			withActions(edge(route("hdr-edge", "a"), ""),
				[]HeaderAction{set("X-Client-Der", "%{+Q}[ssl_c_der,base64]"), set("X-Sni-Host", "%[req.hdr(Host)]")},
				[]HeaderAction{set("X-Edge", "1")}),
			withActions(route("hdr-echo-set", "a"), nil,
				[]HeaderAction{set("X-Set-By-Pod", "router"), del("X-Deleted-By-Router")}),
		},
		Requests: []Request{
			withHeader(get("actions/set", host("hdr-set"), "/"), "X-Remove-Me", "1", "X-Parity-Static", "client"),
			get("actions/set-upper-host", "HDR-SET.parity.test", "/"),
			get("actions/quote", host("hdr-quote"), "/"),
			withHeader(get("actions/forwarded", host("hdr-forwarded"), "/"), spoofed...),
			gets("actions/edge", host("hdr-edge"), "/"),
			noted(get("actions/pod-response-headers",
				host("hdr-echo-set"), "/?_echo_set=X-Set-By-Pod:pod&_echo_set=X-Deleted-By-Router:pod"),
				"response headers the pod sets, replaced and deleted by the Route's actions"),
		},
	}
}
