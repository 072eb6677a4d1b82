package render

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/haroute/haroute/mapping/model"
)

// allowlistChunkSize is the number of addresses per "acl allowlist src" line; HAProxy limits the
// number of words on a line, and ACLs of the same name OR together.
const allowlistChunkSize = 40

// funcs holds what the template functions of one rendering need. The zero value provides the
// functions' signatures for parsing; its path functions fail when executed.
type funcs struct {
	data  *Data
	env   func(string) string
	certs map[string]bool
	cas   map[string]bool
	// tmpl is the template being executed (for backendBlock) and renderer the Renderer executing
	// it, whose blocks backendBlock reuses.
	tmpl     *template.Template
	renderer *Renderer
	// blockCalls counts the backendBlock calls of this execution.
	blockCalls int
}

func newFuncs(data *Data, env func(string) string) *funcs {
	certs, cas := map[string]bool{}, map[string]bool{}
	for _, c := range data.Config.Certificates {
		certs[c.Name] = true
	}
	for _, c := range data.Config.CAFiles {
		cas[c.Name] = true
	}
	return newFuncsFor(data, env, certs, cas)
}

// newFuncsFor is newFuncs with the sets of certificate and CA file names made already (read only).
func newFuncsFor(data *Data, env func(string) string, certs, cas map[string]bool) *funcs {
	if certs == nil {
		certs = map[string]bool{}
	}
	if cas == nil {
		cas = map[string]bool{}
	}
	return &funcs{data: data, env: env, certs: certs, cas: cas}
}

// funcMap returns the functions available to templates. The OpenShift-compatible ones keep the
// meaning of OpenShift's documented template functions.
func (f *funcs) funcMap() template.FuncMap {
	m := template.FuncMap{
		// OpenShift-compatible.
		"env":                        f.envFunc,
		"matchPattern":               matchPattern,
		"isInteger":                  isInteger,
		"matchValues":                matchValues,
		"generateRouteRegexp":        generateRouteRegexp,
		"genSubdomainWildcardRegexp": genSubdomainWildcardRegexp,
		"genCertificateHostName":     genCertificateHostName,
		// haroute's.
		"mapPath":            f.mapPath,
		"cookieEngineName":   func() string { return model.CookieEngineName },
		"mainDefaults":       func() string { return model.MainDefaults },
		"profiles":           model.Profiles,
		"certPath":           f.certPath,
		"caPath":             f.caPath,
		"bindAddr":           f.bindAddr,
		"isUnixBind":         isUnixBind,
		"serverAddress":      serverAddress,
		"serverLine":         f.serverLine,
		"serverCookie":       serverCookie,
		"cookieServers":      f.cookieServers,
		"serverArm":          f.serverArm,
		"namesHeader":        namesHeader,
		"backendBlock":       f.backendBlock,
		"checkInterval":      f.checkInterval,
		"forwardedHeaders":   f.forwardedHeaders,
		"forwardedDefault":   f.forwardedDefault,
		"allowlistChunks":    allowlistChunks,
		"rewriteRegexp":      rewriteRegexp,
		"rewriteReplacement": rewriteReplacement,
		"quoteLogFormat":     quoteLogFormat,
		"word":               word,
		"fail":               fail,
	}
	for name, fn := range f.listenerFuncs() {
		m[name] = fn
	}
	return m
}

var errNoRender = errors.New("template function used outside of Render")

// envFunc returns the environment variable name from Options.Env, or the first default when it is
// empty (OpenShift's env).
func (f *funcs) envFunc(name string, defaults ...string) string {
	v := ""
	if f.env != nil {
		v = f.env(name)
	}
	if v == "" && len(defaults) > 0 {
		v = defaults[0]
	}
	return v
}

// matchPattern reports whether the regular expression pattern matches all of s.
func matchPattern(pattern, s string) (bool, error) {
	ok, err := regexp.MatchString(`^(?:`+pattern+`)$`, s)
	if err != nil {
		return false, fmt.Errorf("matchPattern %q: %w", pattern, err)
	}
	return ok, nil
}

