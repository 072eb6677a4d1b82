package mapping

import (
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
)

func TestRouteHost(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	tests := []struct {
		name     string
		host     string
		wildcard bool
		mutate   func(*Options)
		want     string // effective host; "" when rejected
		reason   string
		msg      string // substring of the message
	}{
		{name: "plain", host: "www.example.com", want: "www.example.com"},
		{name: "uppercase", host: "WWW.Example.COM", reason: ReasonInvalidHost, msg: "upper-case letters"},
		{name: "one upper-case letter", host: "www.example.Com", reason: ReasonInvalidHost, msg: "upper-case letters"},
		{name: "single label", host: "localhost", want: "localhost"},
		{name: "63-char label", host: long63 + ".example.com", want: long63 + ".example.com"},
		{name: "64-char label", host: long63 + "a.example.com", reason: ReasonInvalidHost, msg: "longer than 63"},
		{name: "too long", host: strings.Repeat("abcdefghi.", 26) + "com", reason: ReasonInvalidHost, msg: "longer than 253"},
		{name: "semicolon", host: "www.example.com;x", reason: ReasonInvalidHost},
		{name: "space", host: "www example.com", reason: ReasonInvalidHost},
		{name: "newline", host: "www.example.com\nx", reason: ReasonInvalidHost},
		{name: "underscore", host: "a_b.example.com", reason: ReasonInvalidHost},
		{name: "trailing dot", host: "example.com.", reason: ReasonInvalidHost},
		{name: "leading hyphen", host: "-a.example.com", reason: ReasonInvalidHost},
		{name: "unicode", host: "café.example.com", reason: ReasonInvalidHost},
		{name: "sample fetch", host: "%[env(HOME)].example.com", reason: ReasonInvalidHost},
		{name: "star without policy", host: "*.example.com", reason: ReasonInvalidHost, msg: "wildcardPolicy"},
		{name: "missing host", host: "", reason: ReasonInvalidHost, msg: "no host and no ROUTER_SUBDOMAIN"},
		{
			name: "generated host", host: "",
			mutate: func(o *Options) { o.Subdomain = "${name}-${namespace}.apps.example.com" },
			want:   "r-ns.apps.example.com",
		},
		{
			name: "generated host with upper case", host: "",
			mutate: func(o *Options) { o.Subdomain = "${name}-${namespace}.Apps.example.com" },
			reason: ReasonInvalidHost, msg: "upper-case letters",
		},
		{
			name: "generated host invalid", host: "",
			mutate: func(o *Options) { o.Subdomain = "${name}_x.example.com" },
			reason: ReasonInvalidHost,
		},
		{name: "wildcard not allowed", host: "www.example.com", wildcard: true, reason: ReasonRouteNotAdmitted, msg: "wildcard routes are not allowed"},
		{name: "wildcard from host", host: "www.apps.example.com", wildcard: true, mutate: allowWildcards, want: "*.apps.example.com"},
		{name: "wildcard given as star", host: "*.example.com", wildcard: true, mutate: allowWildcards, want: "*.example.com"},
		{name: "wildcard with upper case", host: "*.Example.com", wildcard: true, mutate: allowWildcards, reason: ReasonInvalidHost, msg: "upper-case letters"},
		{name: "wildcard one-label domain", host: "*.com", wildcard: true, mutate: allowWildcards, reason: ReasonInvalidHost, msg: "two labels"},
		{name: "wildcard from two labels", host: "example.com", wildcard: true, mutate: allowWildcards, reason: ReasonInvalidHost, msg: "two labels"},
		{name: "wildcard single label", host: "localhost", wildcard: true, mutate: allowWildcards, reason: ReasonInvalidHost},
		{name: "star inside", host: "www.*.example.com", wildcard: true, mutate: allowWildcards, reason: ReasonInvalidHost},
		{name: "double star", host: "*.*.example.com", wildcard: true, mutate: allowWildcards, reason: ReasonInvalidHost},
		{name: "denied", host: "db.internal.example.com", mutate: deny("internal.example.com"), reason: ReasonRouteNotAdmitted, msg: "denied"},
		{name: "denied itself", host: "internal.example.com", mutate: deny("internal.example.com"), reason: ReasonRouteNotAdmitted, msg: "denied"},
		{name: "not denied suffix", host: "notinternal.example.com", mutate: deny("internal.example.com"), want: "notinternal.example.com"},
		{name: "allowed", host: "a.example.com", mutate: allow("example.com"), want: "a.example.com"},
		{name: "not allowed", host: "a.example.org", mutate: allow("example.com"), reason: ReasonRouteNotAdmitted, msg: "not in allowed"},
		{name: "not allowed suffix trick", host: "evilexample.com", mutate: allow("example.com"), reason: ReasonRouteNotAdmitted},
		{
			name: "denied before allowed", host: "x.internal.example.com",
			mutate: func(o *Options) { allow("example.com")(o); deny("internal.example.com")(o) },
			reason: ReasonRouteNotAdmitted, msg: "denied",
		},
		{
			name: "wildcard denied", host: "*.internal.example.com", wildcard: true,
			mutate: func(o *Options) { allowWildcards(o); deny("internal.example.com")(o) },
			reason: ReasonRouteNotAdmitted, msg: "denied",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			if tt.mutate != nil {
				tt.mutate(&opts)
			}
			r := newRoute("ns", "r", tt.host, 0)
			if tt.wildcard {
				r.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain
			}
			hs, rej := routeHost(r, opts)
			if tt.reason != "" {
				if rej == nil {
					t.Fatalf("got host %q, want rejection %s", hs.host, tt.reason)
				}
				if rej.reason != tt.reason || !strings.Contains(rej.message, tt.msg) {
					t.Fatalf("got %s, want %s containing %q", rej, tt.reason, tt.msg)
				}
				return
			}
			if rej != nil {
				t.Fatalf("unexpected rejection %s", rej)
			}
			if hs.host != tt.want || hs.wildcard != tt.wildcard {
				t.Fatalf("got %+v, want host %q wildcard %v", hs, tt.want, tt.wildcard)
			}
		})
	}
}

