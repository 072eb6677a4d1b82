package traffic

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
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
		b := testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.0.%d", 2+i), name)
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
		fwd := fmt.Sprintf(`Forwarded=for=127.0.0.1;host=%s;proto=%s`, host, tc.proto)
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
		if got := resp.Header.Get(testkit.HeaderForwarded); got != want[tc.policy] {
			t.Errorf("GET %s (policy %s): the backend received\n  %s\nwant\n  %s", url, tc.policy, got, want[tc.policy])
		}
	}
}

// TestForwardedHost: the Forwarded header the router writes is OpenShift's, byte for byte —
// "for=<ip>" (an IPv6 address bracketed and quoted), "host=<Host>" unquoted, "proto=" the
// X-Forwarded-Proto the router set — for any Host a host name, an IP address and a port make up. A
// Host with other characters (a wildcard Route serves any first label) could end the host parameter
// early and add parameters or a whole element of its own, such as a forged "for": it is sent quoted,
// with its quotes and backslashes escaped, so that the header has the router's three parameters and
// nothing else. HAProxy 3.0 and newer answer 400 themselves to a Host with a comma, a quote or a
// backslash; 2.6 lets it through to the Route.
func TestForwardedHost(t *testing.T) {
	refusesOddHosts := buildOf(t).Version.AtLeast(3, 0)
	f := newFixture(t)
	// A Go server refuses a Host with a quote or a backslash: the backend is a raw one.
	f.m.ServiceAt("fwd", "rec", startForwardedRecorder(t, "127.0.0.2"))
	f.m.Route("fwd", "wild", "x.wild.fwd.example.com", "", "rec", testbed.Wildcard())
	f.m.Route("fwd", "replace", "x.replace.fwd.example.com", "", "rec", testbed.Wildcard(),
		testbed.Annotate(mapping.AnnotationForwardedHeaders, "replace"))
	r := f.start(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPPort))

	for _, tc := range []struct {
		host, want string
		odd        bool // a comma, a quote or a backslash
	}{
		{"www.wild.fwd.example.com", `for=127.0.0.1;host=www.wild.fwd.example.com;proto=http`, false},
		{"WWW.Wild.fwd.example.com:8080", `for=127.0.0.1;host=www.wild.fwd.example.com:8080;proto=http`, false},
		{"a_b.wild.fwd.example.com.", `for=127.0.0.1;host=a_b.wild.fwd.example.com.;proto=http`, false},
		{`a;for=10.9.8.7.x`, "", false}, // not a host of the Route: 503, never forwarded
		{`a;for=evil.wild.fwd.example.com`, `for=127.0.0.1;host="a;for=evil.wild.fwd.example.com";proto=http`, false},
		// HAProxy reads the last of comma-separated values, as OpenShift's rules do.
		{`x,for=10;b=c.replace.fwd.example.com`, `for=127.0.0.1;host="for=10;b=c.replace.fwd.example.com";proto=http`, true},
		// ... outside quotes only.
		{`a"b,for="c.wild.fwd.example.com`, `for=127.0.0.1;host="a\"b,for=\"c.wild.fwd.example.com";proto=http`, true},
		{`a\b.wild.fwd.example.com`, `for=127.0.0.1;host="a\\b.wild.fwd.example.com";proto=http`, true},
	} {
		raw, err := rawExchange(addr, nil, nil, rawRequest(tc.host, "/"))
		if err != nil {
			t.Errorf("Host %s: %v", tc.host, err)
			continue
		}
		resp, body, err := parseRaw(raw)
		if err != nil {
			t.Errorf("Host %s: %v", tc.host, err)
			continue
		}
		switch {
		case tc.odd && refusesOddHosts:
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("Host %s: status %d, want HAProxy's 400", tc.host, resp.StatusCode)
			}
			continue
		case tc.want == "":
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("Host %s: status %d, want 503", tc.host, resp.StatusCode)
			}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s: status %d, want 200 (body %q)", tc.host, resp.StatusCode, body)
			continue
		}
		var got []string
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("Host %s: %q is not the recorder's answer: %v", tc.host, body, err)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("Host %s: the backend received Forwarded %q, want %q", tc.host, got, tc.want)
		}
	}
}

// startForwardedRecorder starts a minimal HTTP/1.1 server on ip:0 that reads any request head and
// answers 200 with the JSON list of the Forwarded header values it received, byte for byte, then
// closes the connection. It is stopped on cleanup.
func startForwardedRecorder(t *testing.T, ip string) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	serve := func(c net.Conn) {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(rawTimeout))
		br := bufio.NewReader(c)
		values := []string{}
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return // a health check, or a client gone
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Forwarded") {
				values = append(values, strings.TrimLeft(value, " \t"))
			}
		}
		body, _ := json.Marshal(values)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	}
	return testkit.ServeConns(t, l, serve)
}
