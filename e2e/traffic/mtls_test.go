package traffic

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

// mtlsClient is one client of the mutual TLS tests: a certificate (nil: none) and its subject.
type mtlsClient struct {
	name    string
	subject []string // RDNs as "TYPE=value", in certificate order
	cert    *tls.Certificate
	certPEM []byte
	issuer  string // the issuer DN as OpenSSL prints it
}

// rdnOIDs are the attribute types the tests' subjects use.
func rdnOIDs() map[string]asn1.ObjectIdentifier {
	return map[string]asn1.ObjectIdentifier{
		"CN": {2, 5, 4, 3}, "C": {2, 5, 4, 6}, "ST": {2, 5, 4, 8}, "O": {2, 5, 4, 10}, "OU": {2, 5, 4, 11},
	}
}

// rdnSequence builds a subject from "TYPE=value" RDNs, in order.
func rdnSequence(t *testing.T, rdns []string) pkix.RDNSequence {
	t.Helper()
	var seq pkix.RDNSequence
	for _, r := range rdns {
		typ, v, ok := strings.Cut(r, "=")
		oid, known := rdnOIDs()[typ]
		if !ok || !known {
			t.Fatalf("subject RDN %q: want TYPE=value with a TYPE of %v", r, rdnOIDs())
		}
		seq = append(seq, pkix.RelativeDistinguishedNameSET{{Type: oid, Value: v}})
	}
	return seq
}

// opensslDN is a subject as HAProxy's ssl_c_s_dn prints it: "/TYPE=value" per RDN, in order.
func opensslDN(rdns []string) string { return "/" + strings.Join(rdns, "/") }

// newMTLSClient issues a client certificate for subject from ca.
func newMTLSClient(t *testing.T, name string, ca *testkit.CA, caRDNs []string, subject ...string) mtlsClient {
	t.Helper()
	crt, key := ca.IssueClient(t, rdnSequence(t, subject))
	kp := testkit.KeyPair(t, crt, key)
	return mtlsClient{name: name, subject: subject, cert: &kp, certPEM: crt, issuer: opensslDN(caRDNs)}
}

