package views

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// Verdicts of an Explanation.
const (
	VerdictServed      = "Served"
	VerdictRedirect    = "RedirectToHTTPS"
	VerdictPassthrough = "Passthrough"
	VerdictDefault     = "DefaultBackend"
	VerdictNoServer    = "NoUsableServer"
	VerdictUnknown     = "Unknown"
)

// Request is what explain is asked about.
type Request struct {
	// URL is http://host[:port]/path or https://...; the query is ignored, as the frontends do.
	URL string `json:"url"`
	// Host overrides the URL's host as the Host header; SNI overrides it as the TLS server name.
	Host string `json:"host,omitempty"`
	SNI  string `json:"sni,omitempty"`
}

// Step is one decision of the frontends, replayed from the model and, where HAProxy can be asked,
// asked of HAProxy itself.
type Step struct {
	Stage  string `json:"stage"`
	Detail string `json:"detail"`
	// Model is what the model (the applied state) decides; HAProxy what HAProxy answered ("" when not
	// asked). Disagree marks a step where the two differ.
	Model    string `json:"model,omitempty"`
	HAProxy  string `json:"haproxy,omitempty"`
	Disagree bool   `json:"disagree,omitempty"`
}

// Explanation is the way of one request through HAProxy.
type Explanation struct {
	Request Request `json:"request"`
	Steps   []Step  `json:"steps"`
	// Route ("<ns>/<name>") and Backend are what the request reaches, when it reaches one.
	Route   string `json:"route,omitempty"`
	Backend string `json:"backend,omitempty"`
	// Servers are the backend's servers as HAProxy reports them.
	Servers []ServerRow `json:"servers,omitempty"`
	// Competing are the other Routes on the same host; Rejected the rejected Routes that asked for it.
	Competing []string `json:"competing,omitempty"`
	Rejected  []string `json:"rejected,omitempty"`
	Verdict   string   `json:"verdict"`
	Hint      string   `json:"hint,omitempty"`
	// Disagreements counts the steps where the model and HAProxy differ.
	Disagreements int `json:"disagreements"`
}

// ServerRow is one server of a backend as HAProxy reports it.
type ServerRow struct {
	Name   string `json:"name"`
	Addr   string `json:"addr"`
	Usable bool   `json:"usable"`
	State  string `json:"state"`
}

// explainer carries one explanation's inputs.
type explainer struct {
	cfg   *model.Config
	ix    *modelIndex
	paths render.RuntimePaths
	admin socket.Runner // nil: offline, the model only
	ctx   context.Context
	out   *Explanation
}

// Explain replays the frontends' decisions for req from the applied state and, with admin, asks
// HAProxy the same questions (`get map` on the exact keys) and marks where the answers differ. dir is
// the HAProxy directory the state was rendered for (the maps' paths). Without haroute's state there
// is nothing to replay: the verdict is Unknown with a hint.
func (s *Snapshot) Explain(ctx context.Context, admin socket.Runner, dir string, req Request) Explanation {
	out := Explanation{Request: req, Verdict: VerdictUnknown}
	if s.State == nil || s.State.Applied == nil {
		out.Hint = "haroute's state is not available (is haroute run serving on this directory?); " + strings.Join(s.Notes, "; ")
		return out
	}
	cfg := s.State.Applied
	paths, err := render.PathsFor(cfg, dir)
	if err != nil {
		out.Hint = "map paths: " + err.Error()
		return out
	}
	if s.index == nil || s.indexed != cfg {
		s.index, s.indexed = newModelIndex(cfg), cfg
	}
	e := &explainer{cfg: cfg, ix: s.index, paths: paths, admin: admin, ctx: ctx, out: &out}
	e.run(req)
	for _, st := range out.Steps {
		if st.Disagree {
			out.Disagreements++
		}
	}
	if out.Backend != "" {
		out.Servers, out.Verdict = s.backendServers(out.Backend, out.Verdict)
		if out.Verdict == VerdictNoServer && out.Hint == "" {
			out.Hint = "the backend has no server that takes traffic: check the Service's EndpointSlices (ready endpoints, a port matching the Route's targetPort) and the servers' health"
		}
	}
	s.hostRoutes(&out, normalizeHost(hostOf(req)))
	return out
}

