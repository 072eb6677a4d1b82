package render

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// maxSocketPath is the longest path a unix socket may have (sun_path holds 108 bytes with the NUL).
const maxSocketPath = 107

// Names the default layout gives its own sections; a model backend must not take them.
var reservedBackends = []string{model.DefaultBackend, model.SNIBackend, model.NoSNIBackend}

// checkWord returns an error unless s can stand as one unquoted word of haproxy.cfg whatever its
// context: printable ASCII without whitespace, quotes, '#', '\\', '$' or "%[" (HAProxy expands
// environment variables after '$' and evaluates sample expressions in "%[...]" in log-format words).
func checkWord(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"'#\\$", c) >= 0 {
			return fmt.Errorf("%s %q: contains whitespace, a control character, a quote, '#', '\\' or '$'", what, s)
		}
	}
	if strings.Contains(s, "%[") {
		return fmt.Errorf("%s %q: contains a sample expression %%[", what, s)
	}
	return nil
}

// checkCharset returns an error unless s is non-empty and every byte is an ASCII letter or digit or
// one of extra.
func checkCharset(what, s, extra string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strings.IndexByte(extra, c) >= 0 {
			continue
		}
		return fmt.Errorf("%s %q: only letters, digits and %q are allowed", what, s, extra)
	}
	return nil
}

// checkTimeout returns an error unless s is an HAProxy duration: digits with an optional unit.
func checkTimeout(what, s string) error {
	digits := strings.TrimRight(s, "usmhd")
	unit := s[len(digits):]
	if digits == "" || len(digits) > 12 || strings.Trim(digits, "0123456789") != "" {
		return fmt.Errorf("%s %q: want digits with a unit (us, ms, s, m, h, d)", what, s)
	}
	switch unit {
	case "", "us", "ms", "s", "m", "h", "d":
		return nil
	}
	return fmt.Errorf("%s %q: unknown unit %q", what, s, unit)
}

// checkAbsPath returns an error unless p is a clean absolute path usable as one config word.
func checkAbsPath(what, p string) error {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return fmt.Errorf("%s %q: want a clean absolute path", what, p)
	}
	return checkWord(what, p)
}

// checkQuotedPath returns an error unless s can stand inside single quotes in haproxy.cfg (rewrite
// prefixes and targets), its single quotes escaped (singleQuoted): printable ASCII without
// whitespace, double quotes, '#' or '\\'.
func checkQuotedPath(what, s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"#\\", c) >= 0 {
			return fmt.Errorf("%s %q: contains whitespace, a control character, a double quote, '#' or '\\'", what, s)
		}
	}
	return nil
}

// checkGlobal checks the settings and the frontends beyond what model validation guarantees, so that
// no value can break or extend a line of the output; checkBackend, checkCertificate and the Renderer's
// CA file check do the same for the other parts, as they change.
func checkGlobal(cfg *model.Config) error {
	errs := []error{checkSettings(&cfg.Settings)}
	for _, f := range cfg.Frontends {
		if f.Bind != "" || f.BindV6 == "" {
			errs = append(errs, checkWord(fmt.Sprintf("frontend %q: bind", f.Name), f.Bind))
		}
		if f.BindV6 != "" {
			errs = append(errs, checkWord(fmt.Sprintf("frontend %q: IPv6 bind", f.Name), f.BindV6))
		}
	}
	return errors.Join(errs...)
}

func checkSettings(s *model.Settings) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("settings: %w", err))
		}
	}
	if s.MaxConnections < 0 || s.Threads < 0 {
		add(errors.New("maxConnections and threads must not be negative"))
	}
	if s.BufSize != 0 && s.BufSize < 16384 {
		add(fmt.Errorf("bufSize %d: want 0 (HAProxy's default) or at least 16384 (tune.maxrewrite is 8192)", s.BufSize))
	}
	t := s.Timeouts
	for _, d := range []struct{ name, value string }{
		{"connect", t.Connect}, {"client", t.Client}, {"clientFin", t.ClientFin},
		{"server", t.Server}, {"serverFin", t.ServerFin}, {"httpRequest", t.HTTPRequest},
		{"httpKeepAlive", t.HTTPKeepAlive}, {"tunnel", t.Tunnel}, {"inspectDelay", t.InspectDelay},
		{"checkInterval", s.CheckInterval}, {"hardStopAfter", s.HardStopAfter},
	} {
		if d.value != "" {
			add(checkTimeout("timeout "+d.name, d.value))
		}
	}
	if s.ForwardedHeaders != "" {
		add(checkForwarded(s.ForwardedHeaders))
	}
	add(s.AccessLog.Validate())
	add(s.TLS.Validate())
	add(s.HTTP.Validate())
	if s.DefaultCertificate != "" && !model.ValidFileName(s.DefaultCertificate) {
		add(fmt.Errorf("default certificate %q: invalid file name", s.DefaultCertificate))
	}
	return errors.Join(errs...)
}

