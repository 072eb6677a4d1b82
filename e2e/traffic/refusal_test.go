package traffic

import (
	"bytes"
	"net"
	"strconv"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/mapping"
)

// refusedBytes checks that a raw exchange ended the way OpenShift's router ends a refused
// connection: closed (or reset) without a byte of answer.
func refusedBytes(t *testing.T, what string, raw []byte, err error) {
	t.Helper()
	switch {
	case err != nil && !isReset(err):
		t.Errorf("%s: %v, want the connection closed without an answer", what, err)
	case len(raw) > 0:
		t.Errorf("%s: the router answered %q, want the connection closed without an answer", what, raw)
	}
}

// answered checks that a raw exchange got a 200 from the backend named backend.
func answered(t *testing.T, what string, raw []byte, err error, backend string) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	resp, _, err := parseRaw(raw)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if resp.StatusCode != 200 || resp.Header.Get(testbed.HeaderBackend) != backend {
		t.Errorf("%s: got %d from %s, want 200 from backend %s", what, resp.StatusCode, who(resp.Header.Get(testbed.HeaderBackend)), backend)
	}
}

// TestAllowlistRefusal: a client outside a Route's ip_allowlist gets no answer at all, over plain
// HTTP and through edge termination: the router closes its connection (OpenShift's
// "tcp-request content reject"), and the request never reaches the backend. Clients inside the
// list, by address or by network, are served; a connection kept alive from an allowed Route is
// closed at its first request for a Route that refuses it.
func TestAllowlistRefusal(t *testing.T) {
	f := newFixture(t)
	be := testbed.StartHTTPBackend(t, "127.0.0.2", "app")
	f.m.Service("acl", "app", be)
	f.m.Route("acl", "allow", "allow.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPAllowlist, "127.0.0.1"))
	f.m.Route("acl", "allow-cidr", "cidr.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPAllowlist, "192.168.0.0/16 127.0.0.0/8"))
	f.m.Route("acl", "legacy", "legacy.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPWhitelist, "10.0.0.1"))
	f.m.Route("acl", "deny", "deny.example.com", "", "app", testbed.Annotate(mapping.AnnotationIPAllowlist, "10.0.0.1 2001:db8::/32"))
	crt, key := f.ca.Issue(t, "deny.secure.example.com")
	f.m.Route("acl", "deny-edge", "deny.secure.example.com", "", "app", testbed.Edge(crt, key), testbed.Annotate(mapping.AnnotationIPAllowlist, "10.0.0.1"))
	r := f.start(t)
	httpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPPort))
	httpsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPSPort))

	for _, host := range []string{"allow.example.com", "cidr.example.com"} {
		raw, err := rawExchange(httpAddr, nil, nil, rawRequest(host, "/x"))
		answered(t, "GET http://"+host+"/x", raw, err, "app")
	}
	before := be.Requests()
	for _, host := range []string{"deny.example.com", "legacy.example.com"} {
		raw, err := rawExchange(httpAddr, nil, nil, rawRequest(host, "/x"))
		refusedBytes(t, "GET http://"+host+"/x", raw, err)
	}
	raw, err := rawExchange(httpsAddr, nil, f.tlsTo("deny.secure.example.com"), rawRequest("deny.secure.example.com", "/x"))
	refusedBytes(t, "GET https://deny.secure.example.com/x", raw, err)

	// Two requests on one connection: the allowed Route answers, the refusing one closes.
	keepAlive := "GET /first HTTP/1.1\r\nHost: allow.example.com\r\n\r\n" + rawRequest("deny.example.com", "/second")
	raw, err = rawExchange(httpAddr, nil, nil, keepAlive)
	answered(t, "GET /first then /second on one connection", raw, err, "app")
	if n := bytes.Count(raw, []byte("HTTP/1.1 ")); n != 1 {
		t.Errorf("GET /first then /second on one connection: %d answers %q, want the first only", n, raw)
	}
	if n := be.Requests() - before; n != 1 {
		t.Errorf("the backend received %d requests since the refused ones, want 1 (the allowed /first)", n)
	}
}
