package mapping_test

import (
	"net/netip"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// The invariants FuzzTranslateRender checks on every render: nothing in the files that the input's own
// Routes do not explain. They read the files as HAProxy would, and the model only to name what the
// Routes produced.

// Where the default layout puts its files, relative to the HAProxy directory.
const (
	fuzzConfigFile = layout.Config
	fuzzCrtList    = layout.ConfDir + "/" + model.CertList
	fuzzCertDir    = layout.CertDir
	fuzzCADir      = layout.CADir
)

// Sections of the default layout.
var (
	layoutFrontends = []string{model.FrontendPublic, model.FrontendPublicSSL, model.FrontendSNI, model.FrontendNoSNI, "stats"}
	layoutBackends  = map[string]string{model.SNIBackend: "fe_sni", model.NoSNIBackend: "fe_no_sni", model.DefaultBackend: ""}
	standardMapList = []string{model.MapHTTP, model.MapEdgeReencrypt, model.MapHTTPRedirect, model.MapTCP, model.MapWildcardDomain, model.MapForwardedHeaders, model.MapCookieSameSite, model.MapCookieNames, model.MapHeaderValues, model.MapTimeoutServer, model.MapTimeoutTunnel, model.MapHSTS}
)

// twoWordDirectives are the directives whose second word says what they do: a directive is told by
// its first two words for these, by its first word otherwise.
var twoWordDirectives = []string{"http-request", "http-response", "tcp-request", "option", "timeout", "capture", "stats"}

// directiveKey returns the directive of a configuration line (without its leading spaces).
func directiveKey(line string) string {
	f := strings.Fields(line)
	if len(f) >= 2 && slices.Contains(twoWordDirectives, f[0]) {
		return f[0] + " " + f[1]
	}
	return f[0]
}

// templateLines is what the default template can write: its directives and its comment lines.
type templateLines struct {
	directives map[string]bool
	comments   map[string]bool
}

// templateDirectives reads the default template and collects the directive of every line it writes
// literally (a server line comes from serverLine), and its comment lines; template comments and
// actions are skipped.
func templateDirectives(tb testing.TB) templateLines {
	tb.Helper()
	text := string(readFile(tb, filepath.Join("render", "haproxy.cfg.tmpl")))
	out := templateLines{directives: map[string]bool{"server": true}, comments: map[string]bool{}}
	inComment := false
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case inComment:
			inComment = !strings.Contains(l, "*/")
		case strings.HasPrefix(l, "{{") && strings.Contains(l, "/*"):
			inComment = !strings.Contains(l, "*/")
		case l == "" || strings.HasPrefix(l, "{{"):
		case strings.HasPrefix(l, "#"):
			out.comments[l] = true
		default:
			out.directives[directiveKey(l)] = true
		}
	}
	if len(out.directives) < 40 || len(out.comments) == 0 {
		tb.Fatalf("the default template gave %d directives and %d comments: is render/haproxy.cfg.tmpl read right?", len(out.directives), len(out.comments))
	}
	return out
}

// fatalT is the part of testing.TB the checks use (a test of the checks records their failures).
type fatalT interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkRender runs every check of one input's translation and render.
func checkRender(t fatalT, in mapping.Input, opts mapping.Options, cfg *model.Config, files []render.File, tl templateLines) {
	t.Helper()
	c := newRenderCheck(t, in, opts, cfg, files)
	c.checkFiles()
	c.checkConfigText(tl)
	c.checkMaps()
	c.checkCrtList()
	c.checkServers()
}

// renderCheck holds one input, its translation and its render.
type renderCheck struct {
	t      fatalT
	opts   mapping.Options
	cfg    *model.Config
	files  map[string][]byte
	config []byte                         // what HAProxy reads: render.Configuration
	routes map[string]*routev1.Route      // input Routes by "ns/name"
	infos  []model.RouteInfo              // admitted Routes
	byName map[string]*model.Backend      // model backends
	certOf map[string][]model.RouteInfo   // admitted Routes by certificate name
	addrs  map[string]map[netip.Addr]bool // endpoint addresses (and idled Services' cluster IPs) of the input by namespace
}

