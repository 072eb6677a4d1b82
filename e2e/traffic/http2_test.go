package traffic

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
)

// alpnCase is one way a client reaches an edge or reencrypt Route.
type alpnCase struct {
	name       string
	serverName string // SNI; "" sends none (connect by address: fe_no_sni)
	host       string // Host header
	backend    string
	leaf       string // a DNS name of the certificate that must be served
	ownCert    bool   // the Route has a certificate no other Route serves: h2 is offered with HTTP/2 on
}

// TestHTTP2ALPN checks which connections HAProxy offers HTTP/2 (ALPN h2), with ROUTER_DISABLE_HTTP2
// false and true, for a client that offers "h2" and "http/1.1":
//
//	(a) a Route with a certificate of its own: h2 with HTTP/2 enabled;
//	(b) an edge Route without a certificate (the default certificate),
//	(c) two Routes that serve one certificate (same certificate and key on two hosts),
//	(d) a client that sends no SNI (fe_no_sni, the default certificate): no ALPN at all.
//
// "No ALPN" means the server selects no protocol and the client speaks HTTP/1.1: HAProxy 2.6's
// binds advertise nothing without an "alpn" keyword, and from 2.8 on (which would advertise h2 and
// http/1.1 on a bare "ssl" bind) the binds carry "no-alpn"; only the crt-list lines of (a) carry
// [alpn h2,http/1.1]. So the negotiated protocol is "" rather than "http/1.1" on every version.
//
// A reencrypt Route to a backend that speaks h2 (Go's TLS server offers h2 and http/1.1) reaches
// it in HTTP/2 with HTTP/2 enabled (servers get "alpn h2,http/1.1") and in HTTP/1.1 without.
func TestHTTP2ALPN(t *testing.T) {
	b := buildOf(t)
	var table strings.Builder
	fmt.Fprintf(&table, "ALPN selected for a client offering h2,http/1.1 on %s:\n", b)
	fmt.Fprintf(&table, "  %-44s %-22s %-22s\n", "case", "ROUTER_DISABLE_HTTP2=false", "ROUTER_DISABLE_HTTP2=true")
	results := map[string]map[bool]string{}
	var order []string
	for _, disabled := range []bool{false, true} {
		t.Run(fmt.Sprintf("ROUTER_DISABLE_HTTP2=%v", disabled), func(t *testing.T) {
			for name, got := range runHTTP2ALPN(t, disabled) {
				if results[name] == nil {
					results[name] = map[bool]string{}
					order = append(order, name)
				}
				results[name][disabled] = got
			}
		})
	}
	slices.Sort(order)
	for _, name := range order {
		fmt.Fprintf(&table, "  %-44s %-26s %-26s\n", name, results[name][false], results[name][true])
	}
	t.Log(table.String())
}

