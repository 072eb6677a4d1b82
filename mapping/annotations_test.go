package mapping

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

// backendFor translates one Route (with Service web) and returns its backend, or the problem.
func backendFor(t *testing.T, r *routev1.Route, opts Options) (*model.Backend, *Problem) {
	t.Helper()
	in := Input{
		Routes:         []*routev1.Route{r},
		Services:       nil,
		EndpointSlices: nil,
	}
	cfg, problems := translate(t, in, opts)
	if p := problemFor(problems, r.Namespace, r.Name); p != nil {
		return nil, p
	}
	b := cfg.Backend(cfg.Routes[0].Backend)
	if b == nil {
		t.Fatalf("no backend for the admitted route")
	}
	return b, nil
}

var (
	edge        = withTLS(routev1.TLSTerminationEdge, "")
	edgeAllow   = withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyAllow)
	passthrough = withTLS(routev1.TLSTerminationPassthrough, "")
	reencrypt   = func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt}
	}
)

func TestAnnotationsValid(t *testing.T) {
	opts := testOptions()
	opts.DefaultDestinationCAFile = "/etc/ca.pem"
	tests := []struct {
		name  string
		ann   map[string]string
		tls   routeOpt
		check func(t *testing.T, b *model.Backend)
	}{
		{"defaults http", nil, nil, func(t *testing.T, b *model.Backend) {
			got := b.Balance + " " + b.CheckInterval + " " + b.ForwardedHeaders
			if got != "random 5000ms append" || b.Cookie == nil || b.HSTS != "" || b.RateLimit != nil || b.Allowlist != nil {
				t.Errorf("got %+v", b)
			}
		}},
		{"defaults passthrough", nil, passthrough, func(t *testing.T, b *model.Backend) {
			if b.Balance != "source" || b.Cookie != nil || b.ForwardedHeaders != "" || b.Mode != model.ModeTCP {
				t.Errorf("got %+v", b)
			}
		}},
		{"balance", map[string]string{AnnotationBalance: "leastconn"}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, b.Balance, "leastconn")
		}},
		{"balance passthrough", map[string]string{AnnotationBalance: "roundrobin"}, passthrough, func(t *testing.T, b *model.Backend) {
			expect(t, b.Balance, "roundrobin")
		}},
		{"timeouts", map[string]string{AnnotationTimeout: "90s", AnnotationTimeoutTunnel: "2h", AnnotationHealthCheckInterval: "250"}, nil,
			func(t *testing.T, b *model.Backend) {
				expect(t, b.TimeoutServer+" "+b.TimeoutTunnel+" "+b.CheckInterval, "90s 2h 250ms")
			}},
		{"allowlist canonical sorted unique", map[string]string{AnnotationIPAllowlist: " 10.1.2.3/8\t192.168.0.1 2001:DB8:0:0::5  192.168.0.1 2001:DB8::/32\n"}, nil,
			func(t *testing.T, b *model.Backend) {
				expect(t, strings.Join(b.Allowlist, " "), "10.0.0.0/8 192.168.0.1 2001:db8::/32 2001:db8::5")
			}},
		{"legacy whitelist", map[string]string{AnnotationIPWhitelist: "10.0.0.1"}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, strings.Join(b.Allowlist, " "), "10.0.0.1")
		}},
		{"new allowlist wins", map[string]string{AnnotationIPAllowlist: "10.0.0.2", AnnotationIPWhitelist: "0.0.0.0/0"}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, strings.Join(b.Allowlist, " "), "10.0.0.2")
		}},
		{"allowlist of 1000", map[string]string{AnnotationIPAllowlist: manyAddrs(1000)}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, fmt.Sprint(len(b.Allowlist)), "1000")
		}},
		{"rate limit", map[string]string{AnnotationRateLimit: "true", AnnotationRateLimitConcurrent: "1", AnnotationRateLimitTCP: "2", AnnotationRateLimitHTTP: "1000000"}, nil,
			func(t *testing.T, b *model.Backend) {
				if b.RateLimit == nil || *b.RateLimit != (model.RateLimit{ConcurrentTCP: 1, RateTCP: 2, RateHTTP: 1000000}) {
					t.Errorf("got %+v", b.RateLimit)
				}
			}},
		{"rate limit off", map[string]string{AnnotationRateLimit: "false", AnnotationRateLimitConcurrent: "1"}, nil, func(t *testing.T, b *model.Backend) {
			if b.RateLimit != nil {
				t.Errorf("got %+v, want nil", b.RateLimit)
			}
		}},
		{"rate limit without limits", map[string]string{AnnotationRateLimit: "true"}, nil, func(t *testing.T, b *model.Backend) {
			if b.RateLimit != nil {
				t.Errorf("got %+v, want nil", b.RateLimit)
			}
		}},
		{"rate-http ignored on passthrough", map[string]string{AnnotationRateLimit: "true", AnnotationRateLimitTCP: "5", AnnotationRateLimitHTTP: "bogus"}, passthrough,
			func(t *testing.T, b *model.Backend) {
				if b.RateLimit == nil || *b.RateLimit != (model.RateLimit{RateTCP: 5}) {
					t.Errorf("got %+v", b.RateLimit)
				}
			}},
		{"cookies disabled", map[string]string{AnnotationDisableCookies: "true", AnnotationCookieSameSite: "None"}, nil, func(t *testing.T, b *model.Backend) {
			if b.Cookie != nil {
				t.Errorf("got %+v, want nil", b.Cookie)
			}
		}},
		{"cookies ignored on passthrough", map[string]string{AnnotationCookieName: "%[x]", AnnotationDisableCookies: "false"}, passthrough, func(t *testing.T, b *model.Backend) {
			if b.Cookie != nil {
				t.Errorf("got %+v, want nil", b.Cookie)
			}
		}},
		{"hsts as written", map[string]string{AnnotationHSTS: "max-age=0 ;PRELOAD; includesubdomains"}, edge, func(t *testing.T, b *model.Backend) {
			expect(t, b.HSTS, "max-age=0 ;PRELOAD; includesubdomains")
		}},
		{"hsts ignored without TLS", map[string]string{AnnotationHSTS: "garbage"}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, b.HSTS, "")
		}},
		{"hsts ignored on passthrough", map[string]string{AnnotationHSTS: "garbage"}, passthrough, func(t *testing.T, b *model.Backend) {
			expect(t, b.HSTS, "")
		}},
		{"forwarded headers", map[string]string{AnnotationForwardedHeaders: "never"}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, b.ForwardedHeaders, "never")
		}},
		{"rewrite root route", map[string]string{AnnotationRewriteTarget: "/v2/x;y=1"}, nil, func(t *testing.T, b *model.Backend) {
			if b.Rewrite == nil || *b.Rewrite != (model.Rewrite{Prefix: "", Target: "/v2/x;y=1"}) {
				t.Errorf("got %+v", b.Rewrite)
			}
		}},
		{"rewrite ignored on passthrough", map[string]string{AnnotationRewriteTarget: "bad target"}, passthrough, func(t *testing.T, b *model.Backend) {
			if b.Rewrite != nil {
				t.Errorf("got %+v", b.Rewrite)
			}
		}},
		{"pod concurrent connections", map[string]string{AnnotationPodConcurrentConns: "25"}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, fmt.Sprint(b.ServerMaxConn), "25")
		}},
		// 0 is HAProxy's "no limit", as OpenShift writes it.
		{"pod concurrent connections 0", map[string]string{AnnotationPodConcurrentConns: "0"}, nil, func(t *testing.T, b *model.Backend) {
			expect(t, fmt.Sprint(b.ServerMaxConn), "0")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRoute("ns", "r", "www.example.com", 0)
			r.Annotations = tt.ann
			if tt.tls != nil {
				tt.tls(r)
			}
			b, p := backendFor(t, r, opts)
			if p != nil {
				t.Fatalf("rejected: %s", p)
			}
			tt.check(t, b)
		})
	}
}