func newRenderCheck(t fatalT, in mapping.Input, opts mapping.Options, cfg *model.Config, files []render.File) *renderCheck {
	c := &renderCheck{t: t, opts: opts, cfg: cfg, files: map[string][]byte{}, routes: map[string]*routev1.Route{},
		infos: cfg.Routes, byName: map[string]*model.Backend{}, certOf: map[string][]model.RouteInfo{}, addrs: map[string]map[netip.Addr]bool{}}
	for _, f := range files {
		c.files[f.Path] = f.Data
	}
	c.config = render.Configuration(files)
	for _, r := range in.Routes {
		c.routes[r.Namespace+"/"+r.Name] = r
	}
	for _, b := range cfg.Backends {
		c.byName[b.Name] = b
	}
	addAddr := func(ns, a string) {
		if addr, err := netip.ParseAddr(a); err == nil {
			if c.addrs[ns] == nil {
				c.addrs[ns] = map[netip.Addr]bool{}
			}
			c.addrs[ns][addr] = true
		}
	}
	for _, s := range in.EndpointSlices {
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				addAddr(s.Namespace, a)
			}
		}
	}
	// An idled Service is served at its cluster IP.
	for _, s := range in.Services {
		if s.Annotations[mapping.AnnotationIdledAt] != "" {
			addAddr(s.Namespace, s.Spec.ClusterIP)
		}
	}
	c.checkRouteInfos()
	return c
}

// checkRouteInfos checks that every admitted Route and every backend comes from a Route of the input.
func (c *renderCheck) checkRouteInfos() {
	t := c.t
	t.Helper()
	served := map[string]bool{}
	for _, ri := range c.infos {
		key := ri.Namespace + "/" + ri.Name
		r, ok := c.routes[key]
		if !ok {
			t.Fatalf("admitted Route %s is not in the input", key)
		}
		if ri.Path != r.Spec.Path {
			t.Fatalf("admitted Route %s has path %q, the input %q", key, ri.Path, r.Spec.Path)
		}
		if !c.hostExplained(ri.Host, r) {
			t.Fatalf("admitted Route %s has host %q, which its spec.host %q does not explain", key, ri.Host, r.Spec.Host)
		}
		b, ok := c.byName[ri.Backend]
		if !ok || b.Route != key {
			t.Fatalf("admitted Route %s names backend %q, which the model has not for it", key, ri.Backend)
		}
		if ri.Certificate != "" {
			c.certOf[ri.Certificate] = append(c.certOf[ri.Certificate], ri)
		}
		served[ri.Backend] = true
	}
	for _, b := range c.cfg.Backends {
		if b.Spare || b.Retired || !served[b.Name] {
			t.Fatalf("backend %s serves no admitted Route of the input", b.Name)
		}
		ns, name, _ := strings.Cut(b.Route, "/")
		if b.Name != model.BackendName(b.Kind, ns, name) {
			t.Fatalf("backend %s of Route %s is not named after it", b.Name, b.Route)
		}
	}
}

// hostExplained reports whether host is what Route r asks for: its spec.host (or the host
// ROUTER_SUBDOMAIN gives it), or the "*.<domain>" of a wildcard Route.
func (c *renderCheck) hostExplained(host string, r *routev1.Route) bool {
	want := strings.ToLower(r.Spec.Host)
	if want == "" && r.Spec.Subdomain != "" && c.opts.Domain != "" {
		want = strings.ToLower(r.Spec.Subdomain) + "." + c.opts.Domain
	}
	if c.opts.Subdomain != "" && (want == "" || c.opts.OverrideHostname) {
		want = strings.ToLower(strings.NewReplacer("${name}", r.Name, "${namespace}", r.Namespace).Replace(c.opts.Subdomain))
	}
	if host == want {
		return true
	}
	domain, wild := strings.CutPrefix(host, "*.")
	return wild && r.Spec.WildcardPolicy == routev1.WildcardPolicySubdomain &&
		(want == host || strings.HasSuffix(want, "."+domain))
}

