package mapping_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestFromEnvDefaults(t *testing.T) {
	o, err := mapping.FromEnv(envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	d := mapping.DefaultOptions()
	if o.HTTPPort != 80 || o.HTTPSPort != 443 || o.MaxConnections != 50000 || o.LoadBalanceAlgorithm != "random" ||
		o.TCPBalanceScheme != "source" || o.Timeouts != d.Timeouts || o.RouteLabels != nil || o.AllowWildcardRoutes {
		t.Fatalf("defaults differ from OpenShift's: %+v", o)
	}
}

func TestFromEnvOverrides(t *testing.T) {
	o, err := mapping.FromEnv(envOf(map[string]string{
		"ROUTER_SERVICE_HTTP_PORT":                 "8080",
		"ROUTER_MAX_CONNECTIONS":                   "auto",
		"ROUTER_LOAD_BALANCE_ALGORITHM":            "leastconn",
		"ROUTER_DEFAULT_SERVER_TIMEOUT":            "90",
		"ROUTE_LABELS":                             "shard in (a,b)",
		"ROUTER_ALLOW_WILDCARD_ROUTES":             "true",
		"ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK": "1",
		"ROUTER_DENIED_DOMAINS":                    " Bad.example.com , ,evil.test",
		"HAROUTE_POD_IPS":                          "10.128.2.7, fd01::7",
		"HAROUTE_HOST_IPS":                         "::ffff:192.0.2.10",
		"HAROUTE_TRUST_CROSS_NAMESPACE_ENDPOINTS":  "true",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if o.HTTPPort != 8080 || o.MaxConnections != 0 || o.LoadBalanceAlgorithm != "leastconn" || o.Timeouts.Server != "90ms" ||
		!o.AllowWildcardRoutes || !o.DisableNamespaceOwnershipCheck {
		t.Fatalf("overrides not applied: %+v", o)
	}
	if got := strings.Join(o.DeniedDomains, ","); got != "bad.example.com,evil.test" {
		t.Errorf("denied domains = %q", got)
	}
	if o.RouteLabels == nil || o.RouteLabels.String() != "shard in (a,b)" {
		t.Errorf("route labels = %v", o.RouteLabels)
	}
	if got := fmt.Sprint(o.RouterAddresses); got != "[10.128.2.7 fd01::7 192.0.2.10]" || !o.TrustCrossNamespaceEndpoints {
		t.Errorf("router addresses %s, trust cross-namespace %v", got, o.TrustCrossNamespaceEndpoints)
	}
}

func TestFromEnvRejectsEveryMalformedValue(t *testing.T) {
	_, err := mapping.FromEnv(envOf(map[string]string{
		"ROUTER_SERVICE_HTTP_PORT":      "80a",
		"ROUTER_MAX_CONNECTIONS":        "-1",
		"ROUTER_LOAD_BALANCE_ALGORITHM": "static-rr",
		"ROUTER_DEFAULT_SERVER_TIMEOUT": "30 s",
		"ROUTE_LABELS":                  "a in (",
		"ROUTER_ALLOW_WILDCARD_ROUTES":  "yes please",
		"DEFAULT_DESTINATION_CA_PATH":   "relative/ca.pem",
		"HAROUTE_POD_IPS":               "10.0.0.1,pod-a",
	}))
	if err == nil {
		t.Fatal("malformed settings were accepted")
	}
	for _, name := range []string{"ROUTER_SERVICE_HTTP_PORT", "ROUTER_MAX_CONNECTIONS", "static-rr", "ROUTER_DEFAULT_SERVER_TIMEOUT",
		"ROUTE_LABELS", "ROUTER_ALLOW_WILDCARD_ROUTES", "relative/ca.pem", "HAROUTE_POD_IPS"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not mention %s: %v", name, err)
		}
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]string{"5": "5ms", "5000ms": "5000ms", "30s": "30s", "2m": "2m", "1h": "1h", "24d": "24d", "10us": "10us"} {
		if got, ok := mapping.ParseTimeout(in); !ok || got != want {
			t.Errorf("ParseTimeout(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "s", "-5s", "5 s", "5sec", "1.5s", "25d", "99999999999999", "5s;", "${HOME}", "%[env(HOME)]"} {
		if got, ok := mapping.ParseTimeout(in); ok {
			t.Errorf("ParseTimeout(%q) accepted as %q", in, got)
		}
	}
}

// TestRouterHeaderActionsAsTheAPI checks ROUTER_HTTP_REQUEST_HEADERS and ROUTER_HTTP_RESPONSE_HEADERS
// against the IngressController API's rules, which the operator's values always pass: a request
// value reads request headers only and a response value response headers only, and Host joins the
// names no action may touch. Anything else refuses the start, naming the variable.
func TestRouterHeaderActionsAsTheAPI(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		ok          bool
	}{
		{"ROUTER_HTTP_REQUEST_HEADERS", "X-A:%25%5Breq.hdr(X-B)%2Clower%5D:Set", true},
		{"ROUTER_HTTP_REQUEST_HEADERS", "X-A:%25%5Bres.hdr(X-B)%5D:Set", false},
		{"ROUTER_HTTP_RESPONSE_HEADERS", "X-A:%25%5Bres.hdr(X-B)%5D:Set", true},
		{"ROUTER_HTTP_RESPONSE_HEADERS", "X-A:%25%5Breq.hdr(X-B)%5D:Set", false},
		{"ROUTER_HTTP_REQUEST_HEADERS", "X-A:%25%7B%2BQ%7D%5Bssl_c_der%2Cbase64%5D:Set", true},
		{"ROUTER_HTTP_REQUEST_HEADERS", "Host:Delete", false},
		{"ROUTER_HTTP_RESPONSE_HEADERS", "set-cookie:x:Set", false},
		{"ROUTER_HTTP_REQUEST_HEADERS", "X-Ok:Delete,PROXY:Delete", false},
	} {
		_, err := mapping.FromEnv(func(k string) string {
			if k == tt.name {
				return tt.value
			}
			return ""
		})
		if (err == nil) != tt.ok || err != nil && !strings.Contains(err.Error(), tt.name) {
			t.Errorf("%s=%s: error %v, want ok %v", tt.name, tt.value, err, tt.ok)
		}
	}
}
