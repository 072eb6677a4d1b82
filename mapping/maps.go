package mapping

import (
	"sort"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// mapBuilder collects map entries. Keys follow the order-independent matching scheme: for a Route with
// host H (or "*.D") and path P,
//   - P "" or "/"          → prefix entry "H/"
//   - P ends in "/"        → prefix entry "H"+P
//   - otherwise            → exact entry "=H"+P and prefix entry "H"+P+"/"
//
// Only one clash is possible between admitted Routes: paths "/x" and "/x/" both give the prefix key
// "H/x/"; the Route whose path ends in "/" owns it ("strong" entries beat "weak" ones). Otherwise
// the first (oldest) Route keeps a key.
type mapBuilder struct {
	maps map[string]map[string]mapValue
	// forwarded is the default forwarded-headers policy: Routes with another one get an entry in
	// model.MapForwardedHeaders.
	forwarded string
}

type mapValue struct {
	value  string
	strong bool
}

func newMapBuilder(forwarded string) *mapBuilder {
	m := &mapBuilder{maps: map[string]map[string]mapValue{}, forwarded: forwarded}
	for _, name := range []string{model.MapCookieSameSite, model.MapCookieNames, model.MapEdgeReencrypt, model.MapForwardedHeaders, model.MapHTTP, model.MapHTTPRedirect, model.MapTCP, model.MapWildcardDomain, model.MapHeaderValues, model.MapTimeoutServer, model.MapTimeoutTunnel, model.MapHSTS} {
		m.maps[name] = map[string]mapValue{}
	}
	return m
}

func (m *mapBuilder) add(mapName, key, value string, strong bool) {
	entries := m.maps[mapName]
	if old, ok := entries[key]; ok && (old.strong || !strong) {
		return
	}
	entries[key] = mapValue{value: value, strong: strong}
}

// pathEntry is one host+path key of a Route.
type pathEntry struct {
	key    string
	strong bool
}

// pathEntries returns the host+path keys of a host and path.
func pathEntries(host, path string) []pathEntry {
	switch {
	case path == "" || path == "/":
		return []pathEntry{{key: host + "/", strong: true}}
	case strings.HasSuffix(path, "/"):
		return []pathEntry{{key: host + path, strong: true}}
	default:
		return []pathEntry{{key: "=" + host + path, strong: true}, {key: host + path + "/"}}
	}
}

// addRoute adds the entries of one admitted Route.
//
// Every Route, of every kind, has its host+path keys in model.MapHTTPRedirect, with "1" when it
// redirects plain HTTP to https and "0" otherwise; the public frontend looks them up before it
// chooses a backend, as OpenShift's router does with its os_route_http_redirect.map: the most
// specific Route of the request decides whether it is redirected, and only the Routes that serve
// plain HTTP (termination none, or edge and reencrypt with Allow) are in model.MapHTTP.
func (m *mapBuilder) addRoute(a *admission) {
	entries := pathEntries(a.host, a.path)
	redirect := "0"
	if a.redirects() {
		redirect = "1"
	}
	for _, e := range entries {
		m.add(model.MapHTTPRedirect, e.key, redirect, e.strong)
		if a.servesHTTP() {
			m.add(model.MapHTTP, e.key, a.backendName, e.strong)
		}
	}
	if p := a.options.forwardedHeaders; p != "" && p != m.forwarded {
		m.add(model.MapForwardedHeaders, a.backendName, p, true)
	}
	if a.options.cookie != nil {
		m.add(model.MapCookieNames, a.backendName, a.options.cookie.Name, true)
	}
	if a.options.cookie != nil && a.options.cookieSameSite != "" {
		m.add(model.MapCookieSameSite, a.backendName, a.options.cookieSameSite, true)
	}
	if a.kind.Mode() == model.ModeHTTP {
		if v, ok := model.MappedHeaderValue(a.options.hsts); ok && a.options.hsts != "" {
			m.add(model.MapHSTS, a.backendName, v, true)
		}
		if ms, ok := model.TimeoutMillis(a.options.timeoutServer); ok {
			m.add(model.MapTimeoutServer, a.backendName, strconv.FormatInt(ms, 10), true)
		}
		if ms, ok := model.TimeoutMillis(a.options.timeoutTunnel); ok {
			m.add(model.MapTimeoutTunnel, a.backendName, strconv.FormatInt(ms, 10), true)
		}
	}
	for _, e := range a.headerValues {
		m.add(model.MapHeaderValues, e.Key, e.Value, true)
	}
	if a.terminated() {
		for _, e := range entries {
			m.add(model.MapEdgeReencrypt, e.key, a.backendName, e.strong)
		}
	}
	if a.kind == model.KindPassthrough {
		m.add(model.MapTCP, a.host, a.backendName, true)
	}
	if a.wildcard {
		m.add(model.MapWildcardDomain, a.host, "1", true)
	}
}

// build returns the map files sorted by name, entries sorted by key. It first adds, for every
// exact host terminated by an edge or reencrypt Route whose domain has a wildcard passthrough Route,
// an os_tcp_be.map entry sending that host to be_sni, so it is terminated rather than passed through.
func (m *mapBuilder) build(admitted []*admission) []model.MapFile {
	tcp := m.maps[model.MapTCP]
	for _, a := range admitted {
		if !a.terminated() || a.wildcard || a.domain == "" {
			continue
		}
		if _, ok := tcp["*."+a.domain]; ok {
			m.add(model.MapTCP, a.host, model.SNIBackend, false)
		}
	}
	names := make([]string, 0, len(m.maps))
	for name := range m.maps {
		names = append(names, name)
	}
	sort.Strings(names)
	files := make([]model.MapFile, 0, len(names))
	for _, name := range names {
		entries := make([]model.MapEntry, 0, len(m.maps[name]))
		for k, v := range m.maps[name] {
			entries = append(entries, model.MapEntry{Key: k, Value: v.value})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
		files = append(files, model.MapFile{Name: name, Entries: entries})
	}
	return files
}