// checkFiles checks that the render is exactly the layout's files: the configuration, the crt-list,
// the default certificate, the error pages, the five maps, one file per certificate and CA file of the
// model, the default backend file and the backend file of every backend.
func (c *renderCheck) checkFiles() {
	t := c.t
	t.Helper()
	want := map[string]bool{fuzzConfigFile: true, fuzzCrtList: true, layout.DefaultCertificate: true,
		layout.ErrorPage503: true, layout.ErrorPage404: true}
	for _, m := range standardMapList {
		want[layout.InConf(m)] = true
	}
	for _, crt := range c.cfg.Certificates {
		want[path.Join(fuzzCertDir, crt.Name)] = true
	}
	for _, ca := range c.cfg.CAFiles {
		want[path.Join(fuzzCADir, ca.Name)] = true
	}
	want[render.DefaultBackendFile] = true
	for _, b := range c.cfg.Backends {
		want[render.ShardFile(b.Name)] = true
	}
	for p, data := range c.files {
		if !want[p] || !filepath.IsLocal(p) || path.Clean(p) != p {
			t.Fatalf("render wrote %q, which is not a file of the layout", p)
		}
		if strings.HasSuffix(p, ".pem") && model.HasBlankLine(string(data)) {
			t.Fatalf("%s has a blank line, which would end a runtime payload", p)
		}
	}
	if len(c.files) != len(want) {
		t.Fatalf("render wrote %d files, the layout has %d", len(c.files), len(want))
	}
}

// checkConfigText reads the configuration (haproxy.cfg and the backend files) line by line.
func (c *renderCheck) checkConfigText(tl templateLines) {
	t := c.t
	t.Helper()
	text := c.config
	for i, b := range text {
		if (b < ' ' && b != '\n') || b == 0x7f {
			t.Fatalf("haproxy.cfg byte %d is %#x: a control character", i, b)
		}
	}
	var (
		section, name string
		frontends     = map[string]bool{}
		backends      = map[string]bool{}
		servers       = map[string]bool{} // "backend/server#branch"
		// branch is the arm of the conditional block (.if version_atleast(...)) the line is in: the
		// two arms give HAProxy versions their own lines, so a server appears once per arm.
		branch string
	)
	for n, l := range strings.Split(string(text), "\n") {
		line := strings.TrimSpace(l)
		if line == "" {
			continue
		}
		where := "haproxy.cfg line " + strconv.Itoa(n+1) + " " + strconv.Quote(line)
		// Inside single quotes HAProxy expands nothing; a Route's header names and values are written
		// there (UTF-8 included, as OpenShift writes them).
		bare := unquoted(line)
		for i := 0; i < len(bare); i++ {
			if bare[i] >= 0x7f {
				t.Fatalf("%s: byte %#x outside single quotes: only printable ASCII may be written there", where, bare[i])
			}
		}
		if strings.Contains(bare, "${") {
			t.Fatalf("%s: environment expansion", where)
		}
		key := directiveKey(line)
		// The log format is the router's own setting (ROUTER_SYSLOG_FORMAT), passed through as
		// OpenShift does; nothing of a Route reaches it.
		if strings.Contains(line, "%[env(") && key != "log-format" {
			t.Fatalf("%s: reads the environment", where)
		}
		if strings.HasPrefix(line, "#") {
			if !tl.comments[line] {
				t.Fatalf("%s: a comment the default template does not write", where)
			}
			continue
		}
		if !tl.directives[key] {
			t.Fatalf("%s: directive %q is not one the default template writes", where, key)
		}
		f := strings.Fields(line)
		switch key {
		case "global", "defaults":
			section, name = key, ""
		case "frontend":
			if !fromDefaults(f) || !slices.Contains(layoutFrontends, f[1]) || frontends[f[1]] {
				t.Fatalf("%s: not a frontend of the layout, or twice", where)
			}
			section, name = key, f[1]
			frontends[name] = true
		case "backend":
			_, layout := layoutBackends[f[1]]
			_, known := c.byName[f[1]]
			if !fromDefaults(f) || (!layout && !known) || backends[f[1]] {
				t.Fatalf("%s: a backend neither the layout nor the model has, or twice", where)
			}
			section, name = key, f[1]
			backends[name] = true
		case ".if", ".elif", ".else":
			branch = key
		case ".endif":
			branch = ""
		case "server":
			c.checkServerLine(where, section, name, f)
			if servers[name+"/"+f[1]+"#"+branch] {
				t.Fatalf("%s: server twice in backend %s", where, name)
			}
			servers[name+"/"+f[1]+"#"+branch] = true
		}
	}
	for _, b := range c.cfg.Backends {
		if !backends[b.Name] {
			t.Fatalf("backend %s of the model is not in haproxy.cfg", b.Name)
		}
		for _, s := range b.Servers {
			k := b.Name + "/" + s.Name + "#"
			if !servers[k] && (!servers[k+".if"] || !servers[k+".else"]) {
				t.Fatalf("server %s of backend %s is not in haproxy.cfg", s.Name, b.Name)
			}
		}
	}
}

