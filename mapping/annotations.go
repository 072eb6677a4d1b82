package mapping

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// Route annotations Translate understands (OpenShift's names).
const (
	AnnotationBalance             = "haproxy.router.openshift.io/balance"
	AnnotationTimeout             = "haproxy.router.openshift.io/timeout"
	AnnotationTimeoutTunnel       = "haproxy.router.openshift.io/timeout-tunnel"
	AnnotationHealthCheckInterval = "router.openshift.io/haproxy.health.check.interval"
	AnnotationIPAllowlist         = "haproxy.router.openshift.io/ip_allowlist"
	AnnotationIPWhitelist         = "haproxy.router.openshift.io/ip_whitelist"
	AnnotationRateLimit           = "haproxy.router.openshift.io/rate-limit-connections"
	AnnotationRateLimitConcurrent = "haproxy.router.openshift.io/rate-limit-connections.concurrent-tcp"
	AnnotationRateLimitTCP        = "haproxy.router.openshift.io/rate-limit-connections.rate-tcp"
	AnnotationRateLimitHTTP       = "haproxy.router.openshift.io/rate-limit-connections.rate-http"
	AnnotationDisableCookies      = "haproxy.router.openshift.io/disable_cookies"
	AnnotationCookieName          = "router.openshift.io/cookie_name"
	AnnotationCookieSameSite      = "router.openshift.io/cookie-same-site"
	AnnotationHSTS                = "haproxy.router.openshift.io/hsts_header"
	AnnotationForwardedHeaders    = "haproxy.router.openshift.io/set-forwarded-headers"
	AnnotationRewriteTarget       = "haproxy.router.openshift.io/rewrite-target"
	AnnotationPodConcurrentConns  = "haproxy.router.openshift.io/pod-concurrent-connections"
)

// Limits of annotation values and derived names.
const (
	maxAllowlistEntries          = 1000
	maxAnnotationInt             = 1000000
	rewriteTargetExtraCharacters = "-._~/!$&()*+,;=:@%"
	hstsMaxAgeMaxDigits          = 10
	maxCookieNameLength          = 64
)

// backendOptions are the per-backend settings a Route's annotations select.
type backendOptions struct {
	balance          string
	timeoutServer    string
	timeoutTunnel    string
	checkInterval    string
	allowlist        []string
	rateLimit        *model.RateLimit
	cookie           *model.Cookie
	hsts             string
	forwardedHeaders string
	rewrite          *model.Rewrite
	serverMaxConn    int
}

// annotationParser collects the first error per annotation; every invalid value rejects the Route
// (nothing is "fixed" silently, and an invalid value never turns a protection off).
type annotationParser struct {
	ann  map[string]string
	errs []string
}

func (p *annotationParser) fail(name, format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf("annotation %s=%s: %s", name, quoteShort(p.ann[name]), fmt.Sprintf(format, args...)))
}

func (p *annotationParser) get(name string) (string, bool) {
	v, ok := p.ann[name]
	return v, ok
}

