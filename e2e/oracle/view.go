package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// View is an observed state reduced to what a user of each Route gets, independent of backend
// names: A serves a Route added at runtime from a claimed spare, B from a backend of the Route's own
// name, and both must give the Route the same servers and the same map entries.
type View struct {
	// Routes by "<ns>/<name>".
	Routes map[string]*RouteView
	// Shared are map entries that name no Route's backend ("map key value"), e.g. the wildcard
	// domains and the be_sni entries of os_tcp_be.map.
	Shared []string
	// Certificates are "name sni=... alpn=... pem=<sha256 prefix>"; CAFiles "name pem=<sha256 prefix>".
	Certificates []string
	CAFiles      []string
	// Listener are the listener files, "name pem=<sha256 prefix>" (the default certificate only when
	// it is the listener files', not the renderer's).
	Listener []string
	// Problems are violations within one state: a backend that serves no Route (a free spare or a
	// retired backend) with servers or with map entries pointing at it, a map entry naming an unknown
	// backend, two backends serving one Route.
	Problems []string
}

// RouteView is what one Route gets.
type RouteView struct {
	Backend string // the backend's kind, mode, balance, CA file and header rules (not its name)
	// Servers are "name addr:port weight=W state" sorted.
	Servers []string
	// Entries are "map key" (with "@route" standing for a backend name in the key), sorted.
	Entries []string
}

// ServerKey identifies a server as "backend/server".
func ServerKey(backend, server string) string { return backend + "/" + server }

// NewView reduces an observed config. Servers listed in skip ("backend/server", e.g. deletions
// HAProxy deferred because connections were attached) are left out.
func NewView(cfg *model.Config, skip map[string]bool) View {
	v := View{Routes: map[string]*RouteView{}}
	byName := map[string]*model.Backend{}
	for i := range cfg.Backends {
		b := cfg.Backends[i]
		byName[b.Name] = b
		var servers []string
		for _, s := range b.Servers {
			if skip[ServerKey(b.Name, s.Name)] {
				continue
			}
			servers = append(servers, fmt.Sprintf("%s %s:%d weight=%d %s checks=%v", s.Name, s.Addr, s.Port, s.Weight, s.State, s.HealthCheck))
		}
		if b.Route == "" {
			if len(servers) > 0 {
				v.Problems = append(v.Problems, fmt.Sprintf("backend %s serves no route but has servers %v", b.Name, servers))
			}
			continue
		}
		if _, dup := v.Routes[b.Route]; dup {
			v.Problems = append(v.Problems, fmt.Sprintf("route %s is served by two backends (one is %s)", b.Route, b.Name))
			continue
		}
		ca := ""
		if b.TLS != nil {
			ca = " ca=" + b.TLS.CAFile
		}
		for _, list := range []struct {
			name  string
			rules []model.HeaderRule
		}{{"request", b.RequestHeaders}, {"response", b.ResponseHeaders}} {
			for _, r := range list.rules {
				ca += fmt.Sprintf(" %s-header=%s:%s", list.name, r.Action, r.Name)
				if r.Value != "" {
					ca += fmt.Sprintf("=%q", r.Value)
				}
				if r.Key != "" {
					ca += "=map"
				}
			}
		}
		v.Routes[b.Route] = &RouteView{
			Backend: fmt.Sprintf("%s %s balance=%s%s", b.Kind, b.Mode, b.Balance, ca),
			Servers: sortedCopy(servers),
		}
	}
	for _, m := range cfg.Maps {
		for _, e := range m.Entries {
			v.addEntry(m.Name, e, byName)
		}
	}
	for _, rv := range v.Routes {
		sort.Strings(rv.Entries)
	}
	for _, c := range cfg.Certificates {
		v.Certificates = append(v.Certificates, fmt.Sprintf("%s sni=%s alpn=%s pem=%s", c.Name, strings.Join(c.SNI, ","), c.ALPN, digest(c.PEM)))
	}
	for _, c := range cfg.CAFiles {
		v.CAFiles = append(v.CAFiles, fmt.Sprintf("%s pem=%s", c.Name, digest(c.PEM)))
	}
	for _, f := range []struct{ name, pem string }{
		{"default-certificate", cfg.Listener.DefaultCertificate}, {"client-ca", cfg.Listener.ClientCA}, {"client-crl", cfg.Listener.ClientCRL},
	} {
		if f.pem != "" {
			v.Listener = append(v.Listener, f.name+" pem="+digest(f.pem))
		}
	}
	sort.Strings(v.Shared)
	sort.Strings(v.Certificates)
	sort.Strings(v.CAFiles)
	sort.Strings(v.Problems)
	return v
}