// TestRewriteTarget: rewrite-target means what OpenShift's router makes of it. The prefix is the
// Route's path as written; "/" alone also replaces the "/" after it; the value is decoded as
// OpenShift's clean-up and HAProxy read it: quotes removed unless escaped, a lone backslash gone,
// '#' ending the value and dropping the rest of the path, "%%" one '%'.
func TestRewriteTarget(t *testing.T) {
	for _, tc := range []struct {
		path, value string
		want        model.Rewrite
	}{
		{"/api", "/", model.Rewrite{Prefix: "/api", Target: "/", SlashOptional: true}},
		{"/api/", "/", model.Rewrite{Prefix: "/api/", Target: "/", SlashOptional: true}},
		{"/", "/", model.Rewrite{Prefix: "/", Target: "/", SlashOptional: true}},
		{"", "/", model.Rewrite{Prefix: "", Target: "/", SlashOptional: true}},
		{"/api", "/v2/", model.Rewrite{Prefix: "/api", Target: "/v2/"}},
		{"/it's", "/it\\'s", model.Rewrite{Prefix: "/it's", Target: "/it's"}},
		{"/a", "/'quoted'", model.Rewrite{Prefix: "/a", Target: "/quoted"}},
		{"/a", `/"x"y`, model.Rewrite{Prefix: "/a", Target: "/xy"}},
		{"/a", "/foo#comment", model.Rewrite{Prefix: "/a", Target: "/foo", DropRest: true}},
		{"/a", `/a\b`, model.Rewrite{Prefix: "/a", Target: "/ab"}},
		{"/a", "/%41", model.Rewrite{Prefix: "/a", Target: "/%41"}},
		{"/a", "/%%41", model.Rewrite{Prefix: "/a", Target: "/%41"}},
		{"/a", "/%%%41", model.Rewrite{Prefix: "/a", Target: "/%%%41"}},
	} {
		r := newRoute("ns", "r", "www.example.com", 0, withPath(tc.path), withAnnotation(AnnotationRewriteTarget, tc.value))
		b, p := backendFor(t, r, testOptions())
		if p != nil {
			t.Errorf("path %q, target %q: rejected: %s", tc.path, tc.value, p)
			continue
		}
		if b.Rewrite == nil || *b.Rewrite != tc.want {
			t.Errorf("path %q, target %q: got %+v, want %+v", tc.path, tc.value, b.Rewrite, tc.want)
		}
	}
}

