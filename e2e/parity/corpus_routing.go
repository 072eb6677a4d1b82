package parity

// hostGroup: how the Host header (case, port, trailing dot) and the SNI pick a Route, and a Route
// whose host has upper-case letters.
func hostGroup() Group {
	plain := host("plain")
	return Group{
		Name: "host",
		Routes: []Route{
			route("plain", "a"),
			{Namespace: Namespace, Name: "upper", Host: "Upper.parity.test", To: Backend{Service: "b"}},
		},
		Requests: []Request{
			get("host/plain", plain, "/"),
			get("host/plain-upper", "PLAIN.Parity.TEST", "/"),
			get("host/plain-port-80", plain+":80", "/"),
			get("host/plain-port-other", plain+":8080", "/"),
			get("host/plain-dot", plain+".", "/"),
			get("host/plain-dot-port", plain+".:80", "/"),
			get("host/unknown", host("unknown"), "/"),
			noted(get("host/absolute-form", host("unknown"), "http://"+plain+"/abs"),
				"the request target names plain, the Host header another host"),
			noted(get("host/upper-route-lower", "upper.parity.test", "/"), "a Route whose spec.host has upper-case letters"),
			get("host/upper-route-exact", "Upper.parity.test", "/"),
			noted(gets("host/https-plain", plain, "/"), "HTTPS to a Route without TLS"),
			gets("host/https-unknown", host("unknown"), "/"),
			{ID: "host/https-no-sni", HTTPS: true, Host: plain, SNI: NoSNI, Path: "/"},
		},
	}
}

// pathGroup: path prefixes and their boundaries (/api against /api/, /apix, /API, encodings).
func pathGroup() Group {
	paths, slash := host("paths"), host("paths-slash")
	p := func(name, path, svc string) Route {
		r := route(name, svc)
		r.Host, r.Path = paths, path
		return r
	}
	slashRoute := route("paths-slash", "c")
	slashRoute.Path = "/api/"
	g := Group{
		Name:   "path",
		Routes: []Route{p("paths-root", "", "b"), p("paths-api", "/api", "c"), p("paths-api-v1", "/api/v1", "d"), slashRoute},
	}
	for _, c := range []struct{ id, path string }{
		{"root", "/"}, {"api", "/api"}, {"api-slash", "/api/"}, {"apix", "/apix"}, {"api-sub", "/api/x"},
		{"api-v1", "/api/v1"}, {"api-v1-slash", "/api/v1/"}, {"api-v10", "/api/v10"}, {"api-upper", "/API"},
		{"api-query", "/api?x=1"}, {"api-encoded-slash", "/api%2Fv1"}, {"api-dotdot", "/api/../v1"},
		{"api-double-slash", "/api//v1"}, {"api-semicolon", "/api;v1"}, {"api-v1-query", "/api/v1?a=b&c"},
	} {
		g.Requests = append(g.Requests, get("path/"+c.id, paths, c.path))
	}
	for _, c := range []struct{ id, path string }{
		{"slash-api", "/api"}, {"slash-api-slash", "/api/"}, {"slash-apix", "/apix"}, {"slash-api-sub", "/api/x"},
		{"slash-root", "/"},
	} {
		g.Requests = append(g.Requests, get("path/"+c.id, slash, c.path))
	}
	return g
}