// addEntry files one map entry under the Route whose backend its key or value names.
func (v *View) addEntry(mapName string, e model.MapEntry, byName map[string]*model.Backend) {
	route := ""
	key, value := e.Key, e.Value
	if mapName == model.MapHeaderValues {
		// "<backend>/req|res/<index>": the backend's own value, filed under its Route.
		be, rest, _ := strings.Cut(key, "/")
		b, ok := byName[be]
		switch {
		case !ok:
			v.Problems = append(v.Problems, fmt.Sprintf("map %s: entry %q names backend %s, which does not exist", mapName, e.Key, be))
		case b.Route == "":
			v.Problems = append(v.Problems, fmt.Sprintf("map %s: entry %q is a value of backend %s, which serves no route", mapName, e.Key, b.Name))
		default:
			v.Routes[b.Route].Entries = append(v.Routes[b.Route].Entries, mapName+" @route/"+rest+" "+value)
		}
		return
	}
	for _, side := range []*string{&key, &value} {
		b, ok := byName[*side]
		if !ok {
			if strings.HasPrefix(*side, "be_") && *side != model.SNIBackend && *side != model.NoSNIBackend {
				v.Problems = append(v.Problems, fmt.Sprintf("map %s: entry %q %q names backend %s, which does not exist", mapName, e.Key, e.Value, *side))
			}
			continue
		}
		if b.Route == "" {
			v.Problems = append(v.Problems, fmt.Sprintf("map %s: entry %q %q points at backend %s, which serves no route", mapName, e.Key, e.Value, b.Name))
			return
		}
		route, *side = b.Route, "@route"
	}
	if route == "" {
		v.Shared = append(v.Shared, mapName+" "+e.Key+" "+e.Value)
		return
	}
	rv := v.Routes[route]
	entry := mapName + " " + key
	if value != "@route" {
		entry += " " + value
	}
	rv.Entries = append(rv.Entries, entry)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

func sortedCopy(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

// DiffViews lists the differences between the views of A and B, sorted; empty when they agree.
// Problems within either view are differences too.
func DiffViews(a, b View) []string {
	var out []string
	for _, p := range a.Problems {
		out = append(out, "A: "+p)
	}
	for _, p := range b.Problems {
		out = append(out, "B: "+p)
	}
	routes := map[string]bool{}
	for r := range a.Routes {
		routes[r] = true
	}
	for r := range b.Routes {
		routes[r] = true
	}
	for _, r := range sortedKeys(routes) {
		ra, rb := a.Routes[r], b.Routes[r]
		switch {
		case ra == nil:
			out = append(out, fmt.Sprintf("route %s: only B serves it (%s, servers %v, entries %v)", r, rb.Backend, rb.Servers, rb.Entries))
			continue
		case rb == nil:
			out = append(out, fmt.Sprintf("route %s: only A serves it (%s, servers %v, entries %v)", r, ra.Backend, ra.Servers, ra.Entries))
			continue
		}
		if ra.Backend != rb.Backend {
			out = append(out, fmt.Sprintf("route %s: backend A %q, B %q", r, ra.Backend, rb.Backend))
		}
		out = append(out, diffLists("route "+r+": server", ra.Servers, rb.Servers)...)
		out = append(out, diffLists("route "+r+": map entry", ra.Entries, rb.Entries)...)
	}
	out = append(out, diffLists("shared map entry", a.Shared, b.Shared)...)
	out = append(out, diffLists("certificate", a.Certificates, b.Certificates)...)
	out = append(out, diffLists("CA file", a.CAFiles, b.CAFiles)...)
	out = append(out, diffLists("listener file", a.Listener, b.Listener)...)
	sort.Strings(out)
	return out
}

// diffLists reports the elements of two sorted lists that only one of them holds.
func diffLists(what string, a, b []string) []string {
	var out []string
	inA, inB := map[string]int{}, map[string]int{}
	for _, x := range a {
		inA[x]++
	}
	for _, x := range b {
		inB[x]++
	}
	for _, x := range sortedKeys(inA) {
		if inA[x] > inB[x] {
			out = append(out, fmt.Sprintf("%s only in A: %s", what, x))
		}
	}
	for _, x := range sortedKeys(inB) {
		if inB[x] > inA[x] {
			out = append(out, fmt.Sprintf("%s only in B: %s", what, x))
		}
	}
	return out
}