// TestSecurityAnnotationsInvalid: an invalid value of a security annotation rejects the Route with
// InvalidAnnotation naming the annotation.
func TestSecurityAnnotationsInvalid(t *testing.T) {
	type bad struct {
		ann    string
		values []string
		tls    routeOpt
	}
	tests := []bad{
		{AnnotationIPAllowlist, []string{"10.0.0.0/8 bogus", "10.0.0.0/33", "300.1.1.1", "fe80::1%eth0", "10.0.0.1,10.0.0.2", manyAddrs(1001)}, nil},
		{AnnotationIPWhitelist, []string{"example.com", "10.0.0.1;10.0.0.2"}, nil},
		{AnnotationRateLimit, []string{"yes", "on", "2", "tRUE", ""}, nil},
		{AnnotationRateLimitConcurrent, []string{"0", "-1", "01", "+5", "1e3", "", "1.5"}, nil},
		{AnnotationRateLimitTCP, []string{"ten"}, nil},
		{AnnotationRateLimitHTTP, []string{"0"}, nil},
		{AnnotationHSTS, []string{"", "includeSubDomains", "max-age=", "max-age=abc", "max-age=1;max-age=2", "max-age=\"1", "max-age=\"\"",
			"max-age=1;report-uri=x", "max-age=1;", ";max-age=1", "max-age=12345678901", "max-age 1", "max-agex=1", "max-age=1\n;preload"}, edge},
		{AnnotationForwardedHeaders, []string{"Append", "drop"}, nil},
		{AnnotationRewriteTarget, []string{"", "v2", "/a b", "/a?b", `/a\#b`, `/a\"b`, `/a\\b`, `/a\\1`, "/%[env(HOME)]", "/a\x00", "/café", "/a\rb"}, nil},
	}
	// Every security annotation also refuses the hostile values (where they are not already listed).
	for _, name := range []string{AnnotationIPAllowlist, AnnotationRateLimit, AnnotationRateLimitConcurrent, AnnotationRateLimitTCP,
		AnnotationRateLimitHTTP, AnnotationForwardedHeaders, AnnotationRewriteTarget} {
		tests = append(tests, bad{name, hostileValues, nil})
	}
	tests = append(tests, bad{AnnotationHSTS, hostileValues, edge})

	for _, tt := range tests {
		if annotationKindOf(tt.ann) != kindSecurity {
			t.Fatalf("%s is not a security annotation", tt.ann)
		}
		for _, v := range tt.values {
			t.Run(fmt.Sprintf("%s=%q", tt.ann, v), func(t *testing.T) {
				r := newRoute("ns", "r", "www.example.com", 0, withAnnotation(tt.ann, v))
				if tt.tls != nil {
					tt.tls(r)
				}
				b, p := backendFor(t, r, testOptions())
				if p == nil {
					t.Fatalf("admitted with backend %+v, want InvalidAnnotation", b)
				}
				if p.Reason != ReasonInvalidAnnotation || !strings.Contains(p.Message, tt.ann) {
					t.Fatalf("got %s, want InvalidAnnotation naming %s", p, tt.ann)
				}
			})
		}
	}
}