// TestRouteHostSubdomainCase: a host made of spec.subdomain and ROUTER_DOMAIN is not lower-cased
// either: OpenShift's router rejects it with upper-case letters, as a spec.host.
func TestRouteHostSubdomainCase(t *testing.T) {
	opts := testOptions()
	opts.Domain = "apps.example.com"
	for sub, want := range map[string]string{"shop": "shop.apps.example.com", "Shop": ""} {
		r := newRoute("ns", "r", "", 0)
		r.Spec.Subdomain = sub
		hs, rej := routeHost(r, opts)
		switch {
		case want == "" && (rej == nil || rej.reason != ReasonInvalidHost || !strings.Contains(rej.message, "upper-case letters")):
			t.Errorf("subdomain %q: got host %q, rejection %v; want InvalidHost for its upper-case letters", sub, hs.host, rej)
		case want != "" && (rej != nil || hs.host != want):
			t.Errorf("subdomain %q: got host %q, rejection %v; want %q", sub, hs.host, rej, want)
		}
	}
}

func allowWildcards(o *Options) { o.AllowWildcardRoutes = true }

func deny(d ...string) func(*Options) {
	return func(o *Options) { o.DeniedDomains = append(o.DeniedDomains, d...) }
}

func allow(d ...string) func(*Options) {
	return func(o *Options) { o.AllowedDomains = append(o.AllowedDomains, d...) }
}

func TestPathError(t *testing.T) {
	good := []string{"", "/", "/api", "/api/", "/a-b_c.d~e", "/%41%20", "/a;b=c", "/@user:1", "/!$&()*+,", "/it's"}
	for _, p := range good {
		if msg := pathError(p); msg != "" {
			t.Errorf("pathError(%q) = %q, want accepted", p, msg)
		}
	}
	bad := []string{
		"api", "/a b", "/a\tb", "/a\nb", "/a\rb", "/a\x00b", "/a\"b", "/a\\b", "/a#b", "/a?b",
		"/%[env(HOME)]", "/${HOME}", "/a<b>", "/a`b", "/a|b", "/a^b", "/café", "/" + strings.Repeat("a", maxPathLength),
	}
	for _, p := range bad {
		if msg := pathError(p); msg == "" {
			t.Errorf("pathError(%q) accepted, want rejected", p)
		}
	}
	if msg := pathError("/" + strings.Repeat("a", maxPathLength-1)); msg != "" {
		t.Errorf("a path of exactly %d characters was rejected: %s", maxPathLength, msg)
	}
}

// TestHostilePathsNeverReachMaps checks end to end that a Route with a hostile path is rejected and
// contributes nothing to any map.
func TestHostilePathsNeverReachMaps(t *testing.T) {
	paths := []string{"/a b", "/a\nb", "/a\"b", "/x\r\nHost: evil"}
	var in Input
	for i, p := range paths {
		in.Routes = append(in.Routes, newRoute("ns", "r"+string(rune('a'+i)), "www.example.com", i, withPath(p)))
	}
	cfg, problems := translate(t, in, testOptions())
	if len(cfg.Backends) != 0 {
		t.Errorf("got %d backends, want none", len(cfg.Backends))
	}
	for _, m := range cfg.Maps {
		if len(m.Entries) != 0 {
			t.Errorf("map %s has entries %v", m.Name, m.Entries)
		}
	}
	if len(problems) != len(paths) {
		t.Fatalf("got %d problems, want %d: %v", len(problems), len(paths), problems)
	}
	for _, p := range problems {
		if p.Reason != ReasonInvalidRoute {
			t.Errorf("%s: reason %s, want %s", p.Name, p.Reason, ReasonInvalidRoute)
		}
	}
}