func (e *explainer) step(st Step) { e.out.Steps = append(e.out.Steps, st) }

// run walks the frontends for req.
func (e *explainer) run(req Request) {
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		e.out.Hint = fmt.Sprintf("URL %q: want http://host/path or https://host/path", req.URL)
		return
	}
	host := normalizeHost(hostOf(req))
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	e.step(Step{Stage: "request", Detail: fmt.Sprintf("%s, host %q, path %q (Host header lower-cased, port and trailing dot removed)", u.Scheme, host, path)})
	mapName := model.MapHTTP
	if u.Scheme == "http" {
		// As the public frontend: the most specific Route of any kind decides the redirect first.
		v, entry := e.lookup(model.MapHTTPRedirect, host, path)
		if v == "1" {
			e.out.Route = e.routeOfKey(entry)
			e.out.Verdict = VerdictRedirect
			e.out.Hint = "the most specific Route of this host and path has insecureEdgeTerminationPolicy Redirect: 302 to https"
			return
		}
	}
	if u.Scheme == "https" {
		sni := req.SNI
		if sni == "" {
			sni = host
		}
		if done := e.tls(strings.ToLower(sni)); done {
			return
		}
		mapName = model.MapEdgeReencrypt
	}
	backend, _ := e.lookup(mapName, host, path)
	if backend == "" {
		e.out.Verdict = VerdictDefault
		e.out.Hint = "no Route matches this host and path: the request gets the default backend (503)"
		return
	}
	e.out.Backend = backend
	e.out.Route = e.routeOf(backend)
	e.out.Verdict = VerdictServed
}

// routeOfKey returns the Route ("ns/name") whose host+path keys include key, "" when none does
// (docs/matching.md: a path "/x" has "=H/x" and "H/x/", and a Route with path "/x/" owns "H/x/").
func (e *explainer) routeOfKey(key string) string {
	found := ""
	for _, r := range e.cfg.Routes {
		var keys []string
		switch {
		case r.Path == "" || r.Path == "/":
			keys = []string{r.Host + "/"}
		case strings.HasSuffix(r.Path, "/"):
			keys = []string{r.Host + r.Path}
		default:
			keys = []string{"=" + r.Host + r.Path, r.Host + r.Path + "/"}
		}
		if slices.Contains(keys, key) {
			found = r.Namespace + "/" + r.Name
			if strings.HasSuffix(r.Path, "/") {
				break
			}
		}
	}
	return found
}

// tls replays public_ssl (passthrough or termination) and the certificate; true when the request
// ends at a passthrough backend.
func (e *explainer) tls(sni string) bool {
	be, key := e.modelTCP(sni)
	live := e.ask(model.MapTCP, key, "str")
	st := Step{Stage: "sni", Detail: fmt.Sprintf("public_ssl: SNI %q in %s (key %q)", sni, model.MapTCP, key), Model: orNone(be), HAProxy: live}
	st.Disagree = live != "" && live != orNone(be)
	e.step(st)
	if be = decided(be, live); be != "" && be != model.SNIBackend {
		e.out.Backend, e.out.Route, e.out.Verdict = be, e.routeOf(be), VerdictPassthrough
		return true
	}
	cert := "the default certificate"
	if c, ok := e.ix.certOf[sni]; ok {
		cert = c
	} else if c, ok := e.ix.certOf[wildcardKey(sni)]; ok {
		cert = c
	}
	e.step(Step{Stage: "certificate", Detail: "fe_sni terminates TLS with " + cert})
	return false
}

