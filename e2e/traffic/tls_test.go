package traffic

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// TestTLS serves edge, passthrough and reencrypt Routes from one HAProxy: SNI inspection in
// public_ssl must hand each connection to the right place.
func TestTLS(t *testing.T) {
	f := newFixture(t)
	serviceCA := testkit.NewCA(t, "service CA") // signs the reencrypt backends' certificates
	strangerCA := testkit.NewCA(t, "stranger CA")

	// Edge Routes, one per insecure policy, and one without its own certificate.
	edge := map[string]*testkit.Backend{}
	for i, name := range []string{"edge-none", "edge-allow", "edge-redirect", "edge-default"} {
		edge[name] = testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.0.%d", 2+i), name)
		f.m.Service("tls", name, edge[name])
	}
	crt, key := f.ca.Issue(t, "edge.example.com")
	f.m.Route("tls", "edge-none", "edge.example.com", "", "edge-none", testbed.Edge(crt, key))
	crt, key = f.ca.Issue(t, "allow.example.com")
	f.m.Route("tls", "edge-allow", "allow.example.com", "", "edge-allow", testbed.Edge(crt, key), testbed.Insecure("Allow"))
	crt, key = f.ca.Issue(t, "redirect.example.com")
	f.m.Route("tls", "edge-redirect", "redirect.example.com", "", "edge-redirect", testbed.Edge(crt, key), testbed.Insecure("Redirect"))
	f.m.Route("tls", "edge-default", "nocert.example.com", "", "edge-default", testbed.Edge(nil, nil))

	// Passthrough: the backend holds the Route host's certificate.
	passCrt, passKey := f.ca.Issue(t, "pass.example.com")
	pass := testkit.StartTLSBackend(t, "127.0.0.6", "pass", passCrt, passKey)
	f.m.Service("tls", "pass", pass)
	f.m.Route("tls", "pass", "pass.example.com", "", "pass", testbed.Passthrough())

	// Reencrypt: a backend with a certificate for its service name from the service CA, one whose
	// certificate names another service, one whose certificate comes from a CA the Route does not trust.
	reCrt, reKey := serviceCA.Issue(t, "re.tls.svc")
	re := testkit.StartTLSBackend(t, "127.0.0.7", "re", reCrt, reKey)
	wrongCrt, wrongKey := serviceCA.Issue(t, "someone-else.tls.svc")
	reWrongName := testkit.StartTLSBackend(t, "127.0.0.8", "re-wrong-name", wrongCrt, wrongKey)
	strangerCrt, strangerKey := strangerCA.Issue(t, "re-stranger.tls.svc")
	reStranger := testkit.StartTLSBackend(t, "127.0.0.9", "re-stranger", strangerCrt, strangerKey)
	f.m.Service("tls", "re", re).Service("tls", "re-wrong-name", reWrongName).Service("tls", "re-stranger", reStranger)
	for _, name := range []string{"re", "re-wrong-name", "re-stranger"} {
		crt, key := f.ca.Issue(t, name+".example.com")
		f.m.Route("tls", name, name+".example.com", "", name, testbed.Reencrypt(crt, key, serviceCA.PEM()))
	}
	r := f.start(t)
	c := r.Client

	t.Run("edge", func(t *testing.T) {
		for _, tc := range []struct{ host, backend string }{
			{"edge.example.com", "edge-none"},
			{"allow.example.com", "edge-allow"},
			{"redirect.example.com", "edge-redirect"},
		} {
			resp := expect(t, c, "https://"+tc.host+"/secure/x", want{200, tc.backend, "/secure/x"})
			checkLeaf(t, resp, tc.host)
			if resp != nil && forwardedProto(resp) != "https" {
				t.Errorf("https://%s: backend received X-Forwarded-Proto %q, want https", tc.host, forwardedProto(resp))
			}
		}
		// Uppercase SNI and Host still select the Route and its certificate.
		resp := expect(t, c, "https://EDGE.Example.com/u", want{200, "edge-none", "/u"})
		checkLeaf(t, resp, "edge.example.com")
	})
	t.Run("edge default certificate", func(t *testing.T) {
		// The Route has no certificate of its own: the default one is served (a client that verifies
		// the host name would refuse it, so look without verifying).
		unverified := testkit.NewClient(t, r.Options.HTTPPort, r.Options.HTTPSPort, nil)
		resp := expect(t, unverified, "https://nocert.example.com/d", want{200, "edge-default", "/d"})
		checkLeaf(t, resp, defaultCertName)
	})
	t.Run("edge insecure None", func(t *testing.T) {
		expect(t, c, "http://edge.example.com/plain", want{503, "", ""})
	})
	t.Run("edge insecure Allow", func(t *testing.T) {
		resp := expect(t, c, "http://allow.example.com/plain", want{200, "edge-allow", "/plain"})
		if resp != nil && forwardedProto(resp) != "http" {
			t.Errorf("backend received X-Forwarded-Proto %q over plain http, want http", forwardedProto(resp))
		}
	})
	t.Run("edge insecure Redirect", func(t *testing.T) {
		before := edge["edge-redirect"].Requests()
		for _, path := range []string{"/", "/a/b", "/a/b?q=1"} {
			resp := expect(t, c, "http://redirect.example.com"+path, want{http.StatusFound, "", ""})
			if resp == nil {
				continue
			}
			if loc, wantLoc := resp.Header.Get("Location"), "https://redirect.example.com"+path; loc != wantLoc {
				t.Errorf("GET http://redirect.example.com%s: Location %q, want %q", path, loc, wantLoc)
			}
		}
		if n := edge["edge-redirect"].Requests() - before; n != 0 {
			t.Errorf("edge-redirect backend answered %d plain-http requests, want none (redirected)", n)
		}
	})

	t.Run("passthrough", func(t *testing.T) {
		resp := expect(t, c, "https://pass.example.com/p", want{200, "pass", "/p"})
		if resp == nil {
			return
		}
		// The backend's own certificate arrives (HAProxy never terminates), with the SNI the client sent.
		if leaf := resp.Leaf(); leaf == nil || !bytes.Equal(leaf.Raw, pemDER(t, passCrt)) {
			t.Errorf("passthrough: the certificate received is not the backend's own (got %v)", leaf)
		}
		if sni := resp.Header.Get(testkit.HeaderSNI); sni != "pass.example.com" {
			t.Errorf("passthrough: backend saw SNI %q, want pass.example.com", sni)
		}
		if p := forwardedProto(resp); p != "" {
			t.Errorf("passthrough: backend received X-Forwarded-Proto %q; HAProxy must not touch the stream", p)
		}
		expect(t, c, "http://pass.example.com/p", want{503, "", ""})
	})

	t.Run("reencrypt", func(t *testing.T) {
		resp := expect(t, c, "https://re.example.com/r", want{200, "re", "/r"})
		checkLeaf(t, resp, "re.example.com")
		if resp != nil {
			// As OpenShift: HAProxy sends no SNI to the backend.
			if sni := resp.Header.Get(testkit.HeaderSNI); sni != "" {
				t.Errorf("reencrypt: backend saw SNI %q, want none", sni)
			}
			if p := forwardedProto(resp); p != "https" {
				t.Errorf("reencrypt: backend received X-Forwarded-Proto %q, want https", p)
			}
		}
		// The Route's own destination CA verifies the chain alone, as in OpenShift: a certificate for
		// another name passes, one from an untrusted CA does not (the name check comes with the
		// router's default destination CA: runtime/haproxy TestDestinationCAChecksTheNameOnlyByDefault).
		expect(t, c, "https://re-wrong-name.example.com/r", want{200, "re-wrong-name", "/r"})
		expect(t, c, "https://re-stranger.example.com/r", want{503, "", ""})
		if n := reStranger.Requests(); n != 0 {
			t.Errorf("the backend with an untrusted certificate answered %d requests", n)
		}
	})
}

// checkLeaf checks that the server certificate names host and was issued by the fixture's CA.
func checkLeaf(t *testing.T, resp *testkit.Response, host string) {
	t.Helper()
	if resp == nil {
		return
	}
	leaf := resp.Leaf()
	if leaf == nil {
		t.Errorf("no server certificate received (want one for %s)", host)
		return
	}
	if !slices.Equal(leaf.DNSNames, []string{host}) || leaf.Issuer.CommonName != routerCAName {
		t.Errorf("server certificate for %v issued by %q, want one for [%s] by %q", leaf.DNSNames, leaf.Issuer.CommonName, host, routerCAName)
	}
}

// pemDER returns the DER bytes of the first PEM block.
func pemDER(t *testing.T, data []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM block")
	}
	return b.Bytes
}
