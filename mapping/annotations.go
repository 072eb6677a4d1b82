package mapping

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// Route annotations Translate understands (OpenShift's names).
//
// Each annotation is of one of two kinds (annotationKindOf), which decide what an invalid value does:
//
//   - security annotations fail closed: an invalid value rejects the Route with InvalidAnnotation.
//     These are the annotations whose invalid value OpenShift's router drops, and dropping it would
//     turn a protection off or widen what the Route exposes: the IP allowlist (OpenShift serves the
//     Route to every address when no entry parses), the rate limits and pod-concurrent-connections
//     (OpenShift leaves a non-integer limit out), hsts_header (no header at all), set-forwarded-headers
//     (a fallback to append hands the backend client-forged X-Forwarded-* headers it meant to replace
//     or drop) and rewrite-target (without the rewrite, backend paths outside the target are
//     reachable).
//   - cosmetic annotations are ignored, as OpenShift's router ignores them: the Route is admitted with
//     the default for that setting and an InvalidAnnotation warning that names the annotation, the
//     value, why it is invalid and what is used instead. These are balance, timeout, timeout-tunnel,
//     the health-check interval, disable_cookies, cookie_name and cookie-same-site (the sticky-session
//     cookie is the router's own, for affinity only), and h1-adjust-case.
//
// Bounds of the numeric annotations:
//
//   - timeout and timeout-tunnel: OpenShift's grammar [1-9][0-9]*(us|ms|s|m|h|d)? (no unit: ms), at
//     least minTimeoutMillis (so never zero, which HAProxy reads as "no timeout"); a value above
//     HAProxy's largest timeout, maxTimeoutMillis, is clipped to it with a warning, as OpenShift's
//     clipHAProxyTimeoutValue does.
//   - haproxy.health.check.interval: the same grammar and cap, at least minCheckIntervalMillis.
//   - rate-limit-connections.concurrent-tcp, .rate-tcp, .rate-http and pod-concurrent-connections: an
//     integer [1-9][0-9]* (0 would reject every connection, or mean "no limit" for maxconn); a value
//     above maxAnnotationInt is clipped to it with a warning (a stricter limit than asked, never a
//     looser one).
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
	AnnotationH1AdjustCase        = "haproxy.router.openshift.io/h1-adjust-case"
)

// Limits of annotation values and derived names.
const (
	maxAllowlistEntries = 1000
	hstsMaxAgeMaxDigits = 10
	// maxCookieNameLength bounds a cookie name (cookie_name, ROUTER_COOKIE_NAME); OpenShift has no
	// bound, but a name of many kilobytes would make its configuration lines longer than HAProxy
	// reads, and every Route's with them. No browser keeps a cookie whose name is that long anyway.
	maxCookieNameLength = 255

	// maxAnnotationInt caps the rate limits and pod-concurrent-connections. A million concurrent
	// connections, or connections per 3 s, or requests per 10 s, from one source address is no limit
	// in practice, and keeps every value far inside HAProxy's 32-bit counters.
	maxAnnotationInt = 1000000
	// maxTimeoutMillis is HAProxy's largest timeout, 2^31-1 ms (about 24.8 days): OpenShift's
	// HaproxyMaxTimeout, to which it clips larger values.
	maxTimeoutMillis = 1<<31 - 1
	// minTimeoutMillis is the smallest timeout annotation: zero would disable the timeout.
	minTimeoutMillis = 1
	// minCheckIntervalMillis is the smallest health-check interval: ten checks a second per server at
	// most, whatever a tenant writes (1us would start a check storm from every router replica against
	// every pod). Sub-second intervals such as 500ms stay valid; the default is 5000ms.
	minCheckIntervalMillis = 100
)

// annotationKind says what an invalid value of an annotation does (see the annotation constants).
type annotationKind int

const (
	// kindSecurity: an invalid value rejects the Route.
	kindSecurity annotationKind = iota
	// kindCosmetic: an invalid value is ignored with a warning and the default is used.
	kindCosmetic
)

// annotationKindOf returns the kind of an annotation; any annotation not listed as cosmetic is a
// security one, so that a new annotation fails closed until it is classified.
func annotationKindOf(name string) annotationKind {
	switch name {
	case AnnotationBalance, AnnotationTimeout, AnnotationTimeoutTunnel, AnnotationHealthCheckInterval,
		AnnotationDisableCookies, AnnotationCookieName, AnnotationCookieSameSite, AnnotationH1AdjustCase,
		AnnotationPodConcurrentConns:
		return kindCosmetic
	}
	return kindSecurity
}