// runHTTP2ALPN starts HAProxy with ROUTER_DISABLE_HTTP2=disabled and checks every case, returning
// what each one negotiated (front: ALPN and the HTTP version of the answer; reencrypt: the HTTP
// version the backend received).
func runHTTP2ALPN(t *testing.T, disabled bool) map[string]string {
	opts := envOptions(t, map[string]string{"ROUTER_DISABLE_HTTP2": strconv.FormatBool(disabled)})
	if opts.HTTP.DisableHTTP2 != disabled {
		t.Fatalf("ROUTER_DISABLE_HTTP2=%v parsed as DisableHTTP2=%v", disabled, opts.HTTP.DisableHTTP2)
	}
	f := newFixture(t)
	serviceCA := testkit.NewCA(t, "service CA")
	for i, name := range []string{"own", "nocert", "shared-a", "shared-b"} {
		f.m.ServiceAt("h2", name, startEchoBackend(t, fmt.Sprintf("127.0.0.%d", 2+i), name, nil))
	}
	reCrt, reKey := serviceCA.Issue(t, "re.h2.svc")
	reKP := testkit.KeyPair(t, reCrt, reKey)
	f.m.ServiceAt("h2", "re", startEchoBackend(t, "127.0.0.6", "re", &reKP))

	crt, key := f.ca.Issue(t, "own.example.com")
	f.m.Route("h2", "own", "own.example.com", "", "own", testbed.Edge(crt, key))
	f.m.Route("h2", "nocert", "nocert.example.com", "", "nocert", testbed.Edge(nil, nil))
	shCrt, shKey := f.ca.Issue(t, "shared-a.example.com", "shared-b.example.com")
	f.m.Route("h2", "shared-a", "shared-a.example.com", "", "shared-a", testbed.Edge(shCrt, shKey))
	f.m.Route("h2", "shared-b", "shared-b.example.com", "", "shared-b", testbed.Edge(shCrt, shKey))
	crt, key = f.ca.Issue(t, "re.example.com")
	f.m.Route("h2", "re", "re.example.com", "", "re", testbed.Reencrypt(crt, key, serviceCA.PEM()))
	r := f.startWith(t, opts, model.ListenerFiles{}, f.ca.IssueBundle(t, defaultCertName))

	out := map[string]string{}
	for _, c := range []alpnCase{
		{"(a) Route with its own certificate", "own.example.com", "own.example.com", "own", "own.example.com", true},
		{"(b) edge Route, default certificate", "nocert.example.com", "nocert.example.com", "nocert", defaultCertName, false},
		{"(c) shared certificate, first Route", "shared-a.example.com", "shared-a.example.com", "shared-a", "shared-a.example.com", false},
		{"(c) shared certificate, second Route", "shared-b.example.com", "shared-b.example.com", "shared-b", "shared-b.example.com", false},
		{"(d) no SNI (default certificate)", "", "own.example.com", "own", defaultCertName, false},
		{"reencrypt Route (front)", "re.example.com", "re.example.com", "re", "re.example.com", true},
	} {
		wantALPN := ""
		if c.ownCert && !disabled {
			wantALPN = "h2"
		}
		cfg := &tls.Config{ServerName: c.serverName, InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}
		res, err := getOver(r.Options.HTTPSPort, cfg, c.host, "/alpn", nil)
		if err != nil {
			t.Errorf("%s: GET https://%s/alpn: %v", c.name, c.host, err)
			continue
		}
		got := res.TLS.NegotiatedProtocol
		out[c.name] = fmt.Sprintf("%q (HTTP/%d)", got, res.ProtoMajor)
		if got != wantALPN {
			t.Errorf("%s: ALPN selected %q, want %q", c.name, got, wantALPN)
		}
		if leaf := res.TLS.PeerCertificates[0]; !slices.Contains(leaf.DNSNames, c.leaf) {
			t.Errorf("%s: served the certificate of %v, want the one of %s", c.name, leaf.DNSNames, c.leaf)
		}
		wantMajor := 1
		if wantALPN == "h2" {
			wantMajor = 2
		}
		if res.ProtoMajor != wantMajor {
			t.Errorf("%s: answered in HTTP/%d, want HTTP/%d", c.name, res.ProtoMajor, wantMajor)
		}
		if res.Status != 200 || res.Reply == nil || res.Reply.Backend != c.backend {
			t.Errorf("%s: got %d %q, want 200 from backend %s", c.name, res.Status, res.Body, c.backend)
			continue
		}
		// The forwarded headers tell the backend the client spoke h2 (and say nothing otherwise).
		if fv := res.Reply.Header.Get("X-Forwarded-Proto-Version"); fv != wantALPN {
			t.Errorf("%s: backend received X-Forwarded-Proto-Version %q, want %q", c.name, fv, wantALPN)
		}
		if c.backend == "re" {
			want := 2
			if disabled {
				want = 1
			}
			out["reencrypt Route (HAProxy to backend)"] = fmt.Sprintf("HTTP/%d", res.Reply.ProtoMajor)
			if res.Reply.ProtoMajor != want {
				t.Errorf("reencrypt: the h2-capable backend received HTTP/%d, want HTTP/%d", res.Reply.ProtoMajor, want)
			}
		}
	}
	return out
}
