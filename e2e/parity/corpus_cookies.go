package parity

// cookieGroup: sticky-session cookies over repeated requests (the pod picked first keeps answering),
// the stock router's own cookie sent to the router (a client coming from a stock replica), the
// cookie's name and attributes per termination, and the cookie annotations, hostile values included.
func cookieGroup() Group {
	const nameAnn, sameSiteAnn, disableAnn = "router.openshift.io/cookie_name", "router.openshift.io/cookie-same-site",
		"haproxy.router.openshift.io/disable_cookies"
	twoEdge := func(name, insecure string) Route { return edge(route(name, "two"), insecure) }
	g := Group{
		Name: "cookies",
		Routes: []Route{
			route("sticky", "two"),
			twoEdge("sticky-edge", ""),
			twoEdge("sticky-edge-allow", "Allow"),
			twoEdge("sticky-edge-redirect", "Redirect"),
			reencrypt(route("sticky-reencrypt", "secure"), ""),
			passthrough(route("sticky-passthrough", "pass"), ""),
			annotated(route("cookie-name", "two"), nameAnn, "parity_sticky"),
			annotated(route("cookie-name-bad", "two"), nameAnn, "bad name;x"),
			annotated(twoEdge("samesite-lax", ""), sameSiteAnn, "Lax"),
			annotated(twoEdge("samesite-strict", ""), sameSiteAnn, "Strict"),
			annotated(twoEdge("samesite-none", ""), sameSiteAnn, "None"),
			annotated(twoEdge("samesite-bogus", ""), sameSiteAnn, "Bogus"),
			annotated(twoEdge("samesite-allow-strict", "Allow"), sameSiteAnn, "Strict"),
			annotated(route("samesite-plain-lax", "two"), sameSiteAnn, "Lax"),
			annotated(route("no-cookies", "two"), disableAnn, "true"),
			annotated(route("no-cookies-bogus", "two"), disableAnn, "yes please"),
		},
	}
	// sticky: the first answer picks a pod at random and sets the cookie; the next ones, with it,
	// come from the same pod.
	g.Requests = append(g.Requests, session("cookies/sticky", "sticky", false)...)
	g.Requests = append(g.Requests,
		noted(repeat(Request{ID: "cookies/sticky-stock-a", Host: host("sticky"), Path: "/",
			StockCookie: &StockCookie{Namespace: Namespace, Route: "sticky", Service: "two", Pod: "pod-a"}}, 4),
			"the stock router's cookie for pod-a: a client a stock replica served before"),
		noted(repeat(Request{ID: "cookies/sticky-stock-b", Host: host("sticky"), Path: "/",
			StockCookie: &StockCookie{Namespace: Namespace, Route: "sticky", Service: "two", Pod: "pod-b"}}, 4),
			"the stock router's cookie for pod-b"),
		noted(Request{ID: "cookies/sticky-unknown-value", Host: host("sticky"), Path: "/", AnyPodOf: "two",
			StockCookie: &StockCookie{Namespace: Namespace, Route: "sticky", Service: "two", Pod: "pod-a", Value: "0123456789abcdef"}},
			"a cookie value that names no pod: balanced, and a new cookie set"),
	)
	g.Requests = append(g.Requests, session("cookies/sticky-edge", "sticky-edge", true)...)
	g.Requests = append(g.Requests,
		noted(repeat(Request{ID: "cookies/sticky-edge-stock-b", HTTPS: true, Host: host("sticky-edge"), Path: "/",
			StockCookie: &StockCookie{Namespace: Namespace, Route: "sticky-edge", Service: "two", Pod: "pod-b"}}, 4),
			"the stock router's cookie on an edge Route"),
	)
	g.Requests = append(g.Requests, session("cookies/sticky-edge-allow-http", "sticky-edge-allow", false)...)
	g.Requests = append(g.Requests, session("cookies/sticky-edge-allow-https", "sticky-edge-allow", true)...)
	g.Requests = append(g.Requests, session("cookies/sticky-edge-redirect", "sticky-edge-redirect", true)...)
	g.Requests = append(g.Requests,
		gets("cookies/sticky-reencrypt", host("sticky-reencrypt"), "/"),
		gets("cookies/sticky-passthrough", host("sticky-passthrough"), "/"),
	)
	for _, name := range []string{"cookie-name", "cookie-name-bad", "samesite-plain-lax", "no-cookies-bogus"} {
		g.Requests = append(g.Requests, session("cookies/"+name, name, false)...)
	}
	// Without cookies every request is balanced anew: both pick among the pods.
	noCookies := session("cookies/no-cookies", "no-cookies", false)
	noCookies[1].SamePodAs, noCookies[1].AnyPodOf = "", "two"
	g.Requests = append(g.Requests, noCookies...)
	g.Requests = append(g.Requests,
		noted(repeat(Request{ID: "cookies/cookie-name-stock-b", Host: host("cookie-name"), Path: "/",
			StockCookie: &StockCookie{Namespace: Namespace, Route: "cookie-name", Service: "two", Pod: "pod-b", Name: "parity_sticky"}}, 4),
			"the annotated cookie name with the stock router's value for pod-b"),
	)
	for _, name := range []string{"samesite-lax", "samesite-strict", "samesite-none", "samesite-bogus", "samesite-allow-strict"} {
		g.Requests = append(g.Requests, session("cookies/"+name, name, true)...)
	}
	g.Requests = append(g.Requests, session("cookies/samesite-allow-strict-http", "samesite-allow-strict", false)...)
	return g
}

// session returns two requests of one cookie session to Route name, whose Service is "two": the
// first, whose pod is picked at random among its two, and the second, with the cookie the first set,
// which must come from the same pod.
func session(id, name string, https bool) []Request {
	first := Request{ID: id + "-1", HTTPS: https, Host: host(name), Path: "/", Session: id, AnyPodOf: "two"}
	again := Request{ID: id + "-2", HTTPS: https, Host: host(name), Path: "/", Session: id, SamePodAs: first.ID}
	return []Request{first, again}
}