// backendOptions are the per-backend settings a Route's annotations select.
type backendOptions struct {
	balance       string
	timeoutServer string
	timeoutTunnel string
	checkInterval string
	allowlist     []string
	rateLimit     *model.RateLimit
	cookie        *model.Cookie
	// cookieSameSite is the cookie's SameSite value when it is Secure (model.MapCookieSameSite).
	cookieSameSite   string
	hsts             string
	forwardedHeaders string
	rewrite          *model.Rewrite
	serverMaxConn    int
	caseAdjustServer bool
}

// annotationParser collects the invalid values of a Route's annotations: errors (security
// annotations; the Route is rejected, every error in one message) and warnings (cosmetic annotations
// ignored, values clipped to their bounds; one warning each).
type annotationParser struct {
	ann      map[string]string
	errs     []string
	warnings []string
}

// message formats a report about one annotation's value.
func (p *annotationParser) message(name, format string, args ...any) string {
	return fmt.Sprintf("annotation %s=%s: %s", name, quoteShort(p.ann[name]), fmt.Sprintf(format, args...))
}

// invalid reports an invalid value of name. For a security annotation it is an error; for a cosmetic
// one a warning that ends with what the Route gets instead (instead, e.g. "balance random").
func (p *annotationParser) invalid(name, instead, format string, args ...any) {
	msg := p.message(name, format, args...)
	if annotationKindOf(name) == kindCosmetic {
		p.warnings = append(p.warnings, msg+"; ignored, using "+instead)
		return
	}
	p.errs = append(p.errs, msg)
}

// warn reports a value of name that is used, changed as the message says (clipped to a bound).
func (p *annotationParser) warn(name, format string, args ...any) {
	p.warnings = append(p.warnings, p.message(name, format, args...))
}

func (p *annotationParser) get(name string) (string, bool) {
	v, ok := p.ann[name]
	return v, ok
}

// oneOf parses an annotation restricted to a fixed set of values, returning def when it is absent or
// invalid (instead describes def for the warning of a cosmetic annotation).
func (p *annotationParser) oneOf(name, def, instead string, allowed ...string) string {
	v, ok := p.get(name)
	if !ok {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.invalid(name, instead, "want one of %s", strings.Join(allowed, ", "))
	return def
}

// duration parses an HAProxy duration annotation with OpenShift's grammar, [1-9][0-9]*(us|ms|s|m|h|d)?
// (no unit means ms), of at least minMillis. It returns the value with an explicit unit, or
// maxTimeoutMillis (with a warning) for a larger value, or def when the annotation is absent or
// invalid (instead describes def for the warning).
func (p *annotationParser) duration(name string, minMillis int64, def, instead string) string {
	v, ok := p.get(name)
	if !ok {
		return def
	}
	d, micros, valid := parseAnnotationDuration(v)
	switch {
	case !valid:
		p.invalid(name, instead, "want a duration such as 500ms, 30s, 5m or 1h (digits not starting with 0, unit us, ms, s, m, h or d)")
		return def
	case micros < minMillis*1000:
		p.invalid(name, instead, "below the minimum of %dms", minMillis)
		return def
	case micros > maxTimeoutMillis*1000:
		clipped := strconv.Itoa(maxTimeoutMillis) + "ms"
		p.warn(name, "above HAProxy's maximum timeout; clipped to %s", clipped)
		return clipped
	}
	return d
}

// parseAnnotationDuration parses [1-9][0-9]*(us|ms|s|m|h|d)? and returns the value with an explicit
// unit and its length in microseconds; a value too large to count is reported as just above
// maxTimeoutMillis.
func parseAnnotationDuration(v string) (string, int64, bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 || v[0] == '0' {
		return "", 0, false
	}
	var f int64
	switch unit := v[i:]; unit {
	case "us":
		f = 1
	case "", "ms":
		f = 1e3
	case "s":
		f = 1e6
	case "m":
		f = 60e6
	case "h":
		f = 3600e6
	case "d":
		f = 86400e6
	default:
		return "", 0, false
	}
	unit := v[i:]
	if unit == "" {
		unit = "ms"
	}
	const above = (maxTimeoutMillis + 1) * 1000
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil || n > above/f {
		return v[:i] + unit, above, true
	}
	return v[:i] + unit, n * f, true
}

// boolean parses a boolean annotation as OpenShift does (strconv.ParseBool: 1, t, T, TRUE, true, True,
// and their false counterparts); an invalid value gives false (instead describes it).
func (p *annotationParser) boolean(name, instead string) bool {
	v, ok := p.get(name)
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.invalid(name, instead, "want true or false")
		return false
	}
	return b
}

