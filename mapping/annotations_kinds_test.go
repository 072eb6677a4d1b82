package mapping

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

// TestAnnotationKinds pins the kind of every annotation Translate understands: a change of kind is a
// change of what an invalid value does (reject the Route, or ignore the value), never a side effect.
func TestAnnotationKinds(t *testing.T) {
	want := map[string]annotationKind{
		AnnotationBalance:                                kindCosmetic,
		AnnotationTimeout:                                kindCosmetic,
		AnnotationTimeoutTunnel:                          kindCosmetic,
		AnnotationHealthCheckInterval:                    kindCosmetic,
		AnnotationDisableCookies:                         kindCosmetic,
		AnnotationCookieName:                             kindCosmetic,
		AnnotationCookieSameSite:                         kindCosmetic,
		AnnotationIPAllowlist:                            kindSecurity,
		AnnotationIPWhitelist:                            kindSecurity,
		AnnotationRateLimit:                              kindSecurity,
		AnnotationRateLimitConcurrent:                    kindSecurity,
		AnnotationRateLimitTCP:                           kindSecurity,
		AnnotationRateLimitHTTP:                          kindSecurity,
		AnnotationHSTS:                                   kindSecurity,
		AnnotationForwardedHeaders:                       kindSecurity,
		AnnotationRewriteTarget:                          kindSecurity,
		AnnotationPodConcurrentConns:                     kindCosmetic,
		"haproxy.router.openshift.io/not-classified-yet": kindSecurity,
	}
	for name, kind := range want {
		if got := annotationKindOf(name); got != kind {
			t.Errorf("annotationKindOf(%s) = %d, want %d", name, got, kind)
		}
	}
}

// cosmeticCase is an invalid cosmetic value and what the admitted Route's backend gets instead.
type cosmeticCase struct {
	ann     string
	value   string
	tls     routeOpt
	check   func(b *model.Backend) string // "" when the backend has the default, else what differs
	instead string                        // expected in the warning
}

func defaultBalance(b *model.Backend) string {
	if b.Balance != "random" {
		return "balance " + b.Balance
	}
	return ""
}

func noServerTimeout(b *model.Backend) string {
	if b.TimeoutServer != "" {
		return "timeout server " + b.TimeoutServer
	}
	return ""
}

func noTunnelTimeout(b *model.Backend) string {
	if b.TimeoutTunnel != "" {
		return "timeout tunnel " + b.TimeoutTunnel
	}
	return ""
}

func defaultCheckInterval(b *model.Backend) string {
	if b.CheckInterval != "5000ms" {
		return "check interval " + b.CheckInterval
	}
	return ""
}

func defaultCookie(b *model.Backend) string {
	if b.Cookie == nil || b.Cookie.Name != model.DefaultCookieName(b.Name) {
		return fmt.Sprintf("cookie %+v", b.Cookie)
	}
	return ""
}