func checkForwarded(policy string) error {
	if slices.Contains(model.ForwardedPolicies(), policy) {
		return nil
	}
	return fmt.Errorf("forwarded headers policy %q: want append, replace, never or if-none", policy)
}

func checkBackend(b *model.Backend, caNames map[string]bool) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("backend %q: %w", b.Name, err))
		}
	}
	for _, r := range reservedBackends {
		if b.Name == r {
			add(errors.New("the name is reserved for the default layout"))
		}
	}
	if b.Kind.Prefix() == "" {
		add(fmt.Errorf("unknown kind %q", b.Kind))
	} else if b.Mode != b.Kind.Mode() {
		add(fmt.Errorf("mode %q does not fit kind %q", b.Mode, b.Kind))
	}
	for _, d := range []struct{ name, value string }{
		{"timeoutServer", b.TimeoutServer}, {"timeoutTunnel", b.TimeoutTunnel}, {"checkInterval", b.CheckInterval},
	} {
		if d.value != "" {
			add(checkTimeout(d.name, d.value))
		}
	}
	for _, a := range b.Allowlist {
		add(checkAllowlistEntry(a))
	}
	if rl := b.RateLimit; rl != nil && (rl.ConcurrentTCP < 0 || rl.RateTCP < 0 || rl.RateHTTP < 0) {
		add(errors.New("rate limits must not be negative"))
	}
	if b.ForwardedHeaders != "" {
		add(checkForwarded(b.ForwardedHeaders))
	}
	if b.HSTS != "" {
		// Written in single quotes, as OpenShift writes it: no '%' (a variable), no quote, no line.
		add(checkCharset("HSTS", b.HSTS, "=;-_. \t\""))
		if _, ok := model.MappedHeaderValue(b.HSTS); !ok {
			add(fmt.Errorf("HSTS: longer than %d bytes once encoded for %s", model.MaxMappedHeaderValue, model.MapHSTS))
		}
	}
	if b.Mode == model.ModeTCP && (b.Cookie != nil || b.Rewrite != nil || len(b.RequestHeaders) > 0 || len(b.ResponseHeaders) > 0) {
		add(errors.New("cookies, rewrites and header rules need mode http"))
	}
	add(checkHeaderRules(b.RequestHeaders, false))
	add(checkHeaderRules(b.ResponseHeaders, true))
	if r := b.Rewrite; r != nil {
		if r.Prefix != "" && !strings.HasPrefix(r.Prefix, "/") {
			add(fmt.Errorf("rewrite prefix %q: want empty or a path", r.Prefix))
		}
		add(checkQuotedPath("rewrite prefix", r.Prefix))
		if r.Target == "" {
			add(errors.New("rewrite target is empty"))
		}
		add(checkQuotedPath("rewrite target", r.Target))
	}
	if c := b.Cookie; c != nil {
		add(checkCharset("cookie name", c.Name, "-_"))
		add(checkWord("cookie key", c.Key))
	}
	if b.ServerMaxConn < 0 {
		add(errors.New("serverMaxConn must not be negative"))
	}
	// A reencrypt backend without servers (a free spare, a retired backend) needs no TLS settings: only
	// server lines use them.
	if b.Kind == model.KindReencrypt && b.TLS == nil && len(b.Servers) > 0 {
		add(errors.New("a reencrypt backend with servers needs TLS settings"))
	}
	if b.TLS != nil {
		add(checkCAReference(b.TLS.CAFile, caNames))
	}
	for _, s := range b.Servers {
		add(checkServer(b, &s))
	}
	return errors.Join(errs...)
}