// limit parses a limit of a security annotation: an integer from 1, without sign or leading zero; a
// value above maxAnnotationInt is clipped to it with a warning. 0 means absent or invalid.
func (p *annotationParser) limit(name string) int {
	v, ok := p.get(name)
	if !ok {
		return 0
	}
	if !allDigits(v) || v[0] == '0' {
		p.invalid(name, "", "want a positive integer, without sign or leading zero")
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n <= maxAnnotationInt {
		return n
	}
	p.warn(name, "above the maximum; clipped to %d", maxAnnotationInt)
	return maxAnnotationInt
}

// serverMaxConn parses pod-concurrent-connections as OpenShift reads it: an integer is each server's
// maxconn, and 0 is HAProxy's "no limit"; anything else is ignored (with a warning here). A negative
// number, which OpenShift writes into its configuration and HAProxy then refuses (every Route with
// it), is ignored too. A value above maxAnnotationInt is clipped to it with a warning.
func (p *annotationParser) serverMaxConn() int {
	v, ok := p.get(AnnotationPodConcurrentConns)
	if !ok {
		return 0
	}
	if !allDigits(v) {
		p.invalid(AnnotationPodConcurrentConns, "no limit", "want a number of connections, 0 for no limit")
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n <= maxAnnotationInt {
		return n
	}
	p.warn(AnnotationPodConcurrentConns, "above the maximum; clipped to %d", maxAnnotationInt)
	return maxAnnotationInt
}

// parseAnnotations derives the backend options of an admission from its Route's annotations. Errors
// (invalid security annotations) reject the Route; warnings are added to the admission.
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
	o.balance = p.oneOf(AnnotationBalance, def, "balance "+def, model.BalanceAlgorithms()...)
	if passthrough {
		// As OpenShift: a passthrough backend has no server timeout of its own; timeout-tunnel sets
		// its tunnel timeout, else timeout does (a TCP connection is a tunnel from its start, so a
		// server timeout would never apply).
		tunnel := p.duration(AnnotationTimeoutTunnel, minTimeoutMillis, "", AnnotationTimeout+", else "+routerDefault("timeout tunnel", opts.Timeouts.Tunnel))
		instead := routerDefault("timeout tunnel", opts.Timeouts.Tunnel)
		if tunnel != "" {
			instead = AnnotationTimeoutTunnel + " " + tunnel
		}
		timeout := p.duration(AnnotationTimeout, minTimeoutMillis, "", instead)
		o.timeoutTunnel = cmp.Or(tunnel, timeout)
	} else {
		o.timeoutServer = p.duration(AnnotationTimeout, minTimeoutMillis, "", routerDefault("timeout server", opts.Timeouts.Server))
		o.timeoutTunnel = p.duration(AnnotationTimeoutTunnel, minTimeoutMillis, "", routerDefault("timeout tunnel", opts.Timeouts.Tunnel))
	}
	o.checkInterval = p.duration(AnnotationHealthCheckInterval, minCheckIntervalMillis, opts.CheckInterval, routerDefault("check interval", opts.CheckInterval))
	o.allowlist = p.allowlist()
	o.rateLimit = p.rateLimit(passthrough)
	o.serverMaxConn = p.serverMaxConn()
	if !passthrough {
		o.cookie, o.cookieSameSite = p.cookie(a, opts.CookieName)
		o.forwardedHeaders = p.oneOf(AnnotationForwardedHeaders, opts.ForwardedHeaders, "", model.ForwardedPolicies()...)
		o.rewrite = p.rewrite(a.path)
		// Only with names to adjust (ROUTER_H1_CASE_ADJUST), as in OpenShift.
		if opts.HTTP.CaseAdjust != "" {
			o.caseAdjustServer = p.boolean(AnnotationH1AdjustCase, "header names as HAProxy writes them")
		}
	}
	if a.terminated() {
		o.hsts = p.hsts()
	}
	if len(p.errs) > 0 {
		return backendOptions{}, reject(ReasonInvalidAnnotation, strings.Join(p.errs, "; "))
	}
	for _, w := range p.warnings {
		a.warn(ReasonInvalidAnnotation, w)
	}
	return o, nil
}

// routerDefault describes a router-wide setting a Route falls back to, for a warning.
func routerDefault(what, value string) string {
	if value == "" {
		return "HAProxy's default " + what
	}
	return "the router's " + what + " " + value
}