// TestCosmeticAnnotationsInvalid: an invalid value of a cosmetic annotation is ignored; the Route is
// admitted with the default for that setting and one InvalidAnnotation warning naming the annotation,
// the value, why and what is used instead.
func TestCosmeticAnnotationsInvalid(t *testing.T) {
	var tests []cosmeticCase
	add := func(ann string, values []string, tls routeOpt, check func(*model.Backend) string, instead string) {
		for _, v := range values {
			tests = append(tests, cosmeticCase{ann, v, tls, check, instead})
		}
	}
	add(AnnotationBalance, append([]string{"fastest", "static-rr", "first", "uri", "Random", ""}, hostileValues...), nil, defaultBalance, "balance random")
	add(AnnotationTimeout, append([]string{"5 s", "10x", "-1s", "0", "0s", "010s", "s", "", "1.5s", "1w"}, hostileValues...), nil,
		noServerTimeout, "the router's timeout server 30s")
	add(AnnotationTimeoutTunnel, append([]string{"0", "500us", "1.5s"}, hostileValues...), nil, noTunnelTimeout, "the router's timeout tunnel 1h")
	add(AnnotationHealthCheckInterval, append([]string{"fast", "0x10", "0", "1us", "99ms", "99999us"}, hostileValues...), nil,
		defaultCheckInterval, "the router's check interval 5000ms")
	add(AnnotationDisableCookies, append([]string{"yes", "on", ""}, hostileValues...), nil, defaultCookie, "sticky-session cookies, as by default")
	add(AnnotationCookieName, append([]string{"", "a b", "a;b", "a=b", strings.Repeat("a", 256), "é"}, hostileValues...), nil,
		defaultCookie, "the router's cookie name")
	add(AnnotationCookieSameSite, append([]string{"lax", "none", "Secure", ""}, hostileValues...), edge, defaultCookie, "SameSite=None")
	add(AnnotationCookieSameSite, []string{"None", "Strict"}, nil, defaultCookie, "no SameSite attribute") // not TLS: no Secure cookie
	add(AnnotationCookieSameSite, []string{"Lax"}, edgeAllow, defaultCookie, "no SameSite attribute")      // served on HTTP too
	add(AnnotationCookieName, []string{"a.b"}, edge, defaultCookie, "the router's cookie name")
	add(AnnotationPodConcurrentConns, append([]string{"many", "-3", "+5", "1.5", ""}, hostileValues...), nil, func(b *model.Backend) string {
		if b.ServerMaxConn != 0 {
			return fmt.Sprintf("maxconn %d", b.ServerMaxConn)
		}
		return ""
	}, "no limit")
	add(AnnotationBalance, []string{"fastest"}, passthrough, func(b *model.Backend) string {
		if b.Balance != "source" {
			return "balance " + b.Balance
		}
		return ""
	}, "balance source")

	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s=%q", tt.ann, tt.value), func(t *testing.T) {
			if annotationKindOf(tt.ann) != kindCosmetic {
				t.Fatalf("%s is not a cosmetic annotation", tt.ann)
			}
			r := newRoute("ns", "r", "www.example.com", 0, withAnnotation(tt.ann, tt.value))
			if tt.tls != nil {
				tt.tls(r)
			}
			cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
			if len(cfg.Routes) != 1 {
				t.Fatalf("not admitted: %v", problems)
			}
			if diff := tt.check(cfg.Backends[0]); diff != "" {
				t.Errorf("the backend has %s, want the default", diff)
			}
			if len(problems) != 1 {
				t.Fatalf("problems %v, want one warning", problems)
			}
			p := problems[0]
			wantPrefix := "annotation " + tt.ann + "=" + quoteShort(tt.value) + ": "
			if !p.Warning || p.Reason != ReasonInvalidAnnotation || !strings.HasPrefix(p.Message, wantPrefix) ||
				!strings.HasSuffix(p.Message, "; ignored, using "+tt.instead) {
				t.Errorf("got %s, want an InvalidAnnotation warning starting %q and ending with %q", p, wantPrefix, tt.instead)
			}
		})
	}
}

