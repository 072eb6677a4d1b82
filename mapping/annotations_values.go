package mapping

import (
	"cmp"
	"net/netip"
	"sort"
	"strings"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

// The parsers of the annotations with structured values: the allowlist, rate limits, the
// sticky-session cookie, HSTS and the rewrite target.

// allowlist parses ip_allowlist (or the legacy ip_whitelist when the new one is unset or empty):
// whitespace-separated addresses and CIDRs, returned canonical, sorted and deduplicated. It is a
// security annotation: OpenShift drops the entries that do not parse and serves the Route to every
// address when none does; here one invalid entry rejects the Route.
func (p *annotationParser) allowlist() []string {
	name := AnnotationIPAllowlist
	v := strings.TrimSpace(p.ann[name])
	if v == "" {
		name = AnnotationIPWhitelist
		v = strings.TrimSpace(p.ann[name])
	}
	if v == "" {
		return nil
	}
	tokens := strings.Fields(v)
	if len(tokens) > maxAllowlistEntries {
		p.invalid(name, "", "%d entries: at most %d are allowed", len(tokens), maxAllowlistEntries)
		return nil
	}
	set := map[string]bool{}
	for _, tok := range tokens {
		c, ok := canonicalIPOrCIDR(tok)
		if !ok {
			p.invalid(name, "", "%s is not an IP address or CIDR", quoteShort(tok))
			return nil
		}
		set[c] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// canonicalIPOrCIDR returns the canonical form of an IPv4/IPv6 address or CIDR (network address with
// the host bits cleared). Zones are refused.
func canonicalIPOrCIDR(s string) (string, bool) {
	if strings.Contains(s, "/") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return "", false
		}
		return pfx.Masked().String(), true
	}
	addr, err := netip.ParseAddr(s)
	if err != nil || addr.Zone() != "" {
		return "", false
	}
	return addr.String(), true
}

// rateLimit parses rate-limit-connections and its limits. All limits are validated even when the
// feature is off; rate-http does not apply to passthrough Routes and is ignored there.
func (p *annotationParser) rateLimit(passthrough bool) *model.RateLimit {
	enabled := p.boolean(AnnotationRateLimit, "")
	rl := model.RateLimit{
		ConcurrentTCP: p.limit(AnnotationRateLimitConcurrent),
		RateTCP:       p.limit(AnnotationRateLimitTCP),
	}
	if !passthrough {
		rl.RateHTTP = p.limit(AnnotationRateLimitHTTP)
	}
	if !enabled || rl == (model.RateLimit{}) {
		return nil
	}
	return &rl
}

// cookie returns the sticky-session cookie of an http-mode backend, or nil when disabled, and its
// SameSite value when it is Secure (model.MapCookieSameSite carries it), as OpenShift's router
// renders it: named by cookie_name when that is a valid name, else by
// ROUTER_COOKIE_NAME (routerName), else model.DefaultCookieName (OpenShift's name for the Route); with
// the Secure attribute and SameSite (cookie-same-site, None by default) on edge and reencrypt Routes
// whose insecure policy is not Allow, and with neither otherwise (a Route served on plain HTTP too
// needs its cookie there). Its annotations are cosmetic: an invalid value leaves that attribute at
// its default.
func (p *annotationParser) cookie(a *admission, routerName string) (*model.Cookie, string) {
	disabled := p.boolean(AnnotationDisableCookies, "sticky-session cookies, as by default")
	name := cmp.Or(routerName, model.DefaultCookieName(a.backendName))
	if v, ok := p.get(AnnotationCookieName); ok {
		if validCookieName(v) {
			name = v
		} else {
			p.invalid(AnnotationCookieName, "the router's cookie name", "want 1-%d characters from A-Z, a-z, 0-9, '_' and '-'", maxCookieNameLength)
		}
	}
	secure := a.terminated() && a.policy != routev1.InsecureEdgeTerminationPolicyAllow
	sameSite := ""
	if secure {
		sameSite = p.oneOf(AnnotationCookieSameSite, "None", "SameSite=None", "Lax", "Strict", "None")
	} else if _, ok := p.get(AnnotationCookieSameSite); ok {
		p.invalid(AnnotationCookieSameSite, "no SameSite attribute",
			"only the cookies of edge and reencrypt Routes whose insecure policy is not Allow are Secure and have SameSite")
	}
	if disabled {
		return nil, ""
	}
	return &model.Cookie{Name: name, Key: model.DefaultCookieKey(a.backendName)}, sameSite
}

// hsts parses hsts_header with OpenShift's grammar: one max-age=<seconds> (spaces or tabs around '=',
// the digits optionally in double quotes) with optional includeSubDomains and preload, separated by
// ';' with optional spaces or tabs, directive names case-insensitive, repeated flags allowed. It
// returns the value as written, which OpenShift sends as it is. Unlike OpenShift, a line break is
// never whitespace: the value ends up in a header.
func (p *annotationParser) hsts() string {
	v, ok := p.get(AnnotationHSTS)
	if !ok {
		return ""
	}
	const grammar = "want max-age=<seconds> with optional includeSubDomains and preload, separated by ';'"
	var maxAge string
	for _, part := range strings.Split(v, ";") {
		d := strings.Trim(part, " \t")
		lower := strings.ToLower(d)
		switch {
		case strings.HasPrefix(lower, "max-age"):
			rest := strings.TrimLeft(d[len("max-age"):], " \t")
			digits, isAssign := strings.CutPrefix(rest, "=")
			digits = strings.TrimLeft(digits, " \t")
			if q, ok := strings.CutPrefix(digits, `"`); ok {
				digits, ok = strings.CutSuffix(q, `"`)
				isAssign = isAssign && ok
			}
			if maxAge != "" {
				p.invalid(AnnotationHSTS, "", "max-age is given more than once")
				return ""
			}
			if !isAssign || !allDigits(digits) || len(digits) > hstsMaxAgeMaxDigits {
				p.invalid(AnnotationHSTS, "", "want max-age=<seconds>: at most %d digits, optionally in double quotes", hstsMaxAgeMaxDigits)
				return ""
			}
			maxAge = digits
		case lower == "includesubdomains", lower == "preload":
		default:
			p.invalid(AnnotationHSTS, "", grammar)
			return ""
		}
	}
	if maxAge == "" {
		p.invalid(AnnotationHSTS, "", "max-age=<seconds> is required")
		return ""
	}
	if _, ok := model.MappedHeaderValue(v); !ok {
		p.invalid(AnnotationHSTS, "", "longer than %d bytes once encoded for the HSTS map", model.MaxMappedHeaderValue)
		return ""
	}
	return v
}

// rewrite parses rewrite-target with OpenShift's syntax (rewriteTarget): a value starting with "/"
// whose literal target is a path. The prefix replaced is the Route's path as written; the "/" after
// it is replaced too only when the value is exactly "/", as in OpenShift.
func (p *annotationParser) rewrite(path string) *model.Rewrite {
	v, ok := p.get(AnnotationRewriteTarget)
	if !ok {
		return nil
	}
	if !strings.HasPrefix(v, "/") || strings.Contains(v, "\n") || len(v) > maxPathLength {
		p.invalid(AnnotationRewriteTarget, "", "want a path starting with \"/\", on one line, of at most %d characters", maxPathLength)
		return nil
	}
	target, rest, why := rewriteTarget(v)
	if why != "" {
		p.invalid(AnnotationRewriteTarget, "", "%s", why)
		return nil
	}
	return &model.Rewrite{Prefix: path, Target: target, SlashOptional: v == "/", DropRest: !rest}
}

// validCookieName reports whether v matches ^[A-Za-z0-9_-]{1,255}$ (maxCookieNameLength).
func validCookieName(v string) bool {
	if v == "" || len(v) > maxCookieNameLength {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isAlnumByte(v[i]) && v[i] != '_' && v[i] != '-' {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