// tlsConfig is the client's TLS configuration for SNI serverName (it always sends its certificate,
// whatever CAs HAProxy names: Go would otherwise send none for a stranger's certificate).
func (c mtlsClient) tlsConfig(serverName string, roots *x509.CertPool) *tls.Config {
	cfg := &tls.Config{ServerName: serverName, RootCAs: roots, InsecureSkipVerify: serverName == "", NextProtos: []string{"http/1.1"}}
	if c.cert != nil {
		cert := c.cert
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return cfg
}

// mtlsOutcome is what a client gets under one policy.
type mtlsOutcome struct {
	status int    // 200 (the backend), 403 (the subject filter); 0: refused
	alert  string // with status 0: the TLS alert the client receives, as Go prints it
	// alert12 is the alert that ends a TLS 1.2 handshake, when it differs from alert.
	alert12 string
}

func (o mtlsOutcome) String() string {
	if o.status == 0 {
		return "refused: " + o.alert
	}
	return fmt.Sprint(o.status)
}

// mtlsPolicy is one mutual TLS configuration: the variables, as the ingress operator sets them.
type mtlsPolicy struct {
	name string
	env  map[string]string
}

// TestMutualTLS serves one edge Route under ROUTER_MUTUAL_TLS_AUTH required (with the operator's
// subject filter), optional (without, as the operator renders clientTLS Optional), optional with the
// filter, and none; the client CA is a test CA, with a CRL of its own that revokes one client.
// Every client sends `X-SSL-Client-CN: spoofed` (and other X-SSL* headers): the backend must
// never see them.
func TestMutualTLS(t *testing.T) {
	b := buildOf(t)
	filter := operatorEnv(t, "client-tls")["ROUTER_MUTUAL_TLS_AUTH_FILTER"]
	if filter == "" {
		t.Fatal("the operator's client-tls variant has no ROUTER_MUTUAL_TLS_AUTH_FILTER")
	}
	required := operatorEnv(t, "client-tls")["ROUTER_MUTUAL_TLS_AUTH"]
	optional := operatorEnv(t, "client-tls-optional")["ROUTER_MUTUAL_TLS_AUTH"]
	if required != "required" || optional != "optional" {
		t.Fatalf("operator variants: ROUTER_MUTUAL_TLS_AUTH %q and %q, want required and optional", required, optional)
	}

	caRDNs := []string{"O=haroute testbed", "CN=client CA"} // testkit.NewCA's subject, as OpenSSL prints it
	clientCA := testkit.NewCA(t, "client CA")
	strangerCA := testkit.NewCA(t, "stranger CA")
	alice := newMTLSClient(t, "alice (matches the filter's 2nd pattern)", clientCA, caRDNs, "CN=alice.apps.example.com", "O=Example Inc", "C=US")
	security := newMTLSClient(t, "security (matches the filter's 1st pattern)", clientCA, caRDNs, "CN=example.com", "ST=NC", "C=US", "O=Security", "OU=OpenShift")
	bob := newMTLSClient(t, "bob (valid, outside the filter)", clientCA, caRDNs, "CN=bob.example.org", "O=Example Inc", "C=US")
	revoked := newMTLSClient(t, "revoked (in the CRL)", clientCA, caRDNs, "CN=revoked.apps.example.com", "O=Example Inc", "C=US")
	stranger := newMTLSClient(t, "stranger (unknown CA)", strangerCA, []string{"O=haroute testbed", "CN=stranger CA"}, "CN=stranger.apps.example.com", "O=Example Inc", "C=US")
	nobody := mtlsClient{name: "no certificate"}
	crl := clientCA.RevocationList(t, 1, revoked.certPEM)

	ok, forbidden := mtlsOutcome{status: 200}, mtlsOutcome{status: 403}
	refusedRevoked := mtlsOutcome{alert: "remote error: tls: revoked certificate"}
	refusedUnknownCA := mtlsOutcome{alert: "remote error: tls: unknown certificate authority"}
	// TLS 1.3 has an alert for a missing certificate; in TLS 1.2 OpenSSL sends handshake_failure.
	refusedNoCert := mtlsOutcome{alert: "remote error: tls: certificate required", alert12: "remote error: tls: handshake failure"}
	policies := []struct {
		policy mtlsPolicy
		want   map[string]mtlsOutcome // by client name
	}{
		{mtlsPolicy{"required, filter", map[string]string{"ROUTER_MUTUAL_TLS_AUTH": required, "ROUTER_MUTUAL_TLS_AUTH_FILTER": filter}},
			map[string]mtlsOutcome{alice.name: ok, security.name: ok, bob.name: forbidden, revoked.name: refusedRevoked, stranger.name: refusedUnknownCA, nobody.name: refusedNoCert}},
		{mtlsPolicy{"optional", map[string]string{"ROUTER_MUTUAL_TLS_AUTH": optional}},
			map[string]mtlsOutcome{alice.name: ok, security.name: ok, bob.name: ok, revoked.name: refusedRevoked, stranger.name: refusedUnknownCA, nobody.name: ok}},
		// The filter denies every request whose certificate's subject does not match, and a request
		// without a certificate has no subject: optional with a filter serves nobody without one.
		{mtlsPolicy{"optional, filter", map[string]string{"ROUTER_MUTUAL_TLS_AUTH": optional, "ROUTER_MUTUAL_TLS_AUTH_FILTER": filter}},
			map[string]mtlsOutcome{alice.name: ok, security.name: ok, bob.name: forbidden, revoked.name: refusedRevoked, stranger.name: refusedUnknownCA, nobody.name: forbidden}},
		{mtlsPolicy{"none", map[string]string{}},
			map[string]mtlsOutcome{alice.name: ok, security.name: ok, bob.name: ok, revoked.name: ok, stranger.name: ok, nobody.name: ok}},
	}
	clients := []mtlsClient{alice, security, bob, revoked, stranger, nobody}

	var table strings.Builder
	fmt.Fprintf(&table, "mutual TLS on %s, ROUTER_MUTUAL_TLS_AUTH_FILTER=%s:\n  %-44s", b, filter, "client")
	for _, p := range policies {
		fmt.Fprintf(&table, " %-50s", p.policy.name)
	}
	table.WriteString("\n")
	got := map[string]map[string]string{}
	for _, p := range policies {
		t.Run(p.policy.name, func(t *testing.T) {
			got[p.policy.name] = runMutualTLS(t, p.policy, clientCA, crl, clients, p.want)
		})
	}
	for _, c := range clients {
		fmt.Fprintf(&table, "  %-44s", c.name)
		for _, p := range policies {
			fmt.Fprintf(&table, " %-50s", got[p.policy.name][c.name])
		}
		table.WriteString("\n")
	}
	t.Log(table.String())
}

// spoofedHeaders are X-SSL* headers a client sends to pose as a certificate holder.
func spoofedHeaders() http.Header {
	return http.Header{
		"X-Ssl-Client-Cn":     {"spoofed"},
		"X-Ssl-Client-Dn":     {"/CN=spoofed"},
		"X-Ssl-Client-Verify": {"0"},
		"X-Ssl":               {"spoofed"},
	}
}

// runMutualTLS starts HAProxy under one policy and checks every client, through fe_sni (SNI) and
// fe_no_sni (no SNI), returning the outcomes by client name.
func runMutualTLS(t *testing.T, p mtlsPolicy, clientCA *testkit.CA, crl []byte, clients []mtlsClient, want map[string]mtlsOutcome) map[string]string {
	opts := envOptions(t, p.env)
	var listener model.ListenerFiles
	if opts.ClientTLS.Verify != "" {
		listener = model.ListenerFiles{ClientCA: string(clientCA.PEM()), ClientCRL: string(crl)}
	}
	f := newFixture(t)
	f.m.ServiceAt("mtls", "app", startEchoBackend(t, "127.0.0.2", "app", nil))
	crt, key := f.ca.Issue(t, "app.example.com")
	f.m.Route("mtls", "app", "app.example.com", "", "app", testbed.Edge(crt, key))
	r := f.startWith(t, opts, listener, f.ca.IssueBundle(t, defaultCertName))
	if opts.ClientTLS.Verify != "" {
		checkMTLSRendered(t, r, opts.ClientTLS.Verify)
	}

	out := map[string]string{}
	for _, c := range clients {
		w, ok := want[c.name]
		if !ok {
			t.Fatalf("no expected outcome for %s", c.name)
		}
		for _, sni := range []string{"app.example.com", ""} {
			via := "SNI"
			if sni == "" {
				via = "no SNI"
			}
			o := mtlsOutcome{alert12: w.alert12}
			var res *echoResult
			if w.status == 0 {
				o.alert = refusal(r.Options.HTTPSPort, c.tlsConfig(sni, f.ca.Pool()))
			} else {
				var err error
				res, err = getOver(r.Options.HTTPSPort, c.tlsConfig(sni, f.ca.Pool()), "app.example.com", "/mtls", spoofedHeaders())
				if err != nil {
					o.alert = alertOf(err)
				} else {
					o.status = res.Status
				}
			}
			if via == "SNI" {
				out[c.name] = o.String()
			}
			if o != w {
				t.Errorf("%s via %s: %v, want %v", c.name, via, o, w)
				continue
			}
			if w.status == 0 {
				// A request sent at once gets no answer either (whatever error the race of the alert
				// with the request's reset makes of it: see refusal).
				if res, err := getOver(r.Options.HTTPSPort, c.tlsConfig(sni, f.ca.Pool()), "app.example.com", "/mtls", nil); err == nil {
					t.Errorf("%s via %s: a request was answered %d (%q), want the connection refused", c.name, via, res.Status, res.Body)
				}
				// A refusal of TLS 1.3 arrives after the client's handshake; in TLS 1.2 it ends it.
				cfg := c.tlsConfig(sni, f.ca.Pool())
				cfg.MaxVersion = tls.VersionTLS12
				want12 := w.alert
				if w.alert12 != "" {
					want12 = w.alert12
				}
				if _, err := handshake(r.Options.HTTPSPort, cfg); err == nil || alertOf(err) != want12 {
					t.Errorf("%s via %s, TLS 1.2: handshake error %v, want %q", c.name, via, err, want12)
				}
				continue
			}
			switch {
			case w.status == 200:
				checkSSLHeaders(t, c.name+" via "+via, opts.ClientTLS.Verify, c, res)
			case res.Reply != nil:
				t.Errorf("%s via %s: %d came from the backend, want HAProxy's denial", c.name, via, res.Status)
			}
		}
	}
	return out
}

// refusal handshakes with cfg and reads, sending nothing, and returns the alert that ended the
// connection ("" when nothing did within tlsTimeout). A TLS 1.3 client finishes its handshake before
// the server has checked its certificate, so the refusal arrives on the first read; writing a
// request first would race with it (HAProxy closing on an unread request resets the connection, and
// the client then sees EOF instead of the alert).
func refusal(port int, cfg *tls.Config) string {
	ctx, cancel := context.WithTimeout(context.Background(), tlsTimeout)
	defer cancel()
	conn, err := dialTLS(ctx, port, cfg)
	if err != nil {
		return alertOf(err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(tlsTimeout)); err != nil {
		return err.Error()
	}
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return ""
		}
		return alertOf(err)
	}
	return ""
}