// oneOf parses an annotation restricted to a fixed set of values, returning def when it is absent.
func (p *annotationParser) oneOf(name, def string, allowed ...string) string {
	v, ok := p.get(name)
	if !ok {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.fail(name, "want one of %s", strings.Join(allowed, ", "))
	return def
}

// timeout parses an HAProxy duration annotation (mapping.ParseTimeout).
func (p *annotationParser) timeout(name, def string) string {
	v, ok := p.get(name)
	if !ok {
		return def
	}
	d, valid := ParseTimeout(v)
	if !valid {
		p.fail(name, "want a duration such as 500ms, 30s, 5m, 1h")
		return def
	}
	return d
}

// boolean parses "true" or "false".
func (p *annotationParser) boolean(name string) bool {
	v, ok := p.get(name)
	if !ok {
		return false
	}
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(name, "want true or false")
	return false
}

// positive parses a positive integer of at most maxAnnotationInt; 0 means absent.
func (p *annotationParser) positive(name string) int {
	v, ok := p.get(name)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxAnnotationInt || strconv.Itoa(n) != v {
		p.fail(name, "want a positive integer up to %d", maxAnnotationInt)
		return 0
	}
	return n
}

// parseAnnotations derives the backend options of an admission from its Route's annotations.
func parseAnnotations(a *admission, ann map[string]string, opts Options) (backendOptions, *rejection) {
	p := &annotationParser{ann: ann}
	passthrough := a.kind == model.KindPassthrough
	var o backendOptions

	def := opts.LoadBalanceAlgorithm
	if passthrough {
		def = opts.TCPBalanceScheme
	}
	// Like OpenShift, a Route split across several Services defaults to roundrobin: the weights are
	// its point, and `balance random` (two random draws, the less loaded wins) and leastconn follow
	// load rather than weights under concurrency. haroute counts the Services the Route lists, not
	// those with a non-zero weight, so that a weight change never changes the balance algorithm.
	if len(a.services) > 1 {
		def = "roundrobin"
	}
	o.balance = p.oneOf(AnnotationBalance, def, model.BalanceAlgorithms()...)
	o.timeoutServer = p.timeout(AnnotationTimeout, "")
	o.timeoutTunnel = p.timeout(AnnotationTimeoutTunnel, "")
	o.checkInterval = p.timeout(AnnotationHealthCheckInterval, opts.CheckInterval)
	o.allowlist = p.allowlist()
	o.rateLimit = p.rateLimit(passthrough)
	o.serverMaxConn = p.positive(AnnotationPodConcurrentConns)
	if !passthrough {
		o.cookie = p.cookie(a)
		o.forwardedHeaders = p.oneOf(AnnotationForwardedHeaders, opts.ForwardedHeaders, model.ForwardedPolicies()...)
		o.rewrite = p.rewrite(a.path)
	}
	if a.terminated() {
		o.hsts = p.hsts()
	}
	if len(p.errs) > 0 {
		return backendOptions{}, reject(ReasonInvalidAnnotation, strings.Join(p.errs, "; "))
	}
	return o, nil
}

// allowlist parses ip_allowlist (or the legacy ip_whitelist when the new one is unset or empty):
// whitespace-separated addresses and CIDRs, returned canonical, sorted and deduplicated.
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
		p.fail(name, "%d entries: at most %d are allowed", len(tokens), maxAllowlistEntries)
		return nil
	}
	set := map[string]bool{}
	for _, tok := range tokens {
		c, ok := canonicalIPOrCIDR(tok)
		if !ok {
			p.fail(name, "%s is not an IP address or CIDR", quoteShort(tok))
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
	enabled := p.boolean(AnnotationRateLimit)
	rl := model.RateLimit{
		ConcurrentTCP: p.positive(AnnotationRateLimitConcurrent),
		RateTCP:       p.positive(AnnotationRateLimitTCP),
	}
	if !passthrough {
		rl.RateHTTP = p.positive(AnnotationRateLimitHTTP)
	}
	if !enabled || rl == (model.RateLimit{}) {
		return nil
	}
	return &rl
}

// cookie returns the sticky-session cookie of an http-mode backend, or nil when disabled. The default
// name is derived from the backend name, so it is stable and reveals nothing about the Route.
func (p *annotationParser) cookie(a *admission) *model.Cookie {
	disabled := p.boolean(AnnotationDisableCookies)
	name := model.DefaultCookieName(a.backendName)
	if v, ok := p.get(AnnotationCookieName); ok {
		if validCookieName(v) {
			name = v
		} else {
			p.fail(AnnotationCookieName, "want 1-64 characters from A-Z, a-z, 0-9, '_' and '-'")
		}
	}
	// Secure on every TLS-terminated Route, whatever its insecure policy: the cookie never travels in
	// clear, and flipping the policy stays a map change (no backend option changes, no reload).
	secure := a.terminated()
	sameSite := p.oneOf(AnnotationCookieSameSite, "", "Lax", "Strict", "None")
	if disabled {
		return nil
	}
	if sameSite == "None" && !secure {
		p.fail(AnnotationCookieSameSite, "SameSite=None needs a Secure cookie: only edge and reencrypt routes have one")
	}
	return &model.Cookie{Name: name, Key: model.DefaultCookieKey(a.backendName), Secure: secure, SameSite: sameSite}
}

// hsts parses hsts_header: "max-age=<digits>" with optional includeSubDomains and preload, separated
// by ";" with optional spaces, directive names case-insensitive. It returns the normalised value.
func (p *annotationParser) hsts() string {
	v, ok := p.get(AnnotationHSTS)
	if !ok {
		return ""
	}
	var maxAge string
	var sub, preload bool
	for _, part := range strings.Split(v, ";") {
		d := strings.Trim(part, " \t")
		lower := strings.ToLower(d)
		switch {
		case strings.HasPrefix(lower, "max-age="):
			digits := d[len("max-age="):]
			if maxAge != "" || !allDigits(digits) || len(digits) > hstsMaxAgeMaxDigits {
				p.fail(AnnotationHSTS, "want one max-age=<seconds>")
				return ""
			}
			maxAge = digits
		case lower == "includesubdomains" && !sub:
			sub = true
		case lower == "preload" && !preload:
			preload = true
		default:
			p.fail(AnnotationHSTS, "want max-age=<seconds> with optional includeSubDomains and preload, separated by ';'")
			return ""
		}
	}
	if maxAge == "" {
		p.fail(AnnotationHSTS, "max-age=<seconds> is required")
		return ""
	}
	out := "max-age=" + maxAge
	if sub {
		out += ";includeSubDomains"
	}
	if preload {
		out += ";preload"
	}
	return out
}

// rewrite parses rewrite-target; the prefix is the Route path without its trailing "/".
func (p *annotationParser) rewrite(path string) *model.Rewrite {
	v, ok := p.get(AnnotationRewriteTarget)
	if !ok {
		return nil
	}
	valid := strings.HasPrefix(v, "/")
	for i := 0; valid && i < len(v); i++ {
		valid = isAlnumByte(v[i]) || strings.IndexByte(rewriteTargetExtraCharacters, v[i]) >= 0
	}
	if !valid || len(v) > maxPathLength {
		p.fail(AnnotationRewriteTarget, "want a path starting with \"/\" made of A-Z a-z 0-9 and %s", rewriteTargetExtraCharacters)
		return nil
	}
	return &model.Rewrite{Prefix: trimSlash(path), Target: v}
}

// validCookieName reports whether v matches ^[A-Za-z0-9_-]{1,64}$.
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