// tlsGroup: every termination with every insecure policy, over HTTP and HTTPS, certificates and SNI.
func tlsGroup() Group {
	defaultCert := route("edge-default", "a")
	defaultCert.TLS = &TLS{Termination: "edge"}
	chain := edge(route("edge-chain", "a"), "")
	chain.TLS.CAChain = true
	defaultCA := reencrypt(route("reencrypt-default-ca", "secure"), "")
	defaultCA.TLS.DestCA = false
	externalRoute := func(name string, granted bool) Route {
		r := route(name, "a")
		r.TLS = &TLS{Termination: "edge", External: name + "-cert"}
		r.Secret = &ExternalCertSecret{Name: name + "-cert", Host: host(name), Granted: granted}
		return r
	}
	routes := []Route{
		edge(route("edge-none", "a"), ""),
		edge(route("edge-allow", "a"), "Allow"),
		edge(route("edge-redirect", "a"), "Redirect"),
		defaultCert, chain, externalRoute("edge-external", true), externalRoute("edge-external-denied", false),
		reencrypt(route("reencrypt-none", "secure"), ""),
		reencrypt(route("reencrypt-allow", "secure"), "Allow"),
		reencrypt(route("reencrypt-redirect", "secure"), "Redirect"),
		defaultCA,
		reencrypt(route("reencrypt-other-name", "secure-other"), ""),
		passthrough(route("passthrough-none", "pass"), ""),
		passthrough(route("passthrough-redirect", "pass"), "Redirect"),
	}
	g := Group{Name: "tls", Routes: routes}
	for _, r := range routes {
		g.Requests = append(g.Requests,
			get("tls/"+r.Name+"-http", r.Host, "/x?q=1"),
			gets("tls/"+r.Name+"-https", r.Host, "/x?q=1"))
	}
	g.Requests = append(g.Requests,
		noted(get("tls/edge-redirect-port-80", host("edge-redirect")+":80", "/x?q=1"), "the redirect's Location with the Host's port"),
		get("tls/edge-redirect-port-other", host("edge-redirect")+":8080", "/x"),
		get("tls/edge-redirect-upper", "EDGE-REDIRECT.parity.test", "/Up?Q=1"),
		get("tls/passthrough-redirect-port-80", host("passthrough-redirect")+":80", "/x"),
		gets("tls/edge-none-upper", "EDGE-NONE.parity.test", "/"),
		noted(Request{ID: "tls/edge-none-sni-other", HTTPS: true, Host: host("edge-none"), SNI: host("edge-allow"), Path: "/"},
			"SNI of one edge Route, Host of another"),
		noted(Request{ID: "tls/edge-none-sni-unknown", HTTPS: true, Host: host("edge-none"), SNI: host("unknown"), Path: "/"},
			"an unknown SNI: the default certificate, then the Host header picks the Route"),
		Request{ID: "tls/edge-none-no-sni", HTTPS: true, Host: host("edge-none"), SNI: NoSNI, Path: "/"},
		Request{ID: "tls/passthrough-no-sni", HTTPS: true, Host: host("passthrough-none"), SNI: NoSNI, Path: "/"},
	)
	for _, name := range []string{"edge-none", "edge-default", "reencrypt-none", "passthrough-none"} {
		g.Requests = append(g.Requests, noted(Request{ID: "tls/" + name + "-alpn", HTTPS: true, Host: host(name),
			ALPN: []string{"h2", "http/1.1"}, HandshakeOnly: true}, "the protocol agreed when the client offers h2"))
	}
	return g
}

// weightGroup: spec.to.weight and alternateBackends, by the pods that answer many requests.
func weightGroup() Group {
	wr := func(name string, to Backend, alts ...Backend) Route {
		r := route(name, to.Service)
		r.To, r.Alternates = to, alts
		return r
	}
	return Group{
		Name: "weight",
		Routes: []Route{
			wr("w-split", Backend{"b", weight(50)}, Backend{"c", weight(50)}),
			wr("w-main-zero", Backend{"b", weight(0)}, Backend{"c", weight(100)}),
			wr("w-all-zero", Backend{"b", weight(0)}),
			wr("w-all-zero-alt", Backend{"b", weight(0)}, Backend{"c", weight(0)}),
			wr("w-three", Backend{"b", nil}, Backend{"c", weight(100)}, Backend{"d", weight(100)}, Backend{"e", weight(0)}),
			wr("w-max", Backend{"c", weight(256)}),
			wr("w-empty-main", Backend{"empty", nil}, Backend{"c", weight(100)}),
			wr("w-two-pods", Backend{"two", nil}),
		},
		Requests: []Request{
			repeat(get("weight/split", host("w-split"), "/"), 20),
			repeat(get("weight/main-zero", host("w-main-zero"), "/"), 8),
			get("weight/all-zero", host("w-all-zero"), "/"),
			get("weight/all-zero-alt", host("w-all-zero-alt"), "/"),
			repeat(get("weight/three", host("w-three"), "/"), 30),
			repeat(get("weight/max", host("w-max"), "/"), 4),
			repeat(get("weight/empty-main", host("w-empty-main"), "/"), 8),
			repeat(get("weight/two-pods", host("w-two-pods"), "/"), 20),
		},
	}
}

// balanceGroup: haproxy.router.openshift.io/balance on a Service of two pods (no cookie is sent, so
// the algorithm picks every time): how many of the pods answer twenty requests from one client (source
// keeps it on one, which one depends on the servers' order and the HAProxy version).
func balanceGroup() Group {
	g := Group{Name: "balance"}
	for _, c := range []struct{ name, value string }{
		{"roundrobin", "roundrobin"}, {"leastconn", "leastconn"}, {"source", "source"}, {"random", "random"},
		{"bogus", "first"}, {"hostile", "roundrobin\nserver evil 192.0.2.1:80"},
	} {
		name := "balance-" + c.name
		g.Routes = append(g.Routes, annotated(route(name, "two"), "haproxy.router.openshift.io/balance", c.value))
		req := repeat(get("balance/"+c.name, host(name), "/"), 20)
		req.AnyPodOf = "two"
		g.Requests = append(g.Requests, req)
	}
	return g
}
