package traffic

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/mapping"
)

// TestForwardedHeaderPolicies checks what a backend receives under each forwarded-headers policy
// (the set-forwarded-headers annotation, and the router default append), over plain HTTP and through
// edge termination, from a client that sends its own X-Forwarded-For and X-Forwarded-Host as if it
// sat behind another proxy. The policies are applied in the frontends, once for all Routes.
func TestForwardedHeaderPolicies(t *testing.T) {
	f := newFixture(t)
	policies := []string{"", "append", "replace", "if-none", "never"}
	for i, p := range policies {
		name := "fwd-" + p
		if p == "" {
			name = "fwd-default"
		}
		b := testbed.StartHTTPBackend(t, fmt.Sprintf("127.0.0.%d", 2+i), name)
		f.m.Service("fwd", name, b)
		var opts []testbed.RouteOption
		if p != "" {
			opts = append(opts, testbed.Annotate(mapping.AnnotationForwardedHeaders, p))
		}
		f.m.Route("fwd", name, name+".example.com", "", name, opts...)
		crt, key := f.ca.Issue(t, name+".secure.example.com")
		f.m.Route("fwd", name+"-edge", name+".secure.example.com", "", name, append(opts, testbed.Edge(crt, key))...)
	}
	r := f.start(t)

	client := http.Header{"X-Forwarded-For": {"192.0.2.7"}, "X-Forwarded-Host": {"client.example"}}
	for _, tc := range []struct{ policy, proto string }{
		{"default", "http"}, {"append", "http"}, {"replace", "http"}, {"if-none", "http"}, {"never", "http"},
		{"default", "https"}, {"append", "https"}, {"replace", "https"}, {"if-none", "https"}, {"never", "https"},
	} {
		host := "fwd-" + tc.policy + ".example.com"
		if tc.proto == "https" {
			host = "fwd-" + tc.policy + ".secure.example.com"
		}
		fwd := fmt.Sprintf(`Forwarded=for=127.0.0.1;host="%s";proto=%s`, host, tc.proto)
		want := map[string]string{
			"default": fwd + ";X-Forwarded-For=192.0.2.7|127.0.0.1;X-Forwarded-Host=client.example|" + host + ";X-Forwarded-Port=port;X-Forwarded-Proto=" + tc.proto,
			"replace": fwd + ";X-Forwarded-For=127.0.0.1;X-Forwarded-Host=" + host + ";X-Forwarded-Port=port;X-Forwarded-Proto=" + tc.proto,
			"if-none": fwd + ";X-Forwarded-For=192.0.2.7;X-Forwarded-Host=client.example;X-Forwarded-Port=port;X-Forwarded-Proto=" + tc.proto,
			"never":   "X-Forwarded-For=192.0.2.7;X-Forwarded-Host=client.example",
		}
		want["append"] = want["default"]
		url := tc.proto + "://" + host + "/"
		resp, err := r.Client.Do(http.MethodGet, url, client)
		if err != nil {
			t.Errorf("GET %s: %v", url, err)
			continue
		}
		if resp.Status != http.StatusOK {
			t.Errorf("GET %s: status %d from %s", url, resp.Status, who(resp.Backend))
			continue
		}
		if got := resp.Header.Get(testbed.HeaderForwarded); got != want[tc.policy] {
			t.Errorf("GET %s (policy %s): the backend received\n  %s\nwant\n  %s", url, tc.policy, got, want[tc.policy])
		}
	}
}