// TestAnnotationBounds: durations within their bounds are kept (with an explicit unit), below the
// minimum they are ignored like any invalid cosmetic value, above HAProxy's maximum they are clipped
// with a warning; limits above the cap are clipped with a warning.
func TestAnnotationBounds(t *testing.T) {
	const clippedTimeout = "2147483647ms"
	tests := []struct {
		ann, value string
		get        func(b *model.Backend) string
		want       string
		warning    string // "" for none, else a part of the warning
	}{
		{AnnotationTimeout, "1", timeoutServer, "1ms", ""},
		{AnnotationTimeout, "1000us", timeoutServer, "1000us", ""},
		{AnnotationTimeout, "999us", timeoutServer, "", "below the minimum of 1ms"},
		{AnnotationTimeout, "2147483647", timeoutServer, "2147483647ms", ""},
		{AnnotationTimeout, "24d", timeoutServer, "24d", ""},
		{AnnotationTimeout, "2147483648", timeoutServer, clippedTimeout, "clipped to " + clippedTimeout},
		{AnnotationTimeout, "25d", timeoutServer, clippedTimeout, "clipped to " + clippedTimeout},
		{AnnotationTimeout, "99999999999999999999999999s", timeoutServer, clippedTimeout, "clipped to " + clippedTimeout},
		{AnnotationTimeoutTunnel, "0", timeoutTunnel, "", "want a duration"},
		{AnnotationTimeoutTunnel, "30d", timeoutTunnel, clippedTimeout, "clipped to " + clippedTimeout},
		{AnnotationTimeoutTunnel, "2h", timeoutTunnel, "2h", ""},
		{AnnotationHealthCheckInterval, "100", checkInterval, "100ms", ""},
		{AnnotationHealthCheckInterval, "100000us", checkInterval, "100000us", ""},
		{AnnotationHealthCheckInterval, "1us", checkInterval, "5000ms", "below the minimum of 100ms"},
		{AnnotationHealthCheckInterval, "99", checkInterval, "5000ms", "below the minimum of 100ms"},
		{AnnotationHealthCheckInterval, "1000d", checkInterval, clippedTimeout, "clipped to " + clippedTimeout},
		{AnnotationPodConcurrentConns, "1", serverMaxConn, "1", ""},
		{AnnotationPodConcurrentConns, "1000000", serverMaxConn, "1000000", ""},
		{AnnotationPodConcurrentConns, "1000001", serverMaxConn, "1000000", "clipped to 1000000"},
		{AnnotationPodConcurrentConns, "99999999999999999999999", serverMaxConn, "1000000", "clipped to 1000000"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s=%s", tt.ann, tt.value), func(t *testing.T) {
			r := newRoute("ns", "r", "www.example.com", 0, withAnnotation(tt.ann, tt.value))
			cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
			if len(cfg.Routes) != 1 {
				t.Fatalf("not admitted: %v", problems)
			}
			if got := tt.get(cfg.Backends[0]); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			switch {
			case tt.warning == "" && len(problems) != 0:
				t.Errorf("problems %v, want none", problems)
			case tt.warning != "" && (len(problems) != 1 || !problems[0].Warning || !strings.Contains(problems[0].Message, tt.warning)):
				t.Errorf("problems %v, want one warning with %q", problems, tt.warning)
			}
		})
	}
}

func timeoutServer(b *model.Backend) string { return b.TimeoutServer }
func timeoutTunnel(b *model.Backend) string { return b.TimeoutTunnel }
func checkInterval(b *model.Backend) string { return b.CheckInterval }
func serverMaxConn(b *model.Backend) string { return strconv.Itoa(b.ServerMaxConn) }

// TestRateLimitBounds: each limit is kept up to the cap and clipped above it with a warning; the
// protection stays on either way.
func TestRateLimitBounds(t *testing.T) {
	r := newRoute("ns", "r", "www.example.com", 0, withAnnotation(AnnotationRateLimit, "true"),
		withAnnotation(AnnotationRateLimitConcurrent, "1000000"), withAnnotation(AnnotationRateLimitTCP, "1000001"),
		withAnnotation(AnnotationRateLimitHTTP, "18446744073709551616"))
	cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
	if len(cfg.Routes) != 1 {
		t.Fatalf("not admitted: %v", problems)
	}
	if rl := cfg.Backends[0].RateLimit; rl == nil || *rl != (model.RateLimit{ConcurrentTCP: 1000000, RateTCP: 1000000, RateHTTP: 1000000}) {
		t.Errorf("rate limit %+v", rl)
	}
	if len(problems) != 2 || !problems[0].Warning || !problems[1].Warning ||
		!strings.Contains(problems[0].Message+problems[1].Message, AnnotationRateLimitTCP) ||
		!strings.Contains(problems[0].Message+problems[1].Message, AnnotationRateLimitHTTP) {
		t.Errorf("problems %v, want a clipping warning for rate-tcp and rate-http", problems)
	}
}