// lookup replays the http-lookup chain on mapName: xkey exact, key longest prefix, then the wildcard
// keys when the domain has a wildcard Route. It returns the value found (a backend, or the redirect
// map's 1 or 0), or "", and the model's entry that holds it.
func (e *explainer) lookup(mapName, host, path string) (value, entry string) {
	key := host + path
	wkey := wildcardKey(host) + path
	wild := false
	if d := wildcardKey(host); d != host {
		_, wild = e.modelStr(model.MapWildcardDomain, d)
	}
	tries := []struct{ key, typ string }{{"=" + key, "str"}, {key, "beg"}}
	if wild {
		tries = append(tries, struct{ key, typ string }{"=" + wkey, "str"}, struct{ key, typ string }{wkey, "beg"})
	}
	for _, t := range tries {
		var be, hit string
		if t.typ == "str" {
			be, _ = e.modelStr(mapName, t.key)
			hit = t.key
		} else {
			be, hit = e.modelBeg(mapName, t.key)
		}
		live := e.ask(mapName, t.key, t.typ)
		st := Step{Stage: "lookup", Detail: fmt.Sprintf("%s %s key %q", mapName, map[string]string{"str": "exact", "beg": "longest prefix"}[t.typ], t.key),
			Model: orNone(be), HAProxy: live}
		if be != "" {
			st.Model = be + " (entry " + hit + ")"
		}
		st.Disagree = live != "" && live != orNone(be)
		e.step(st)
		if got := decided(be, live); got != "" {
			return got, hit
		}
	}
	return "", ""
}

// decided is what a step decides: HAProxy's answer when it gave one (it is what happens), else the
// model's.
func decided(model, live string) string {
	switch {
	case live == "none":
		return ""
	case live == "" || strings.HasPrefix(live, "error: ") || strings.HasPrefix(live, "HAProxy does not use"):
		return model
	}
	return live
}

// ask returns HAProxy's answer to `get map` for key with matching method typ: the value, "none", or
// "" when HAProxy was not asked or could not answer (noted in the step's detail by the caller).
func (e *explainer) ask(mapName, key, typ string) string {
	if e.admin == nil {
		return ""
	}
	path, ok := e.paths.Maps[mapName]
	if !ok {
		return ""
	}
	res, err := socket.GetMap(e.ctx, e.admin, path, key)
	if err != nil {
		return "error: " + err.Error()
	}
	for _, r := range res {
		if r.Type == typ {
			if !r.Found {
				return "none"
			}
			return r.Value
		}
	}
	return "HAProxy does not use " + mapName + " with " + typ
}

// modelIndex indexes the applied state for the replay: a map's entries by key, backends' Routes,
// certificates by SNI. Built once per snapshot, so that doctor's walk over every Route stays linear.
type modelIndex struct {
	maps    map[string]map[string]string
	routeOf map[string]string
	certOf  map[string]string
	// onHost are the Routes by host ("*.domain" for wildcard Routes).
	onHost map[string][]model.RouteInfo
}

func newModelIndex(cfg *model.Config) *modelIndex {
	ix := &modelIndex{maps: map[string]map[string]string{}, routeOf: map[string]string{}, certOf: map[string]string{},
		onHost: map[string][]model.RouteInfo{}}
	for _, m := range cfg.Maps {
		entries := make(map[string]string, len(m.Entries))
		for _, en := range m.Entries {
			entries[en.Key] = en.Value
		}
		ix.maps[m.Name] = entries
	}
	for _, r := range cfg.Routes {
		ix.onHost[r.Host] = append(ix.onHost[r.Host], r)
		if _, ok := ix.routeOf[r.Backend]; !ok {
			ix.routeOf[r.Backend] = r.Namespace + "/" + r.Name
		}
	}
	for _, c := range cfg.Certificates {
		for _, name := range c.SNI {
			ix.certOf[name] = c.Name
		}
	}
	return ix
}

// modelStr is map_str on the model: the value of key.
func (e *explainer) modelStr(mapName, key string) (string, bool) {
	v, ok := e.ix.maps[mapName][key]
	return v, ok
}