// alertOf returns the "remote error: tls: ..." part of a client error, or the whole error.
func alertOf(err error) string {
	s := err.Error()
	if i := strings.Index(s, "remote error: tls: "); i >= 0 {
		return s[i:]
	}
	return s
}

// checkMTLSRendered checks the TLS binds of fe_sni and fe_no_sni ask for client certificates and
// check the CRL.
func checkMTLSRendered(t *testing.T, r *testbed.StaticHAProxy, verify string) {
	t.Helper()
	cfg := string(r.File(layout.Config))
	want := "verify " + verify + " ca-file "
	if n := strings.Count(cfg, want); n == 0 || !strings.Contains(cfg, "crl-file ") {
		t.Errorf("haproxy.cfg: %d binds with %q, and crl-file %v; want the TLS binds to verify with the CRL", n, want, strings.Contains(cfg, "crl-file "))
	}
	for _, f := range []string{layout.ClientCA, layout.ClientCRL} {
		if len(r.File(f)) == 0 {
			t.Errorf("%s was not rendered", f)
		}
	}
}

// checkSSLHeaders checks the X-SSL* headers the backend received from HAProxy for client c: none
// of the client's spoofed values, and with mutual TLS the values of c's certificate.
func checkSSLHeaders(t *testing.T, what, verify string, c mtlsClient, res *echoResult) {
	t.Helper()
	if res.Reply == nil {
		t.Errorf("%s: no answer from the backend (body %q)", what, res.Body)
		return
	}
	h := res.Reply.Header
	for name, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, "spoofed") {
				t.Errorf("%s: the backend received the client's %s: %q", what, name, v)
			}
		}
	}
	got := map[string][]string{}
	for _, name := range model.ClientSSLHeaders() {
		if vs := h.Values(name); vs != nil {
			got[name] = vs
		}
	}
	want := wantSSLHeaders(t, verify, c)
	for _, name := range model.ClientSSLHeaders() {
		if !slices.Equal(got[name], want[name]) {
			t.Errorf("%s: backend received %s %q, want %q", what, name, got[name], want[name])
		}
	}
}