// fromDefaults reports whether a section's header line (its fields f) is "<keyword> <name>" or
// "<keyword> <name> from <defaults>", where defaults is the main defaults section or a backend
// profile.
func fromDefaults(f []string) bool {
	if len(f) == 2 {
		return true
	}
	if len(f) != 4 || f[2] != "from" {
		return false
	}
	return f[3] == model.MainDefaults || slices.ContainsFunc(model.Profiles(), func(p model.Profile) bool { return p.Name == f[3] })
}

// unquoted returns a configuration line without its single-quoted parts (a quote closes them; outside,
// a backslash escapes the next byte, as in 'it'\”s').
func unquoted(line string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '\\' && i+1 < len(line):
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// checkServerLine checks a "server <name> <address> ..." line of a backend.
func (c *renderCheck) checkServerLine(where, section, backend string, f []string) {
	t := c.t
	t.Helper()
	if section != "backend" || len(f) < 3 {
		t.Fatalf("%s: a server outside a backend", where)
	}
	if fe, layout := layoutBackends[backend]; layout {
		if f[1] != fe || fe == "" {
			t.Fatalf("%s: not the server of the layout's backend %s", where, backend)
		}
		return
	}
	i := slices.IndexFunc(c.byName[backend].Servers, func(s model.Server) bool { return s.Name == f[1] })
	if i < 0 {
		t.Fatalf("%s: backend %s has no such server in the model", where, backend)
	}
	s := c.byName[backend].Servers[i]
	if want := netip.AddrPortFrom(netip.MustParseAddr(s.Addr), uint16(s.Port)).String(); f[2] != want {
		t.Fatalf("%s: address %s, the model's %s", where, f[2], want)
	}
	// A cookie value is OpenShift's for the server, and only in a backend with a cookie.
	if i := slices.Index(f, "cookie"); i >= 0 {
		if i+1 >= len(f) || f[i+1] != model.ServerCookie(s.Name) || c.byName[backend].Cookie == nil {
			t.Fatalf("%s: cookie value is not OpenShift's (%s) or the backend has no cookie", where, model.ServerCookie(s.Name))
		}
	}
}

// checkServers checks every server of the model: an endpoint address of the Route's own namespace,
// none of the router's addresses, and none of the kinds of address Translate refuses.
func (c *renderCheck) checkServers() {
	t := c.t
	t.Helper()
	for _, b := range c.cfg.Backends {
		ns, _, _ := strings.Cut(b.Route, "/")
		for _, s := range b.Servers {
			a, err := netip.ParseAddr(s.Addr)
			switch {
			case err != nil:
				t.Fatalf("backend %s server %s: address %q: %v", b.Name, s.Name, s.Addr, err)
			case !c.addrs[ns][a]:
				t.Fatalf("backend %s server %s: %s is no endpoint address of namespace %s in the input", b.Name, s.Name, a, ns)
			case !strings.HasPrefix(s.Service, ns+"/"):
				t.Fatalf("backend %s server %s: Service %q is not in the Route's namespace %s", b.Name, s.Name, s.Service, ns)
			case slices.Contains(c.opts.RouterAddresses, a):
				t.Fatalf("backend %s server %s: %s is the router's own address", b.Name, s.Name, a)
			case a.Zone() != "" || a.Is4In6() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast() ||
				(a.IsLoopback() && !c.opts.AllowLoopbackEndpoints):
				t.Fatalf("backend %s server %s: %s is a refused kind of address", b.Name, s.Name, a)
			case s.Port < 1 || s.Port > 65535:
				t.Fatalf("backend %s server %s: port %d", b.Name, s.Name, s.Port)
			}
		}
	}
}

// checkMaps reads the five map files: every line is "key value" with two non-empty words of
// printable ASCII, no key twice, and an admitted Route explains the entry (mapEntryExplained).
func (c *renderCheck) checkMaps() {
	t := c.t
	t.Helper()
	for _, m := range standardMapList {
		data := string(c.files[layout.InConf(m)])
		if data != "" && !strings.HasSuffix(data, "\n") {
			t.Fatalf("%s does not end with a line break", m)
		}
		seen := map[string]bool{}
		for l := range strings.SplitSeq(strings.TrimSuffix(data, "\n"), "\n") {
			if data == "" {
				break
			}
			key, value, ok := strings.Cut(l, " ")
			if !ok || !model.ValidMapToken(key) || !model.ValidMapToken(value) {
				t.Fatalf("%s line %q is not \"key value\"", m, l)
			}
			if seen[key] {
				t.Fatalf("%s has key %q twice", m, key)
			}
			seen[key] = true
			if !c.mapEntryExplained(m, key, value) {
				t.Fatalf("%s line %q: no admitted Route of the input explains it", m, l)
			}
		}
	}
}

// mapEntryExplained reports whether an admitted Route gives this entry of map m.
func (c *renderCheck) mapEntryExplained(m, key, value string) bool {
	for _, ri := range c.infos {
		terminated := ri.Termination == string(routev1.TLSTerminationEdge) || ri.Termination == string(routev1.TLSTerminationReencrypt)
		switch m {
		case model.MapHTTP:
			plain := ri.Termination == "" || (terminated && ri.InsecurePolicy == string(routev1.InsecureEdgeTerminationPolicyAllow))
			if plain && value == ri.Backend && slices.Contains(hostPathKeys(ri.Host, ri.Path), key) {
				return true
			}
		case model.MapEdgeReencrypt:
			if terminated && value == ri.Backend && slices.Contains(hostPathKeys(ri.Host, ri.Path), key) {
				return true
			}
		case model.MapHTTPRedirect:
			redirects := ri.Termination != "" && ri.InsecurePolicy == string(routev1.InsecureEdgeTerminationPolicyRedirect)
			if (value == "1") == redirects && (value == "1" || value == "0") && slices.Contains(hostPathKeys(ri.Host, ri.Path), key) {
				return true
			}
		case model.MapTCP:
			passthrough := ri.Termination == string(routev1.TLSTerminationPassthrough) && value == ri.Backend
			if key == ri.Host && (passthrough || (terminated && value == model.SNIBackend)) {
				return true
			}
		case model.MapWildcardDomain:
			if key == ri.Host && strings.HasPrefix(key, "*.") && value == "1" {
				return true
			}
		case model.MapCookieSameSite:
			// The SameSite of a Secure cookie: edge and reencrypt Routes whose policy is not Allow.
			secure := (ri.Termination == string(routev1.TLSTerminationEdge) || ri.Termination == string(routev1.TLSTerminationReencrypt)) &&
				ri.InsecurePolicy != string(routev1.InsecureEdgeTerminationPolicyAllow)
			if key == ri.Backend && secure && slices.Contains([]string{"Lax", "Strict", "None"}, value) {
				return true
			}
		case model.MapCookieNames:
			// The cookie name of a backend with a sticky cookie: a valid cookie name.
			if b := c.cfg.Backend(key); key == ri.Backend && b != nil && b.Cookie != nil && value == b.Cookie.Name && value != "" {
				return true
			}
		case model.MapForwardedHeaders:
			// A policy other than the router default, for an HTTP-mode Route.
			if key == ri.Backend && ri.Termination != string(routev1.TLSTerminationPassthrough) &&
				slices.Contains(model.ForwardedPolicies(), value) && value != c.opts.ForwardedHeaders {
				return true
			}
		case model.MapHSTS:
			// The HTTP backend's HSTS value, encoded.
			if b := c.cfg.Backend(key); key == ri.Backend && b != nil && b.HSTS != "" {
				if v, ok := model.MappedHeaderValue(b.HSTS); ok && v == value {
					return true
				}
			}
		case model.MapTimeoutServer, model.MapTimeoutTunnel:
			// The HTTP backend's own timeout, in milliseconds.
			b := c.cfg.Backend(key)
			v := b.TimeoutServer
			if m == model.MapTimeoutTunnel {
				v = b.TimeoutTunnel
			}
			if ms, ok := model.TimeoutMillis(v); key == ri.Backend && b.Mode == model.ModeHTTP && ok && strconv.FormatInt(ms, 10) == value {
				return true
			}
		case model.MapHeaderValues:
			// The literal value of the Route's Set action the key names, encoded.
			if c.headerValueExplained(ri, key, value) {
				return true
			}
		}
	}
	return false
}

// headerValueExplained reports whether a haroute_header_values.map entry is the value of a Set action
// of the admitted Route ri: key "<backend>/req/<i>" or "<backend>/res/<i>" names action i of the
// request or response list, whose value encodes to value.
func (c *renderCheck) headerValueExplained(ri model.RouteInfo, key, value string) bool {
	rest, ok := strings.CutPrefix(key, ri.Backend+"/")
	r := c.routes[ri.Namespace+"/"+ri.Name]
	if !ok || r == nil || r.Spec.HTTPHeaders == nil {
		return false
	}
	dir, index, _ := strings.Cut(rest, "/")
	list := map[string][]routev1.RouteHTTPHeader{"req": r.Spec.HTTPHeaders.Actions.Request, "res": r.Spec.HTTPHeaders.Actions.Response}[dir]
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 || i >= len(list) || list[i].Action.Set == nil {
		return false
	}
	enc, ok := model.MappedHeaderValue(list[i].Action.Set.Value)
	return ok && enc == value
}

// hostPathKeys returns the keys a Route of host and path may have in a host+path map
// (docs/matching.md): "=host+path" and "host+path/" for a path without a trailing "/", else
// "host+path" (and "host/" for the empty path).
func hostPathKeys(host, p string) []string {
	switch {
	case p == "" || p == "/":
		return []string{host + "/"}
	case strings.HasSuffix(p, "/"):
		return []string{host + p}
	}
	return []string{"=" + host + p, host + p + "/"}
}

// checkCrtList reads the crt-list: each line names the certificate file of an admitted Route, under
// the render's certificate directory, for that Route's host only; each certificate has one line.
func (c *renderCheck) checkCrtList() {
	t := c.t
	t.Helper()
	seen := map[string]bool{}
	data := strings.TrimSuffix(string(c.files[fuzzCrtList]), "\n")
	for l := range strings.SplitSeq(data, "\n") {
		if data == "" {
			break
		}
		f := strings.Fields(l)
		if len(f) < 2 || strings.Join(f, " ") != l {
			t.Fatalf("crt-list line %q is not \"<file> [alpn <list>] <sni>...\"", l)
		}
		name, ok := strings.CutPrefix(f[0], fuzzDir+"/"+fuzzCertDir+"/")
		if !ok || c.files[path.Join(fuzzCertDir, name)] == nil || seen[name] {
			t.Fatalf("crt-list line %q: not a certificate file of the render, or twice", l)
		}
		seen[name] = true
		owners := c.certOf[name]
		if len(owners) == 0 {
			t.Fatalf("crt-list line %q: certificate %s belongs to no admitted Route", l, name)
		}
		snis := f[1:]
		if len(snis) >= 2 && snis[0] == "[alpn" && strings.HasSuffix(snis[1], "]") {
			snis = snis[2:]
		}
		if len(snis) == 0 {
			t.Fatalf("crt-list line %q: no SNI filter (it would serve the certificate for every name)", l)
		}
		for _, sni := range snis {
			if !slices.ContainsFunc(owners, func(ri model.RouteInfo) bool { return ri.Host == sni }) {
				t.Fatalf("crt-list line %q: SNI %s is no host of the Routes of %s", l, sni, name)
			}
		}
	}
	for _, crt := range c.cfg.Certificates {
		if !seen[crt.Name] {
			t.Fatalf("certificate %s has no crt-list line", crt.Name)
		}
	}
}