// modelBeg is map_beg on the model: the value of the longest entry that key starts with (entries
// starting with "=", the exact ones, never match a prefix: no host starts with "=").
func (e *explainer) modelBeg(mapName, key string) (value, entry string) {
	m := e.ix.maps[mapName]
	for i := len(key); i > 0; i-- {
		if v, ok := m[key[:i]]; ok {
			return v, key[:i]
		}
	}
	return "", ""
}

// modelTCP is public_ssl's lookup: the exact SNI, then "*.domain" when the domain has a wildcard
// Route. It returns the backend ("" when none) and the key that decided.
func (e *explainer) modelTCP(sni string) (string, string) {
	if be, ok := e.modelStr(model.MapTCP, sni); ok {
		return be, sni
	}
	w := wildcardKey(sni)
	if _, ok := e.modelStr(model.MapWildcardDomain, w); ok && w != sni {
		if be, ok := e.modelStr(model.MapTCP, w); ok {
			return be, w
		}
	}
	return "", sni
}

func (e *explainer) routeOf(backend string) string { return e.ix.routeOf[backend] }

// backendServers lists backend's servers as HAProxy reports them and turns a Served verdict into
// NoUsableServer when none takes traffic.
func (s *Snapshot) backendServers(backend, verdict string) ([]ServerRow, string) {
	if s.Servers == nil {
		return nil, verdict
	}
	var rows []ServerRow
	usable := 0
	for _, sv := range s.Servers[backend] {
		row := ServerRow{Name: sv.Server, Addr: net.JoinHostPort(sv.Addr, fmt.Sprint(sv.Port)), Usable: usableServer(sv), State: serverState(sv)}
		if row.Usable {
			usable++
		}
		rows = append(rows, row)
	}
	if usable == 0 && (verdict == VerdictServed || verdict == VerdictPassthrough) {
		verdict = VerdictNoServer
	}
	return rows, verdict
}

// hostRoutes fills the Routes of host other than the one reached, and the rejected ones.
func (s *Snapshot) hostRoutes(out *Explanation, host string) {
	if s.State == nil || s.State.Applied == nil {
		return
	}
	routes := s.index.onHost[host]
	if w := wildcardKey(host); w != host {
		routes = append(slices.Clone(routes), s.index.onHost[w]...)
	}
	for _, r := range routes {
		if id := r.Namespace + "/" + r.Name; id != out.Route {
			out.Competing = append(out.Competing, id+" (path "+orDash(r.Path)+")")
		}
	}
	for _, p := range s.State.Problems {
		if !p.Warning && strings.Contains(p.Message, host) {
			out.Rejected = append(out.Rejected, p.Namespace+"/"+p.Name+": "+p.Reason+": "+p.Message)
		}
	}
	if out.Verdict == VerdictDefault && len(out.Rejected) > 0 {
		out.Hint += "; a Route for this host was rejected (see Rejected)"
	}
}

func serverState(sv socket.ServerState) string {
	switch {
	case sv.AdminState&adminMaint != 0:
		return "maint"
	case sv.AdminState&adminDrain != 0:
		return "drain"
	case sv.OpState == opRunning:
		return "up"
	}
	return "down"
}

// hostOf returns the host the request names: the Host override, else the URL's.
func hostOf(req Request) string {
	if req.Host != "" {
		return req.Host
	}
	if u, err := url.Parse(req.URL); err == nil {
		return u.Host
	}
	return ""
}

// normalizeHost is what the frontends do to the Host header: lower-case, port and one trailing dot
// removed.
func normalizeHost(h string) string {
	h = strings.ToLower(h)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(h, ".")
}

// wildcardKey replaces the first label of host with "*" (as regsub(^[^.]*,*) does).
func wildcardKey(host string) string {
	if i := strings.IndexByte(host, '.'); i >= 0 {
		return "*" + host[i:]
	}
	return "*"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
