package parity

// annotationGroup: the annotations whose effect is not a header or a pod of their own (timeouts,
// health checks, connection limits, header-name case, DCM pool size) — valid, invalid and hostile
// values, where a router must keep serving the Route or reject it alone — and hsts_header.
func annotationGroup() Group {
	const hsts = "haproxy.router.openshift.io/hsts_header"
	g := Group{Name: "annotations"}
	for _, c := range []struct{ name, key, value, svc string }{
		{"timeout", "haproxy.router.openshift.io/timeout", "5s", "a"},
		{"timeout-bogus", "haproxy.router.openshift.io/timeout", "five seconds", "a"},
		{"timeout-hostile", "haproxy.router.openshift.io/timeout", "5s\n  timeout client 1ms", "a"},
		{"timeout-tunnel", "haproxy.router.openshift.io/timeout-tunnel", "1h", "a"},
		{"timeout-tunnel-bogus", "haproxy.router.openshift.io/timeout-tunnel", "-1", "a"},
		{"pod-conns", "haproxy.router.openshift.io/pod-concurrent-connections", "5", "a"},
		{"pod-conns-zero", "haproxy.router.openshift.io/pod-concurrent-connections", "0", "a"},
		{"pod-conns-bogus", "haproxy.router.openshift.io/pod-concurrent-connections", "many", "a"},
		{"check-interval", "router.openshift.io/haproxy.health.check.interval", "2s", "two"},
		{"check-interval-bogus", "router.openshift.io/haproxy.health.check.interval", "often", "two"},
		{"check-interval-hostile", "router.openshift.io/haproxy.health.check.interval", "2s maxconn 1", "two"},
		{"h1-adjust-case", "haproxy.router.openshift.io/h1-adjust-case", "true", "a"},
		{"h1-adjust-case-bogus", "haproxy.router.openshift.io/h1-adjust-case", "sure", "a"},
		{"pool-size", "router.openshift.io/pool-size", "3", "a"},
		{"hsts-plain", hsts, "max-age=31536000", "a"},
	} {
		name := "ann-" + c.name
		g.Routes = append(g.Routes, annotated(route(name, c.svc), c.key, c.value))
		req := get("annotations/"+c.name, host(name), "/")
		if c.svc == "two" {
			req.AnyPodOf = c.svc
		}
		g.Requests = append(g.Requests, req)
	}
	g.Routes = append(g.Routes,
		annotated(passthrough(route("ann-timeout-passthrough", "pass"), ""), "haproxy.router.openshift.io/timeout", "2s"))
	g.Requests = append(g.Requests, gets("annotations/timeout-passthrough", host("ann-timeout-passthrough"), "/"))
	for _, c := range []struct{ name, value string }{
		{"full", "max-age=31536000;includeSubDomains;preload"},
		{"spaced", "max-age = 31536000 ; includeSubDomains"},
		{"zero", "max-age=0"},
		{"quoted", `max-age="100"`},
		{"upper", "MAX-AGE=100;INCLUDESUBDOMAINS"},
		{"order", "preload;max-age=100"},
		{"missing-age", "includeSubDomains"},
		{"bogus", "max-age=abc"},
		{"hostile", "max-age=1\nhttp-response set-header X-Injected yes"},
	} {
		name := "hsts-" + c.name
		g.Routes = append(g.Routes, annotated(edge(route(name, "a"), "Allow"), hsts, c.value))
		g.Requests = append(g.Requests,
			gets("annotations/"+name, host(name), "/"),
			get("annotations/"+name+"-http", host(name), "/"))
	}
	g.Routes = append(g.Routes,
		annotated(reencrypt(route("hsts-reencrypt", "secure"), ""), hsts, "max-age=100"),
		annotated(passthrough(route("hsts-passthrough", "pass"), ""), hsts, "max-age=100"))
	g.Requests = append(g.Requests,
		gets("annotations/hsts-reencrypt", host("hsts-reencrypt"), "/"),
		gets("annotations/hsts-passthrough", host("hsts-passthrough"), "/"))
	return g
}