// hostileValues try HAProxy sample fetches, environment expansion, line breaks, spaces and quotes.
var hostileValues = []string{"%[env(HOME)]", "${HOME}", "a\nb", "1\n", " 1", "\"x\""}

// TestAllowlistNeverOpens: an allowlist that fails to parse must not leave the Route reachable from
// everywhere, whatever else is valid in it.
func TestAllowlistNeverOpens(t *testing.T) {
	r := newRoute("ns", "r", "www.example.com", 0,
		withAnnotation(AnnotationIPAllowlist, "10.0.0.0/8 10.0.0.0/99"),
		withAnnotation(AnnotationIPWhitelist, "10.0.0.0/8"))
	cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
	if len(cfg.Backends) != 0 || len(problems) != 1 {
		t.Fatalf("got backends %v problems %v, want the Route rejected", cfg.Backends, problems)
	}
}

func TestSeveralInvalidAnnotationsAreAllReported(t *testing.T) {
	r := newRoute("ns", "r", "www.example.com", 0,
		withAnnotation(AnnotationIPAllowlist, "x"), withAnnotation(AnnotationRateLimitTCP, "0"), withAnnotation(AnnotationBalance, "first"))
	_, p := backendFor(t, r, testOptions())
	if p == nil || !strings.Contains(p.Message, AnnotationIPAllowlist) || !strings.Contains(p.Message, AnnotationRateLimitTCP) {
		t.Fatalf("got %v, want a message naming both security annotations", p)
	}
	if strings.Contains(p.Message, AnnotationBalance) {
		t.Errorf("the rejection names the cosmetic annotation: %s", p.Message)
	}
}

func TestCanonicalIPOrCIDR(t *testing.T) {
	tests := map[string]string{
		"10.0.0.1":        "10.0.0.1",
		"10.1.2.3/8":      "10.0.0.0/8",
		"2001:DB8::1":     "2001:db8::1",
		"2001:db8::1/128": "2001:db8::1/128",
		"::ffff:10.0.0.1": "::ffff:10.0.0.1",
		"0.0.0.0/0":       "0.0.0.0/0",
	}
	for in, want := range tests {
		got, ok := canonicalIPOrCIDR(in)
		if !ok || got != want {
			t.Errorf("canonicalIPOrCIDR(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "10.0.0", "10.0.0.1/", "/8", "fe80::1%eth0", "10.0.0.1/-1", "x"} {
		if got, ok := canonicalIPOrCIDR(in); ok {
			t.Errorf("canonicalIPOrCIDR(%q) = %q, want refused", in, got)
		}
	}
}

func manyAddrs(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("10.%d.%d.1", i/256, i%256)
	}
	return strings.Join(parts, " ")
}

func expect[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