// TestBooleanAnnotationsAsOpenShift: boolean annotations take strconv.ParseBool's forms, as
// OpenShift's isTrue does, so that "TRUE" or "1" keeps meaning what it means there.
func TestBooleanAnnotationsAsOpenShift(t *testing.T) {
	for _, v := range []string{"true", "TRUE", "True", "t", "T", "1", "false", "FALSE", "False", "f", "F", "0"} {
		on, _ := strconv.ParseBool(v)
		r := newRoute("ns", "r", "www.example.com", 0, withAnnotation(AnnotationRateLimit, v),
			withAnnotation(AnnotationRateLimitTCP, "5"), withAnnotation(AnnotationDisableCookies, v))
		b, p := backendFor(t, r, testOptions())
		if p != nil {
			t.Fatalf("%q: rejected: %s", v, p)
		}
		if (b.RateLimit != nil) != on || (b.Cookie == nil) != on {
			t.Errorf("%q: rate limit %+v, cookie %+v; want rate limiting and cookies disabled = %v", v, b.RateLimit, b.Cookie, on)
		}
	}
}

// TestHSTSOpenShiftGrammar: the forms OpenShift's hsts pattern accepts are accepted and sent as
// written, as OpenShift sends them.
func TestHSTSOpenShiftGrammar(t *testing.T) {
	tests := map[string]string{}
	for _, v := range []string{`max-age=31536000`, `max-age = 31536000`, "max-age\t=\t\"10\"", `preload; max-age="0" ;includeSubDomains`,
		`MAX-AGE=5;preload;PRELOAD;includesubdomains`, `includeSubDomains;includeSubDomains;max-age=9999`} {
		tests[v] = v
	}
	for in, want := range tests {
		r := newRoute("ns", "r", "www.example.com", 0, withAnnotation(AnnotationHSTS, in))
		edge(r)
		b, p := backendFor(t, r, testOptions())
		if p != nil {
			t.Errorf("%q: rejected: %s", in, p)
			continue
		}
		if b.HSTS != want {
			t.Errorf("%q: got %q, want %q", in, b.HSTS, want)
		}
	}
}

// TestRejectedRouteHasNoWarnings: a Route rejected for a security annotation gets the rejection only;
// the warnings about its cosmetic annotations come once it is admitted.
func TestRejectedRouteHasNoWarnings(t *testing.T) {
	r := newRoute("ns", "r", "www.example.com", 0, withAnnotation(AnnotationIPAllowlist, "nope"), withAnnotation(AnnotationBalance, "fastest"))
	_, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
	if len(problems) != 1 || problems[0].Warning || problems[0].Reason != ReasonInvalidAnnotation {
		t.Fatalf("problems %v, want one InvalidAnnotation rejection", problems)
	}
}

// TestParseAnnotationDuration covers the grammar and the microsecond arithmetic at the edges.
func TestParseAnnotationDuration(t *testing.T) {
	ok := map[string]int64{
		"1": 1000, "1us": 1, "7ms": 7000, "2s": 2e6, "3m": 180e6, "4h": 4 * 3600e6, "5d": 5 * 86400e6,
		"2147483647ms": 2147483647000,
	}
	for in, want := range ok {
		if _, got, valid := parseAnnotationDuration(in); !valid || got != want {
			t.Errorf("parseAnnotationDuration(%q) = %d, %v; want %d", in, got, valid, want)
		}
	}
	for _, in := range []string{"", "0", "01", "1w", "1 s", "s", "-1", "+1", "1S", "1ms ", "١"} {
		if d, _, valid := parseAnnotationDuration(in); valid {
			t.Errorf("parseAnnotationDuration(%q) accepted as %q", in, d)
		}
	}
	for _, in := range []string{"2147483648", "99999999999999999999999999d", "106752d"} {
		if _, got, valid := parseAnnotationDuration(in); !valid || got <= maxTimeoutMillis*1000 {
			t.Errorf("parseAnnotationDuration(%q) = %d, %v; want above the maximum", in, got, valid)
		}
	}
}