// isInteger reports whether s parses as a decimal integer.
func isInteger(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// matchValues reports whether s equals one of values.
func matchValues(s string, values ...string) bool {
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}

// generateRouteRegexp returns OpenShift's regular expression for a Route: host (any single label in
// place of the first one when wildcard), an optional trailing dot and port, then the path and its
// sub-paths at a segment boundary (a path ending in "/" is a plain prefix; "" and "/" match everything).
func generateRouteRegexp(host, routePath string, wildcard bool) string {
	hostRE := regexp.QuoteMeta(host)
	if wildcard {
		if domain := model.ParentDomain(host); domain != "" {
			hostRE = `[^\.]*\.` + regexp.QuoteMeta(domain)
		}
	}
	var pathRE, subRE string
	switch {
	case strings.TrimRight(routePath, "/") == "":
		subRE = `(/.*)?`
	case strings.HasSuffix(routePath, "/"):
		pathRE, subRE = regexp.QuoteMeta(routePath), `(.*)?`
	default:
		pathRE, subRE = regexp.QuoteMeta(routePath), `(/.*)?`
	}
	return `^` + hostRE + `\.?(:[0-9]+)?` + pathRE + subRE + `$`
}

// genSubdomainWildcardRegexp returns a regular expression matching host+path for any single label in
// place of host's first label; with exactPath only path itself, else also its sub-paths.
func genSubdomainWildcardRegexp(host, routePath string, exactPath bool) string {
	expr := `^[^\.]*` + regexp.QuoteMeta("."+model.ParentDomain(host)+routePath)
	if exactPath {
		return expr + `$`
	}
	return expr + `(|/.*)$`
}

// genCertificateHostName returns the name a Route's certificate is served for: host, or "*.<domain>"
// for a wildcard Route.
func genCertificateHostName(host string, wildcard bool) string {
	if wildcard {
		return "*." + model.ParentDomain(host)
	}
	return host
}

// mapPath returns the absolute path of a rendered map file.
func (f *funcs) mapPath(name string) (string, error) {
	if f.data == nil {
		return "", errNoRender
	}
	p, ok := f.data.Paths.Maps[name]
	if !ok {
		return "", fmt.Errorf("mapPath: no map file %q is rendered", name)
	}
	return p, nil
}

// certPath returns the absolute path of a certificate of the model.
func (f *funcs) certPath(name string) (string, error) {
	if f.data == nil {
		return "", errNoRender
	}
	if !f.certs[name] {
		return "", fmt.Errorf("certPath: no certificate %q in the model", name)
	}
	return path.Join(f.data.Paths.CertDir, name), nil
}

// caPath returns the absolute path of a CA file: an absolute name as it is (a configured default
// CA), else the model CA file of that name under router/cacerts.
func (f *funcs) caPath(name string) (string, error) {
	if f.data == nil {
		return "", errNoRender
	}
	if strings.HasPrefix(name, "/") {
		if err := checkAbsPath("caPath", name); err != nil {
			return "", err
		}
		return name, nil
	}
	if !f.cas[name] {
		return "", fmt.Errorf("caPath: no CA file %q in the model", name)
	}
	return path.Join(f.data.Paths.CADir, name), nil
}

// bindAddr returns a frontend's bind address with a relative unix socket made absolute under Dir.
func (f *funcs) bindAddr(bind string) (string, error) {
	if f.data == nil {
		return "", errNoRender
	}
	return resolveBind(f.data.Dir, bind)
}

// isUnixBind reports whether bind is a unix socket ("unix@...").
func isUnixBind(bind string) bool {
	return strings.HasPrefix(bind, unixPrefix)
}

// serverAddress returns "<ip>:<port>", with an IPv6 address in brackets.
func serverAddress(s model.Server) (string, error) {
	ip, err := netip.ParseAddr(s.Addr)
	if err != nil || ip.Zone() != "" {
		return "", fmt.Errorf("server %q: address %q: want an IP address without zone", s.Name, s.Addr)
	}
	if s.Port < 1 || s.Port > 65535 {
		return "", fmt.Errorf("server %q: invalid port %d", s.Name, s.Port)
	}
	host := s.Addr
	if ip.Is6() {
		host = "[" + s.Addr + "]"
	}
	return host + ":" + strconv.Itoa(int(s.Port)), nil
}

// checkInterval returns the backend's health-check interval, else the settings' default ("" when
// neither is set).
func (f *funcs) checkInterval(b model.Backend) string {
	if b.CheckInterval != "" || f.data == nil {
		return b.CheckInterval
	}
	return f.data.Config.Settings.CheckInterval
}

// forwardedHeaders returns the backend's forwarded-headers policy, else the settings' default, else
// OpenShift's default "append".
func (f *funcs) forwardedHeaders(b model.Backend) string {
	switch {
	case b.ForwardedHeaders != "":
		return b.ForwardedHeaders
	case f.data != nil && f.data.Config.Settings.ForwardedHeaders != "":
		return f.data.Config.Settings.ForwardedHeaders
	}
	return "append"
}

// forwardedDefault returns the settings' forwarded-headers policy, else OpenShift's default "append":
// the policy of every backend that model.MapForwardedHeaders does not name.
func (f *funcs) forwardedDefault() string {
	return f.forwardedHeaders(model.Backend{})
}

// serverCookie returns the sticky-session cookie value of s on HAProxy 3.0 and later
// (model.ServerCookie of its name).
func serverCookie(s model.Server) string { return model.ServerCookie(s.Name) }

// namesHeader reports whether one of rules acts on header name (in any case).
func namesHeader(rules []model.HeaderRule, name string) bool {
	for _, r := range rules {
		if strings.EqualFold(r.Name, name) {
			return true
		}
	}
	return false
}

// cookieServers returns the server lines of backend b, which has a cookie, in a conditional block:
// with each server's cookie value (serverCookie) for HAProxy 3.0 and later, whose `add server`
// takes it too, and without it before 3.0, where the backend's dynamic cookies give the values. Each
// line is built once for both arms. The result has no final newline.
func (f *funcs) cookieServers(b model.Backend) (string, error) {
	var withCookie, plain strings.Builder
	for _, s := range b.Servers {
		line, err := f.serverLine(b, s)
		if err != nil {
			return "", err
		}
		withCookie.WriteString("\n  " + line + " cookie " + serverCookie(s))
		plain.WriteString("\n  " + line)
	}
	return ".if version_atleast(3.0)" + withCookie.String() + "\n.else" + plain.String() + "\n.endif", nil
}

// serverArm returns the server lines of backend b for the arm of a conditional block that serves
// HAProxy arm ("3.3", "3.0" or "" for the versions before): serverLine, with the server's cookie value
// from 3.0 (when b has a cookie), and "no-sni-auto" from 3.3 (when b has TLS). Lines are indented and
// joined by newlines, without a final one; "" without servers.
func (f *funcs) serverArm(b model.Backend, arm string) (string, error) {
	var sb strings.Builder
	for i, s := range b.Servers {
		line, err := f.serverLine(b, s)
		if err != nil {
			return "", err
		}
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString("  " + line + serverExtras(b, s, arm >= "3.0", arm >= "3.3"))
	}
	return sb.String(), nil
}

// serverExtras returns what follows serverLine for server s of backend b on an HAProxy that takes
// a server's cookie value (cookie, 3.0+) and has automatic SNI (sni, 3.3+): " cookie <value>" and
// " no-sni-auto", where b has a cookie and TLS. The runtime path adds the same to `add server`.
func serverExtras(b model.Backend, s model.Server, cookie, sni bool) string {
	out := ""
	if cookie && b.Cookie != nil {
		out += " cookie " + serverCookie(s)
	}
	if sni && b.TLS != nil {
		out += " " + NoSNIAuto
	}
	return out
}

// NoSNIAuto is the server keyword that keeps HAProxy 3.3 and later from sending the request's Host
// as SNI to a TLS server: OpenShift's reencrypt sends none, and verifies the server's certificate
// against verifyhost, which an SNI would replace.
const NoSNIAuto = "no-sni-auto"

// serverLine returns the complete "server" line of s in backend b (without indentation). Every
// option is on the line (no default-server), so the same options work for "add server" at runtime,
// the explicit id included (see model.Server.ID).
func (f *funcs) serverLine(b model.Backend, s model.Server) (string, error) {
	if !model.ValidName(s.Name) {
		return "", fmt.Errorf("server %q: invalid name", s.Name)
	}
	if err := checkServer(&b, &s); err != nil {
		return "", err
	}
	addr, err := serverAddress(s)
	if err != nil {
		return "", err
	}
	if s.Weight < 0 || s.Weight > 256 {
		return "", fmt.Errorf("server %q: weight %d out of 0-256", s.Name, s.Weight)
	}
	if s.ID < 1 || s.ID > model.MaxServerID {
		return "", fmt.Errorf("server %q: id %d out of 1-%d", s.Name, s.ID, model.MaxServerID)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "server %s %s id %d weight %d", s.Name, addr, s.ID, s.Weight)
	if b.ServerMaxConn > 0 {
		fmt.Fprintf(&sb, " maxconn %d", b.ServerMaxConn)
	}
	sb.WriteString(" check")
	if ci := f.checkInterval(b); ci != "" {
		if err := checkTimeout("check interval", ci); err != nil {
			return "", fmt.Errorf("server %q: %w", s.Name, err)
		}
		sb.WriteString(" inter " + ci)
	}
	if b.TLS != nil {
		ca, err := f.caPath(b.TLS.CAFile)
		if err != nil {
			return "", fmt.Errorf("server %q: %w", s.Name, err)
		}
		// As OpenShift: no SNI; the name to check only with the default destination CA.
		fmt.Fprintf(&sb, " ssl verify required ca-file %s", ca)
		if s.VerifyHost != "" {
			sb.WriteString(" verifyhost " + s.VerifyHost)
		}
		// As OpenShift: reencrypt backends are offered HTTP/2 unless it is disabled router-wide.
		if f.data != nil && !f.data.Config.Settings.HTTP.DisableHTTP2 {
			sb.WriteString(" alpn h2,http/1.1")
		}
	}
	switch s.State {
	case model.StateReady:
	case model.StateMaint:
		sb.WriteString(" disabled")
	default:
		return "", fmt.Errorf("server %q: state %q cannot be expressed in haproxy.cfg", s.Name, s.State)
	}
	return sb.String(), nil
}

// allowlistChunks splits addresses into space-separated groups of at most 40, one per ACL line.
func allowlistChunks(addrs []string) ([]string, error) {
	var out []string
	for len(addrs) > 0 {
		n := min(len(addrs), allowlistChunkSize)
		for _, a := range addrs[:n] {
			if err := checkAllowlistEntry(a); err != nil {
				return nil, err
			}
		}
		out = append(out, strings.Join(addrs[:n], " "))
		addrs = addrs[n:]
	}
	return out, nil
}

// rewriteRegexp returns the replace-path regular expression of r, for single quotes: the quoted
// prefix (the Route's path), then an optional "/" when SlashOptional, then the rest as group 1.
// OpenShift writes the path into the expression unquoted, so a path holding a metacharacter ('.',
// '+', '(' ...) matches other paths, or no path, or shifts the group; quoted, it matches itself.
func rewriteRegexp(r *model.Rewrite) (string, error) {
	if r == nil {
		return "", errors.New("rewriteRegexp: no rewrite")
	}
	if err := checkQuotedPath("rewrite prefix", r.Prefix); err != nil {
		return "", err
	}
	re := `^` + regexp.QuoteMeta(r.Prefix)
	if r.SlashOptional {
		re += `/?`
	}
	return singleQuoted(re + `(.*)$`), nil
}

// rewriteReplacement returns the replace-path replacement of r, for single quotes: the target as a
// log-format string ('%' written "%%"), then the rest of the path (\1) unless DropRest.
func rewriteReplacement(r *model.Rewrite) (string, error) {
	if r == nil {
		return "", errors.New("rewriteReplacement: no rewrite")
	}
	if err := checkQuotedPath("rewrite target", r.Target); err != nil {
		return "", err
	}
	out := strings.ReplaceAll(r.Target, "%", "%%")
	if !r.DropRest {
		out += `\1`
	}
	return singleQuoted(out), nil
}

// singleQuoted escapes s for the inside of a single-quoted word of haproxy.cfg, as OpenShift does: a
// quote becomes quote, backslash, quote, quote (the quoted part ends, an escaped quote follows, and
// a new quoted part begins).
func singleQuoted(s string) string {
	return strings.ReplaceAll(s, `'`, `'\''`)
}

// word returns s if it can stand unquoted in haproxy.cfg (see checkWord), else an error.
func word(s string) (string, error) {
	if err := checkWord("value", s); err != nil {
		return "", err
	}
	return s, nil
}

// fail stops the rendering with msg as the error.
func fail(msg string) (string, error) {
	return "", errors.New(msg)
}
