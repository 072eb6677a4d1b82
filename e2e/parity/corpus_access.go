package parity

import "strconv"

// The source addresses of the access requests: the default, and another loopback address.
const (
	sourceLocal = "127.0.0.1"
	sourceOther = "127.0.0.2"
)

// accessGroup: ip_allowlist and its former name ip_whitelist, valid, partly valid, invalid and
// hostile, on every kind of Route, from an allowed and a refused address.
func accessGroup() Group {
	const allow, whitelist = "haproxy.router.openshift.io/ip_allowlist", "haproxy.router.openshift.io/ip_whitelist"
	g := Group{Name: "access"}
	plain := []struct{ name, allow, whitelist string }{
		{"allow-local", "127.0.0.1", ""},
		{"allow-other", "10.0.0.0/8", ""},
		{"allow-list", "192.0.2.1 127.0.0.2 10.1.0.0/16", ""},
		{"allow-cidr", "127.0.0.0/31", ""},
		{"allow-mixed-invalid", "127.0.0.1 not-an-ip", ""},
		{"allow-all-invalid", "bogus", ""},
		{"allow-hostile", "127.0.0.2\nhttp-request deny", ""},
		{"allow-ipv6", "::1 127.0.0.2", ""},
		{"whitelist-old", "", "127.0.0.2"},
		{"allow-both", "127.0.0.1", "127.0.0.2"},
	}
	for _, c := range plain {
		r := route(c.name, "a")
		if c.allow != "" {
			r = annotated(r, allow, c.allow)
		}
		if c.whitelist != "" {
			r = annotated(r, whitelist, c.whitelist)
		}
		g.Routes = append(g.Routes, r)
		g.Requests = append(g.Requests,
			from(get("access/"+c.name+"-from-1", host(c.name), "/"), sourceLocal),
			from(get("access/"+c.name+"-from-2", host(c.name), "/"), sourceOther))
	}
	g.Routes = append(g.Routes,
		annotated(edge(route("allow-edge", "a"), "Allow"), allow, "127.0.0.2"),
		annotated(reencrypt(route("allow-reencrypt", "secure"), ""), allow, "127.0.0.2"),
		annotated(passthrough(route("allow-passthrough", "pass"), ""), allow, "127.0.0.2"),
	)
	for _, name := range []string{"allow-edge", "allow-reencrypt", "allow-passthrough"} {
		g.Requests = append(g.Requests,
			from(gets("access/"+name+"-from-1", host(name), "/"), sourceLocal),
			from(gets("access/"+name+"-from-2", host(name), "/"), sourceOther))
	}
	g.Requests = append(g.Requests,
		from(get("access/allow-edge-http-from-1", host("allow-edge"), "/"), sourceLocal),
		from(get("access/allow-edge-http-from-2", host("allow-edge"), "/"), sourceOther))
	return g
}

// rateGroup: the rate-limit-connections annotations. Each Route's requests come one after the
// other, each on a new connection; the concurrent-connection probes hold slow requests open first.
func rateGroup() Group {
	const on, conc, rtcp, rhttp = "haproxy.router.openshift.io/rate-limit-connections",
		"haproxy.router.openshift.io/rate-limit-connections.concurrent-tcp",
		"haproxy.router.openshift.io/rate-limit-connections.rate-tcp",
		"haproxy.router.openshift.io/rate-limit-connections.rate-http"
	g := Group{
		Name: "rate",
		Routes: []Route{
			annotated(route("rate-conc", "a"), on, "true", conc, "2"),
			annotated(route("rate-conc-hold2", "a"), on, "true", conc, "2"),
			annotated(route("rate-tcp", "a"), on, "true", rtcp, "3"),
			annotated(route("rate-http", "a"), on, "true", rhttp, "3"),
			annotated(route("rate-off", "a"), on, "false", rtcp, "1"),
			annotated(route("rate-bogus", "a"), on, "true", rtcp, "three"),
			annotated(route("rate-only", "a"), on, "true"),
			annotated(passthrough(route("rate-passthrough", "pass"), ""), on, "true", rtcp, "2"),
		},
	}
	g.Requests = append(g.Requests,
		noted(Request{ID: "rate/conc-hold-1", Host: host("rate-conc"), Path: "/", Hold: 1},
			"concurrent-tcp 2 with one connection held: this one is the second"),
		noted(Request{ID: "rate/conc-hold-2", Host: host("rate-conc-hold2"), Path: "/", Hold: 2},
			"concurrent-tcp 2 with two connections held: this one is the third"),
	)
	for _, name := range []string{"rate-tcp", "rate-http", "rate-off", "rate-bogus", "rate-only"} {
		for i := 1; i <= 5; i++ {
			g.Requests = append(g.Requests, get("rate/"+name[len("rate-"):]+"-"+strconv.Itoa(i), host(name), "/"))
		}
	}
	for i := 1; i <= 3; i++ {
		g.Requests = append(g.Requests, gets("rate/passthrough-"+strconv.Itoa(i), host("rate-passthrough"), "/"))
	}
	return g
}