// wantSSLHeaders returns the X-SSL* headers HAProxy sends the backend for client c: none without
// mutual TLS; with it, the certificate's values, strings double-quoted (%{+Q}), hex in upper case.
func wantSSLHeaders(t *testing.T, verify string, c mtlsClient) map[string][]string {
	t.Helper()
	if verify == "" {
		return map[string][]string{}
	}
	q := func(s string) []string { return []string{s} }
	if c.cert == nil {
		return map[string][]string{
			"X-SSL": {"1"}, "X-SSL-Client-Verify": {"0"},
			"X-SSL-Client-Serial": q(""), "X-SSL-Client-Version": q(""), "X-SSL-Client-SHA1": q(""),
			"X-SSL-Client-DN": q(""), "X-SSL-Client-CN": q(""), "X-SSL-Issuer": q(""),
			"X-SSL-Client-NotBefore": q(""), "X-SSL-Client-NotAfter": q(""), "X-SSL-Client-DER": q(""),
		}
	}
	blk, _ := pem.Decode(c.certPEM)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	sum := sha1.Sum(cert.Raw)
	cn, _ := strings.CutPrefix(c.subject[0], "CN=")
	const asn1Time = "060102150405Z"
	return map[string][]string{
		"X-SSL":                  {"1"},
		"X-SSL-Client-Verify":    {"0"},
		"X-SSL-Client-Serial":    q(strings.ToUpper(hex.EncodeToString(cert.SerialNumber.Bytes()))),
		"X-SSL-Client-Version":   q("3"),
		"X-SSL-Client-SHA1":      q(strings.ToUpper(hex.EncodeToString(sum[:]))),
		"X-SSL-Client-DN":        q(opensslDN(c.subject)),
		"X-SSL-Client-CN":        q(cn),
		"X-SSL-Issuer":           q(c.issuer),
		"X-SSL-Client-NotBefore": q(cert.NotBefore.UTC().Format(asn1Time)),
		"X-SSL-Client-NotAfter":  q(cert.NotAfter.UTC().Format(asn1Time)),
		"X-SSL-Client-DER":       q(base64.StdEncoding.EncodeToString(cert.Raw)),
	}
}
