package metrics

import (
	"net"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// KindLabel returns the backend label of a Route's backend of kind k, as OpenShift's exporter
// derives it from the backend name prefix: http (be_http), https-edge (be_edge_http), https
// (be_secure), tcp (be_tcp).
func KindLabel(k model.BackendKind) string {
	switch k {
	case model.KindHTTP:
		return "http"
	case model.KindEdge:
		return "https-edge"
	case model.KindReencrypt:
		return "https"
	case model.KindPassthrough:
		return "tcp"
	}
	return string(k)
}

// routeBackend is what the applied state says about one backend HAProxy lists.
type routeBackend struct {
	// export is false for a backend that serves no Route (a free spare, a retired backend) and for a
	// second backend of a Route (labels must be unique).
	export bool
	// kind, namespace and route are the labels of its series.
	kind, namespace, route string
	// set holds its label pairs once a scrape has made them.
	set *labelSet
}

// serverKey names a server of a backend.
type serverKey struct{ backend, server string }

// serverLabels are the labels of a server's series other than namespace and route.
type serverLabels struct {
	// addr is "ip:port" (IPv6 in brackets).
	addr, pod, service string
	// export is false for a server whose labels another server of the backend already has.
	export bool
}

// serverEntry is a server of the applied state, with its label pairs once a scrape has made them.
type serverEntry struct {
	labels serverLabels
	set    *labelSet
}

// index is the applied state turned into what the collector looks up for each row of `show stat`.
type index struct {
	backends map[string]*routeBackend
	servers  map[serverKey]*serverEntry
	// nservers counts the servers of the exported backends: the number compared with the server
	// threshold.
	nservers int
}

// newIndex indexes cfg (nil: nothing is known, no backend is a Route's).
//
// The Route of a backend comes from Backend.Route, never from its name: a spare claimed at runtime
// (be_http:_spare:random-03) is reported under the Route it serves, with the same labels as the
// Route's own backend after the next reload (the kind label comes from Backend.Kind, which a spare
// shares with the Routes that may claim it).
func newIndex(cfg *model.Config) *index {
	idx := &index{backends: map[string]*routeBackend{}, servers: map[serverKey]*serverEntry{}}
	if cfg == nil {
		return idx
	}
	// A Route has one backend; should two claim the same Route, the Route's own name wins over a
	// spare's, so that series stay unique and keep the name they keep after a reload.
	owner := map[string]string{}
	for i := range cfg.Backends {
		b := cfg.Backends[i]
		if b.Route == "" || b.Retired {
			continue
		}
		if prev, ok := owner[b.Route]; !ok || (!b.Spare && isSpare(cfg, prev)) {
			owner[b.Route] = b.Name
		}
	}
	for i := range cfg.Backends {
		b := cfg.Backends[i]
		ns, route, ok := strings.Cut(b.Route, "/")
		if !ok || b.Retired || owner[b.Route] != b.Name {
			idx.backends[b.Name] = &routeBackend{}
			continue
		}
		idx.backends[b.Name] = &routeBackend{export: true, kind: KindLabel(b.Kind), namespace: ns, route: route}
		seen := make(map[serverLabels]bool, len(b.Servers))
		for _, s := range b.Servers {
			l := modelServerLabels(s)
			l.export = !seen[l]
			seen[l] = true
			idx.servers[serverKey{b.Name, s.Name}] = &serverEntry{labels: l}
			idx.nservers++
		}
	}
	return idx
}

// isSpare reports whether backend name of cfg is a spare.
func isSpare(cfg *model.Config, name string) bool {
	for i := range cfg.Backends {
		if cfg.Backends[i].Name == name {
			return cfg.Backends[i].Spare
		}
	}
	return false
}

// modelServerLabels returns the labels of server s: its address, its pod (from the name, which
// follows OpenShift: "pod:<pod>:<service>:<port-name>:<ip>:<port>") and its Service's name.
func modelServerLabels(s model.Server) serverLabels {
	l := serverLabels{addr: net.JoinHostPort(s.Addr, strconv.Itoa(int(s.Port)))}
	if _, svc, ok := strings.Cut(s.Service, "/"); ok {
		l.service = svc
	} else {
		l.service = s.Service
	}
	if parsed, ok := nameLabels(s.Name); ok {
		l.pod = parsed.pod
	}
	return l
}

// nameLabels reads the labels of a server from its name alone
// ("pod:<pod>:<service>:<port-name>:<ip>:<port>", the IP possibly IPv6), for a server HAProxy
// lists that the applied state does not (a drift the next repair undoes).
func nameLabels(name string) (serverLabels, bool) {
	parts := strings.SplitN(name, ":", 5)
	if len(parts) != 5 || parts[0] != "pod" {
		return serverLabels{}, false
	}
	i := strings.LastIndexByte(parts[4], ':')
	if i <= 0 {
		return serverLabels{}, false
	}
	return serverLabels{
		addr:    net.JoinHostPort(parts[4][:i], parts[4][i+1:]),
		pod:     parts[1],
		service: parts[2],
		export:  true,
	}, true
}

// routePrefixes are the name prefixes of the backends haroute renders for Routes (spares included).
var routePrefixes = []string{
	model.KindHTTP.Prefix() + ":",
	model.KindEdge.Prefix() + ":",
	model.KindReencrypt.Prefix() + ":",
	model.KindPassthrough.Prefix() + ":",
}

// routeNamed reports whether a backend name has the prefix of a Route's backend.
func routeNamed(name string) bool {
	for _, p := range routePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