// checkHeaderRules checks the header rules of a backend before they are written: names and values
// are written in single quotes (model.QuoteHeaderValue) after the Route API's checks, and a map key
// stands unquoted inside str(...), so it may hold only the characters of a backend name and '/'.
func checkHeaderRules(rules []model.HeaderRule, response bool) error {
	var errs []error
	for i, r := range rules {
		add := func(err error) {
			if err != nil {
				errs = append(errs, fmt.Errorf("header rule %d: %w", i, err))
			}
		}
		add(model.CheckRouteHeaderName(r.Name))
		switch {
		case r.Action == model.HeaderDelete:
		case r.Action != model.HeaderSet:
			add(fmt.Errorf("action %q: want %s or %s", r.Action, model.HeaderSet, model.HeaderDelete))
		case r.Key != "":
			add(checkCharset("map key", r.Key, "-_.:/"))
		default:
			add(model.CheckRouteHeaderValue(r.Value, response))
		}
	}
	return errors.Join(errs...)
}

func checkCAReference(name string, caNames map[string]bool) error {
	if strings.HasPrefix(name, "/") {
		return checkAbsPath("CA file", name)
	}
	if !caNames[name] {
		return fmt.Errorf("CA file %q: not in the model's CA files", name)
	}
	return nil
}

func checkAllowlistEntry(a string) error {
	var zone bool
	if strings.Contains(a, "/") {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return fmt.Errorf("allowlist entry %q: %w", a, err)
		}
		zone = p.Addr().Zone() != ""
	} else {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("allowlist entry %q: %w", a, err)
		}
		zone = ip.Zone() != ""
	}
	if zone {
		return fmt.Errorf("allowlist entry %q: zones are not supported", a)
	}
	return nil
}

func checkServer(b *model.Backend, s *model.Server) error {
	if s.State == model.StateDrain {
		return fmt.Errorf("server %q: state drain cannot be expressed in haproxy.cfg", s.Name)
	}
	if ip, err := netip.ParseAddr(s.Addr); err != nil || ip.Zone() != "" {
		return fmt.Errorf("server %q: address %q: want an IP address without zone", s.Name, s.Addr)
	}
	if b.TLS != nil && s.VerifyHost != "" {
		if err := checkCharset(fmt.Sprintf("server %q: verifyHost", s.Name), s.VerifyHost, "-_."); err != nil {
			return err
		}
	}
	return nil
}

func checkCertificate(c *model.Certificate) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("certificate %q: %w", c.Name, err))
		}
	}
	if strings.TrimSpace(c.PEM) == "" {
		add(errors.New("empty PEM"))
	}
	if len(c.SNI) == 0 {
		// Without an SNI filter HAProxy would serve the certificate for every name it carries.
		add(errors.New("no SNI filter"))
	}
	for _, s := range c.SNI {
		add(checkCharset("SNI filter", s, "-_.*"))
	}
	if c.ALPN != "" {
		add(checkCharset("ALPN", c.ALPN, "-_.,/"))
	}
	return errors.Join(errs...)
}

// checkDefaultLayout checks that cfg has the frontends the default template is written for, each
// once with its mode, and that their binds are usable.
func checkDefaultLayout(cfg *model.Config) error {
	want := map[string]model.Mode{
		model.FrontendPublic:    model.ModeHTTP,
		model.FrontendPublicSSL: model.ModeTCP,
		model.FrontendSNI:       model.ModeHTTP,
		model.FrontendNoSNI:     model.ModeHTTP,
	}
	var errs []error
	seen := map[string]bool{}
	for _, f := range cfg.Frontends {
		mode, ok := want[f.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("frontend %q: the default template has no such frontend", f.Name))
		case f.Mode != mode:
			errs = append(errs, fmt.Errorf("frontend %q: mode %q, the default template needs %q", f.Name, f.Mode, mode))
		}
		seen[f.Name] = true
	}
	for _, name := range []string{model.FrontendPublic, model.FrontendPublicSSL, model.FrontendSNI, model.FrontendNoSNI} {
		if !seen[name] {
			errs = append(errs, fmt.Errorf("frontend %q: missing (the default template needs it)", name))
		}
	}
	return errors.Join(errs...)
}
