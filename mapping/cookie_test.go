package mapping

import (
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/model"
)

// TestCookieAsOpenShift checks the sticky-session cookie against OpenShift's router: its name
// (cookie_name when valid, else ROUTER_COOKIE_NAME, else the MD5 hex of " <namespace>:<name>"), and
// the Secure and SameSite attributes (haroute_cookie.map), which only edge and reencrypt Routes whose
// insecure policy is not Allow have, SameSite from cookie-same-site (Lax, Strict, None) or None.
func TestCookieAsOpenShift(t *testing.T) {
	// echo -n " ns:r" | md5sum: OpenShift's name for Route ns/r.
	const stockName = "9f4b23239cf893b80f5a8ee8c4855289"
	redirect := withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect)
	tests := []struct {
		name      string
		tls       routeOpt
		ann       map[string]string
		routerEnv string
		wantName  string
		wantSite  string // "" means not Secure
		warnings  int
	}{
		{"http", nil, nil, "", stockName, "", 0},
		{"http ignores same-site", nil, map[string]string{AnnotationCookieSameSite: "Strict"}, "", stockName, "", 1},
		{"edge", edge, nil, "", stockName, "None", 0},
		{"edge redirect", redirect, map[string]string{AnnotationCookieSameSite: "Lax"}, "", stockName, "Lax", 0},
		{"edge allow", edgeAllow, map[string]string{AnnotationCookieSameSite: "Strict"}, "", stockName, "", 1},
		{"reencrypt strict", reencrypt, map[string]string{AnnotationCookieSameSite: "Strict"}, "", stockName, "Strict", 0},
		{"same-site is case-sensitive", edge, map[string]string{AnnotationCookieSameSite: "lax"}, "", stockName, "None", 1},
		{"annotation name", edge, map[string]string{AnnotationCookieName: "SID_1-x"}, "ROUTERCOOKIE", "SID_1-x", "None", 0},
		{"router name", edge, nil, "ROUTERCOOKIE", "ROUTERCOOKIE", "None", 0},
		{"bad annotation falls back to the router's", nil, map[string]string{AnnotationCookieName: "a;b"}, "ROUTERCOOKIE", "ROUTERCOOKIE", "", 1},
		{"bad annotation falls back to OpenShift's", nil, map[string]string{AnnotationCookieName: "a b"}, "", stockName, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			opts.DefaultDestinationCAFile = "/etc/ca.pem"
			opts.CookieName = tt.routerEnv
			r := newRoute("ns", "r", "www.example.com", 0)
			r.Annotations = tt.ann
			if tt.tls != nil {
				tt.tls(r)
			}
			cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, opts)
			warnings := 0
			for _, p := range problems {
				if !p.Warning {
					t.Fatalf("rejected: %s", p)
				}
				warnings++
			}
			if warnings != tt.warnings {
				t.Errorf("%d warnings, want %d: %+v", warnings, tt.warnings, problems)
			}
			b := cfg.Backend(cfg.Routes[0].Backend)
			if b.Cookie == nil || b.Cookie.Name != tt.wantName {
				t.Fatalf("cookie %+v, want name %s", b.Cookie, tt.wantName)
			}
			site, ok := cfg.MapValue(model.MapCookieSameSite, b.Name)
			if site != tt.wantSite || ok != (tt.wantSite != "") {
				t.Errorf("%s entry %q (%v), want %q", model.MapCookieSameSite, site, ok, tt.wantSite)
			}
		})
	}
}

// TestCookieChangesAreMapEntries checks that flipping a Route between Allow and another insecure
// policy, or changing its cookie-same-site, changes a map entry only: the backend's options stay the
// same, so the change needs no reload.
func TestCookieChangesAreMapEntries(t *testing.T) {
	base := func(tls routeOpt, site string) *model.Backend {
		r := newRoute("ns", "r", "www.example.com", 0)
		tls(r)
		if site != "" {
			r.Annotations = map[string]string{AnnotationCookieSameSite: site}
		}
		b, p := backendFor(t, r, testOptions())
		if p != nil {
			t.Fatalf("rejected: %s", p)
		}
		return b
	}
	a, b, c := base(edge, ""), base(edgeAllow, ""), base(edge, "Strict")
	if *a.Cookie != *b.Cookie || *a.Cookie != *c.Cookie {
		t.Errorf("cookies differ: %+v %+v %+v", a.Cookie, b.Cookie, c.Cookie)
	}
}
