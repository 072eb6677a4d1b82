package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
)

// Request is one URL of the corpus. The test client sends every request to the HAProxy under test
// whatever the URL's host, so the same URL goes to A and to B.
type Request struct {
	URL string
	// Route is the Route the URL was built for ("" for the unknown host).
	Route string
	// Main marks the Route's own URL (its host and exact path over its main scheme), which a fresh
	// HAProxy must answer from the Route when the Route has a server with a weight.
	Main bool
}

// unknownHost is served by no Route.
const unknownHost = "unknown.invalid"

// wildcardLabel stands for "any label" under a wildcard Route's domain; no exact host uses it.
const wildcardLabel = "zz"

// anyPort is the port written into Host headers to check that the port is ignored.
const anyPort = "1234"

// BuildCorpus returns the request corpus of a desired state, sorted by URL: for every admitted Route
// its host with the path exactly, with "/x" below it and with "x" appended (a near miss at the
// segment boundary), the host upper-cased with a port, and a near-miss host, over http and — for
// edge and reencrypt Routes — https with SNI; passthrough Routes over TLS (and http, which is
// refused or redirected); plus an unknown host over both schemes.
func BuildCorpus(desired *model.Config) []Request {
	byURL := map[string]Request{}
	add := func(url, route string, main bool) {
		if old, ok := byURL[url]; ok && (old.Main || !main) {
			return // the first Route to build a URL labels it, unless it is another Route's own URL
		}
		byURL[url] = Request{URL: url, Route: route, Main: main}
	}
	for _, ri := range desired.Routes {
		key := ri.Namespace + "/" + ri.Name
		host, near := ri.Host, "x"+ri.Host
		if d, ok := strings.CutPrefix(ri.Host, "*."); ok {
			host, near = wildcardLabel+"."+d, d
		}
		path := ri.Path
		if path == "" {
			path = "/"
		}
		paths := []string{path, strings.TrimSuffix(path, "/") + "/x", path + "x"}
		var schemes []string
		mainScheme := "http"
		switch ri.Termination {
		case "":
			schemes = []string{"http"}
		case "passthrough":
			schemes, mainScheme, paths = []string{"http", "https"}, "https", []string{"/"}
		default:
			schemes, mainScheme = []string{"http", "https"}, "https"
		}
		for _, scheme := range schemes {
			for i, p := range paths {
				add(scheme+"://"+host+p, key, i == 0 && scheme == mainScheme)
			}
			add(scheme+"://"+strings.ToUpper(host)+":"+anyPort+path, key, false)
			add(scheme+"://"+near+path, key, false)
		}
	}
	add("http://"+unknownHost+"/", "", false)
	add("https://"+unknownHost+"/", "", false)
	out := make([]Request, 0, len(byURL))
	for _, r := range byURL {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

// Answer is what one HAProxy answered to one request, reduced to what must agree between A and B.
type Answer struct {
	// Status is the HTTP status, or -1 when no response arrived (Err says why).
	Status int
	// Route is the Route of the backend that answered ("" when HAProxy answered itself, "unowned:
	// <backend>" for a backend that is no Route's endpoint).
	Route string
	// Backend is the answering testbed backend (for logs only: the balance within a Route is random).
	Backend  string
	Location string
	// Cert identifies the certificate presented over https (a digest of the leaf).
	Cert string
	// BadCookie is a Set-Cookie header whose value is neither a dynamic cookie (16 hex digits,
	// HAProxy before 3.0) nor OpenShift's (32): a server that takes traffic without its cookie, or
	// with a corrupted one.
	BadCookie string
	// CookieAttrs is what followed the sticky cookie's value (e.g. "; path=/; HttpOnly; Secure;
	// SameSite=None"): OpenShift's attributes, which A takes from a map.
	CookieAttrs string
	// Forwarded is what the backend received of the forwarded headers (testkit.ForwardedSummary),
	// for a request that carried its own X-Forwarded-For and X-Forwarded-Host (clientForwarded), so
	// that every policy (append, replace, if-none, never) leaves a different trace.
	Forwarded string
	// Headers are the X-Hdr-* request headers the backend received (testkit.HeaderSummary, after the
	// Route's request header actions), then those the client received (after its response actions).
	Headers string
	Err     string
}

// clientForwarded returns the headers every oracle request carries: the forwarded headers of a
// client behind another proxy, and X-Hdr-Client for the Routes' header actions to delete, replace or
// read.
func clientForwarded() http.Header {
	return http.Header{"X-Forwarded-For": {"192.0.2.7"}, "X-Forwarded-Host": {"client.example"}, "X-Hdr-Client": {"Client"}}
}

// Same reports whether two answers agree: status, Route, redirect location, certificate, cookies,
// the forwarded headers the backend received and the X-Hdr-* headers on both sides.
func (a Answer) Same(b Answer) bool {
	return a.Status == b.Status && a.Route == b.Route && a.Location == b.Location && a.Cert == b.Cert &&
		a.BadCookie == b.BadCookie && a.CookieAttrs == b.CookieAttrs && a.Forwarded == b.Forwarded && a.Headers == b.Headers
}

func (a Answer) String() string {
	if a.Status < 0 {
		return "error: " + a.Err
	}
	s := fmt.Sprintf("%d", a.Status)
	if a.Backend != "" {
		s += fmt.Sprintf(" from %s (route %s)", a.Backend, a.Route)
	}
	if a.Location != "" {
		s += " location " + a.Location
	}
	if a.Cert != "" {
		s += " cert " + a.Cert
	}
	if a.Forwarded != "" {
		s += " forwarded " + a.Forwarded
	}
	if a.Headers != "" {
		s += " headers " + a.Headers
	}
	if a.BadCookie != "" {
		s += fmt.Sprintf(" bad cookie %q", a.BadCookie)
	}
	if a.CookieAttrs != "" {
		s += fmt.Sprintf(" cookie%s", a.CookieAttrs)
	}
	return s
}

// cookieValue is the value of a cookie HAProxy derives from dynamic-cookie-key, address and port
// (16 hex digits), or OpenShift's value of a server, the MD5 hex of its name (32).
var cookieValue = regexp.MustCompile(`^(?:[0-9a-f]{16}|[0-9a-f]{32})$`)

// Ask sends one GET and reduces the response; owners maps backend names to Routes.
func Ask(c *testkit.Client, url string, owners map[string]string) Answer {
	resp, err := c.Do(http.MethodGet, url, clientForwarded())
	if err != nil {
		return Answer{Status: -1, Err: err.Error()}
	}
	a := Answer{Status: resp.Status, Backend: resp.Backend, Location: resp.Header.Get("Location"),
		Forwarded: resp.Header.Get(testkit.HeaderForwarded)}
	if got, sent := resp.Header.Get(testkit.HeaderReceived), testkit.HeaderSummary(resp.Header); got != "" || sent != "" {
		a.Headers = "received " + got + " sent " + sent
	}
	if resp.Backend != "" {
		a.Route = owners[resp.Backend]
		if a.Route == "" {
			a.Route = "unowned:" + resp.Backend
		}
	}
	for _, sc := range resp.Header.Values("Set-Cookie") {
		nameValue, attrs, _ := strings.Cut(sc, ";")
		if _, v, _ := strings.Cut(nameValue, "="); !cookieValue.MatchString(v) {
			a.BadCookie = sc
		}
		a.CookieAttrs = ";" + attrs
	}
	if leaf := resp.Leaf(); leaf != nil {
		sum := sha256.Sum256(leaf.Raw)
		a.Cert = hex.EncodeToString(sum[:6])
	}
	return a
}

// Exchange is one request with both answers.
type Exchange struct {
	Request
	A, B Answer
}

// AskBoth sends every request to A and to B with a few workers and returns the exchanges in
// corpus order.
func AskBoth(ca, cb *testkit.Client, corpus []Request, owners map[string]string, workers int) []Exchange {
	out := make([]Exchange, len(corpus))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = Exchange{Request: corpus[i], A: Ask(ca, corpus[i].URL, owners), B: Ask(cb, corpus[i].URL, owners)}
			}
		}()
	}
	for i := range corpus {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// Mismatches returns the exchanges whose answers differ.
func Mismatches(xs []Exchange) []Exchange {
	var out []Exchange
	for _, x := range xs {
		if !x.A.Same(x.B) {
			out = append(out, x)
		}
	}
	return out
}

// Unserved returns the Main requests that B (a fresh HAProxy) did not answer with 200 from their
// own Route, among the Routes expected to serve: those with a server of non-zero weight whose host
// no passthrough Route takes over on the TLS port.
func Unserved(xs []Exchange, desired *model.Config) []Exchange {
	var out []Exchange
	for _, x := range xs {
		if !x.Main || !routeServes(desired, x.Route) || tlsTakenByPassthrough(desired, x.URL, x.Route) {
			continue
		}
		if x.B.Status != http.StatusOK || x.B.Route != x.Route {
			out = append(out, x)
		}
	}
	return out
}

// routeServes reports whether the Route's backend in desired has a server with a non-zero weight.
func routeServes(desired *model.Config, route string) bool {
	for _, ri := range desired.Routes {
		if ri.Namespace+"/"+ri.Name != route {
			continue
		}
		b := desired.Backend(ri.Backend)
		if b == nil {
			return false
		}
		for _, s := range b.Servers {
			if s.Weight > 0 {
				return true
			}
		}
	}
	return false
}

// tlsTakenByPassthrough reports whether an https URL of a terminated Route goes to a passthrough
// backend instead (the same host, or a wildcard passthrough domain without a be_sni exception): SNI
// decides before any path is seen, as in OpenShift.
func tlsTakenByPassthrough(desired *model.Config, url, route string) bool {
	rest, ok := strings.CutPrefix(url, "https://")
	if !ok {
		return false
	}
	host, _, _ := strings.Cut(rest, "/")
	tcp := entries(desired.Map(model.MapTCP))
	v, found := tcp[host]
	if !found {
		if _, d, ok := strings.Cut(host, "."); ok {
			if _, wild := entries(desired.Map(model.MapWildcardDomain))["*."+d]; wild {
				v, found = tcp["*."+d]
			}
		}
	}
	if !found || v == model.SNIBackend {
		return false
	}
	for _, ri := range desired.Routes {
		if ri.Namespace+"/"+ri.Name == route {
			return v != ri.Backend
		}
	}
	return true
}

func entries(m *model.MapFile) map[string]string {
	out := map[string]string{}
	if m != nil {
		for _, e := range m.Entries {
			out[e.Key] = e.Value
		}
	}
	return out
}