// rewriteGroup: rewrite-target against a Route's path, the path boundaries and the query.
func rewriteGroup() Group {
	const ann = "haproxy.router.openshift.io/rewrite-target"
	rw := func(name, path, target string) Route {
		r := annotated(route(name, "a"), ann, target)
		r.Path = path
		return r
	}
	g := Group{
		Name: "rewrite",
		Routes: []Route{
			rw("rw-root", "/app", "/"),
			rw("rw-sub", "/app", "/new/"),
			rw("rw-nosep", "/app", "/new"),
			rw("rw-slash-path", "/app/", "/"),
			rw("rw-quote", "/app", "/it's"),
			rw("rw-hostile", "/app", "/x' '/y"),
			rw("rw-backref", "/app", `/x/\1`),
			rw("rw-no-path", "", "/prefix"),
		},
	}
	for _, name := range []string{"rw-root", "rw-sub", "rw-nosep", "rw-slash-path", "rw-quote", "rw-hostile", "rw-backref"} {
		for _, c := range []struct{ id, path string }{
			{"app", "/app"}, {"app-slash", "/app/"}, {"app-sub", "/app/x/y"}, {"app-query", "/app/x?q=1"}, {"appx", "/appx"},
		} {
			g.Requests = append(g.Requests, get("rewrite/"+name[len("rw-"):]+"-"+c.id, host(name), c.path))
		}
	}
	g.Requests = append(g.Requests, get("rewrite/no-path-root", host("rw-no-path"), "/"), get("rewrite/no-path-sub", host("rw-no-path"), "/a/b"))
	return g
}

// fieldGroup: Route spec fields: targetPort by name and number, spec.subdomain, wildcard Routes,
// host claims across namespaces, an idled Service and one without endpoints.
func fieldGroup() Group {
	port := func(name string, tp *TargetPort) Route {
		r := route(name, "a")
		r.TargetPort = tp
		return r
	}
	sub := Route{Namespace: Namespace, Name: "subdomain", Subdomain: "sub", To: Backend{Service: "a"}}
	wild := route("wildcard", "b")
	wild.Host, wild.Wildcard = "star.wild.parity.test", true
	exact := route("wildcard-exact", "c")
	exact.Host = "exact.wild.parity.test"
	claimed := route("claimed", "a")
	other := Route{Namespace: OtherNamespace, Name: "claimed", Host: host("claimed"), Path: "/other", To: Backend{Service: "b2"}}
	otherHost := Route{Namespace: OtherNamespace, Name: "claimed-same", Host: host("claimed"), To: Backend{Service: "b2"}}
	return Group{
		Name: "fields",
		Routes: []Route{
			port("port-name", &TargetPort{Name: PortName}),
			port("port-number", &TargetPort{Number: PodPort}),
			port("port-service-number", &TargetPort{Number: ServicePort}),
			port("port-missing", &TargetPort{None: true}),
			port("port-bad-name", &TargetPort{Name: "nope"}),
			port("port-bad-number", &TargetPort{Number: 9999}),
			sub, wild, exact, claimed, other, otherHost,
			route("idled", "idled"),
			route("empty", "empty"),
		},
		Requests: []Request{
			get("fields/port-name", host("port-name"), "/"),
			get("fields/port-number", host("port-number"), "/"),
			noted(get("fields/port-service-number", host("port-service-number"), "/"), "targetPort is the Service's port number, not the endpoints'"),
			get("fields/port-missing", host("port-missing"), "/"),
			get("fields/port-bad-name", host("port-bad-name"), "/"),
			get("fields/port-bad-number", host("port-bad-number"), "/"),
			noted(get("fields/subdomain", "sub.apps.parity.test", "/"), "spec.subdomain under ROUTER_DOMAIN"),
			get("fields/wildcard-other", "any.wild.parity.test", "/"),
			get("fields/wildcard-own", "star.wild.parity.test", "/"),
			get("fields/wildcard-exact", "exact.wild.parity.test", "/"),
			get("fields/wildcard-base", "wild.parity.test", "/"),
			get("fields/wildcard-deep", "a.b.wild.parity.test", "/"),
			get("fields/wildcard-upper", "ANY.WILD.parity.test", "/"),
			get("fields/claimed-root", host("claimed"), "/"),
			noted(get("fields/claimed-other-path", host("claimed"), "/other"), "a path of the host claimed from another namespace"),
			noted(get("fields/idled", host("idled"), "/"), "an idled Service without endpoints"),
			get("fields/empty", host("empty"), "/"),
		},
	}
}
