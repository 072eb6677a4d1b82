//go:build e2e

package cluster

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// The checks of the operator-environment scenarios (operatorenv_test.go): each looks at one setting
// of the variant's environment where it shows, through the router's public ports, its stats port,
// HAProxy's runtime API or the Routes' status.

// runChecks runs every check that applies to the variant.
func (o *opRun) runChecks() {
	o.check("routes serve", o.checkRoutes)
	o.check("default certificate", o.checkDefaultCertificate)
	o.check("route status", o.checkStatus)
	o.check("stats over https", o.checkStats)
	o.checkGroups()
	o.checkTLS()
	o.checkHTTP2()
	o.checkForwarded()
	if o.sidecar {
		o.check("sidecar", func() error {
			if pid := o.r.ShowProc().Master.PID; o.r.HAProxy == nil || pid != o.r.HAProxy.PID {
				return fmt.Errorf("the master socket answers for PID %d, not the test's HAProxy", pid)
			}
			return nil
		})
	}
	if o.ep.proxySrc != "" {
		o.check("proxy protocol", o.checkProxyProtocol)
	}
	if o.env["ROUTER_MUTUAL_TLS_AUTH"] != "" {
		o.checkMutualTLS()
	}
	o.checkHeaderActions()
	if o.env["ROUTER_UNIQUE_ID_HEADER_NAME"] != "" {
		o.check("unique id", o.checkUniqueID)
	}
	if o.env["ROUTER_H1_CASE_ADJUST"] != "" {
		o.check("header case", o.checkHeaderCase)
	}
	o.checkErrorPages()
	if o.env["ROUTER_ENABLE_COMPRESSION"] == "true" {
		o.check("compression", o.checkCompression)
	}
	if o.syslog != nil {
		o.check("syslog", o.checkSyslog)
	}
	o.checkSharding()
	o.checkIPMode()
	o.check("tuning", o.checkTuning)
	if o.d.Variant == "default" {
		o.check("rotation without reload", o.checkRotation)
	}
}

// get sends one GET through the variant's endpoint.
func (o *opRun) get(u string, header http.Header, adjust func(*tls.Config)) (*opReply, error) {
	return o.ep.do(opRequest{url: u, header: header, tls: adjust})
}

// checkRoutes: every Route answers from its pod, over TLS to the pod for reencrypt, with its own
// certificate or the default one.
func (o *opRun) checkRoutes() error {
	for _, rt := range o.routes {
		if err := framework.Eventually(func() error {
			rep, err := o.get(rt.url(framework.EchoPath), nil, nil)
			if err != nil {
				return err
			}
			if rep.status != http.StatusOK || rep.backend() != rt.backend {
				return fmt.Errorf("answer %d from %q, want 200 from %s", rep.status, rep.backend(), rt.backend)
			}
			e, err := rep.echo()
			if err != nil {
				return err
			}
			if e.TLS != rt.backendTLS {
				return fmt.Errorf("the pod got a connection with TLS %v, want %v", e.TLS, rt.backendTLS)
			}
			if rt.https {
				return o.servedBy(rep, rt.ca, rt.host)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("Route %s (%s): %w", rt.name, rt.url("/"), err)
		}
	}
	rep, err := o.get("http://empty."+o.d.Variant+".e2e.test/", nil, nil)
	if err != nil {
		return err
	}
	if rep.status != http.StatusServiceUnavailable || rep.backend() != "" {
		return fmt.Errorf("Route empty (no endpoints): answer %d from %q, want HAProxy's 503", rep.status, rep.backend())
	}
	return nil
}

// servedBy checks that rep came with a certificate of ca for host, or the default certificate when
// ca is nil.
func (o *opRun) servedBy(rep *opReply, ca *testkit.CA, host string) error {
	leaf := rep.leaf()
	switch {
	case leaf == nil:
		return errors.New("no server certificate")
	case ca == nil && !leaf.Equal(o.defaultCert):
		return fmt.Errorf("served %q (serial %s), not the default certificate of the Secret mount", leaf.Subject, leaf.SerialNumber)
	case ca != nil:
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: host}); err != nil {
			return fmt.Errorf("served %q does not verify for %s against %s: %w", leaf.Subject, host, ca.Name, err)
		}
	}
	return nil
}

// checkDefaultCertificate: a name no Route has gets the default certificate of the Secret mount.
func (o *opRun) checkDefaultCertificate() error {
	rep, err := o.get("https://unknown."+o.d.Variant+".e2e.test/", nil, nil)
	if err != nil {
		return err
	}
	if rep.backend() != "" {
		return fmt.Errorf("an unknown host was answered by %s", rep.backend())
	}
	return o.servedBy(rep, nil, "")
}

// checkStatus: every Route has an Admitted entry under ROUTER_SERVICE_NAME with
// ROUTER_CANONICAL_HOSTNAME.
func (o *opRun) checkStatus() error {
	name, canonical := o.env["ROUTER_SERVICE_NAME"], o.env["ROUTER_CANONICAL_HOSTNAME"]
	for _, rt := range o.routes {
		if err := framework.Eventually(func() error {
			got, err := o.fx.c.Routes.RouteV1().Routes(o.ns).Get(context.Background(), rt.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var seen []string
			for _, in := range got.Status.Ingress {
				seen = append(seen, fmt.Sprintf("%s/%s", in.RouterName, in.RouterCanonicalHostname))
				if in.RouterName != name {
					continue
				}
				if in.RouterCanonicalHostname != canonical || in.Host != rt.host {
					return fmt.Errorf("entry of %s: canonical hostname %q, host %q; want %q, %q", name, in.RouterCanonicalHostname, in.Host, canonical, rt.host)
				}
				for _, c := range in.Conditions {
					if c.Type == routev1.RouteAdmitted && c.Status == corev1.ConditionTrue {
						return nil
					}
				}
				return fmt.Errorf("entry of %s not admitted: %+v", name, in.Conditions)
			}
			return fmt.Errorf("no status entry of router %q (entries: %v)", name, seen)
		}); err != nil {
			return fmt.Errorf("Route %s: %w", rt.name, err)
		}
	}
	return nil
}

// checkStats: the probes and /metrics over HTTPS on the stats port with the metrics certificate;
// /metrics takes the stats credentials of the mounted files, and nothing else without a token.
func (o *opRun) checkStats() error {
	sc := statsClient{port: o.r.StatsPort, serverName: o.metricsName, roots: o.fx.metricsCA.Pool()}
	for _, path := range []string{"/healthz", "/healthz/ready"} {
		code, body, leaf, err := sc.get(path, "", "")
		if err != nil {
			return fmt.Errorf("GET %s over https: %w", path, err)
		}
		if code != http.StatusOK {
			return fmt.Errorf("GET %s over https: %d %q", path, code, body)
		}
		if leaf == nil || !leaf.Equal(o.metricsCert) {
			return fmt.Errorf("GET %s: the stats port did not present the mounted metrics certificate", path)
		}
	}
	code, body, _, err := sc.get("/metrics", o.statsUser, o.statsPassword)
	if err != nil {
		return err
	}
	if code != http.StatusOK || !strings.Contains(body, "haroute_") {
		return fmt.Errorf("GET /metrics with the stats credentials: %d %.200q", code, body)
	}
	for _, bad := range [][2]string{{o.statsUser, "wrong"}, {"", ""}} {
		code, body, _, err := sc.get("/metrics", bad[0], bad[1])
		if err != nil {
			return err
		}
		if code != http.StatusUnauthorized {
			return fmt.Errorf("GET /metrics as %q/%q: %d %.200q, want 401", bad[0], bad[1], code, body)
		}
	}
	return nil
}

// checkRouterBinary returns the HAProxy binary haroute asks about key-exchange groups: the managed
// one, or the --check-binary a sidecar run is given; both are the matrix's ($HAROUTE_HAPROXY).
func (o *opRun) checkRouterBinary() string { return testkit.HAProxyBinary() }

// goGroups are the key-exchange groups a Go client can offer, by their OpenSSL names.
var goGroups = map[string]tls.CurveID{
	"X25519MLKEM768": tls.X25519MLKEM768, "X25519": tls.X25519,
	"secp256r1": tls.CurveP256, "secp384r1": tls.CurveP384, "secp521r1": tls.CurveP521,
}

// checkGroups: the groups of ROUTER_CURVES that the HAProxy binary does not know are left out with
// haroute's warning (and only those); then a client offering one group alone gets a handshake exactly
// for the groups kept (that the running HAProxy knows).
func (o *opRun) checkGroups() {
	curves := o.env["ROUTER_CURVES"]
	if curves == "" {
		return
	}
	check := o.checkRouterBinary()
	var dropped []string
	if check != "" {
		for _, g := range strings.Split(curves, ":") {
			if !o.fx.knowsGroup(o.t, check, g) {
				dropped = append(dropped, g)
			}
		}
	}
	o.check("groups", func() error {
		logs := o.r.Proc.Out.String()
		warned := strings.Contains(logs, opCurvesWarning)
		switch {
		case len(dropped) > 0 && !warned:
			return fmt.Errorf("%s does not know %v, and haroute logged no warning", check, dropped)
		case len(dropped) > 0 && !strings.Contains(logs, "dropped="+strings.Join(dropped, ":")):
			return fmt.Errorf("the warning does not name exactly the groups %v", dropped)
		case len(dropped) == 0 && warned:
			return fmt.Errorf("%s knows every group of %q, and haroute warned", check, curves)
		}
		if len(dropped) > 0 {
			o.t.Logf("haroute left out %v (unknown to %s), with its warning", dropped, check)
		}
		running := testkit.HAProxyBinary()
		host := "edge." + o.d.Variant + ".e2e.test"
		for name, id := range goGroups {
			want := slices.Contains(strings.Split(curves, ":"), name) && !slices.Contains(dropped, name) &&
				o.fx.knowsGroup(o.t, running, name)
			_, err := o.ep.handshake(host, func(c *tls.Config) { c.CurvePreferences = []tls.CurveID{id} })
			if (err == nil) != want {
				return fmt.Errorf("a client offering only %s: handshake error %v, want a handshake: %v", name, err, want)
			}
		}
		return nil
	})
}

// opSuites are TLS 1.2 suites for the Routes' ECDSA certificates, Go's ID by OpenSSL name.
var opSuites = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
}

// checkTLS: SSL_MIN_VERSION TLSv1.3 refuses TLS 1.2 and accepts 1.3; otherwise TLS 1.2 is accepted
// with exactly the suites of ROUTER_CIPHERS (a list of OpenSSL names).
func (o *opRun) checkTLS() {
	host := "edge." + o.d.Variant + ".e2e.test"
	tls12 := func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }
	if o.env["SSL_MIN_VERSION"] == "TLSv1.3" {
		o.check("tls 1.3 only", func() error {
			if st, err := o.ep.handshake(host, tls12); err == nil {
				return fmt.Errorf("a TLS 1.2 client got a handshake (version %#x)", st.Version)
			}
			st, err := o.ep.handshake(host, func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 })
			if err != nil {
				return fmt.Errorf("a TLS 1.3 client: %w", err)
			}
			if st.Version != tls.VersionTLS13 {
				return fmt.Errorf("negotiated %#x", st.Version)
			}
			return nil
		})
		return
	}
	ciphers := o.env["ROUTER_CIPHERS"]
	if ciphers == "" {
		return
	}
	o.check("tls 1.2 suites", func() error {
		listed := strings.Split(ciphers, ":")
		for name, id := range opSuites {
			want := slices.Contains(listed, name)
			st, err := o.ep.handshake(host, func(c *tls.Config) {
				tls12(c)
				c.CipherSuites = []uint16{id}
			})
			if (err == nil) != want {
				return fmt.Errorf("TLS 1.2 with only %s: error %v, want a handshake: %v", name, err, want)
			}
			if err == nil && (st.Version != tls.VersionTLS12 || st.CipherSuite != id) {
				return fmt.Errorf("TLS 1.2 with only %s negotiated version %#x suite %#x", name, st.Version, st.CipherSuite)
			}
		}
		return nil
	})
}

// checkHTTP2: a client offering h2 gets it on a Route with its own certificate unless
// ROUTER_DISABLE_HTTP2 is true, and never on the default certificate.
func (o *opRun) checkHTTP2() {
	enabled := o.env["ROUTER_DISABLE_HTTP2"] != "true"
	name := "no h2"
	if enabled {
		name = "h2"
	}
	o.check(name, func() error {
		h2 := func(c *tls.Config) { c.NextProtos = []string{"h2", "http/1.1"} }
		for _, tc := range []struct {
			host string
			want bool
		}{
			{"edge." + o.d.Variant + ".e2e.test", enabled},
			{"edge-default." + o.d.Variant + ".e2e.test", false},
			{"unknown." + o.d.Variant + ".e2e.test", false},
		} {
			st, err := o.ep.handshake(tc.host, h2)
			if err != nil {
				return fmt.Errorf("%s: %w", tc.host, err)
			}
			if got := st.NegotiatedProtocol == "h2"; got != tc.want {
				return fmt.Errorf("%s: ALPN %q, want h2: %v", tc.host, st.NegotiatedProtocol, tc.want)
			}
		}
		return nil
	})
}

// checkForwarded: the X-Forwarded-For the pod gets, for a client that sent one, follows
// ROUTER_SET_FORWARDED_HEADERS; its client address is the PROXY header's when there is one.
func (o *opRun) checkForwarded() {
	policy := o.env["ROUTER_SET_FORWARDED_HEADERS"]
	if policy == "" {
		policy = "append"
	}
	const sent = "203.0.113.9"
	want := map[string]string{"append": sent + ", " + o.src, "replace": o.src, "if-none": sent, "never": sent}[policy]
	o.check("forwarded "+policy, func() error {
		rep, err := o.get("http://plain."+o.d.Variant+".e2e.test"+framework.EchoPath, http.Header{"X-Forwarded-For": {sent}}, nil)
		if err != nil {
			return err
		}
		e, err := rep.echo()
		if err != nil {
			return err
		}
		if got := strings.Join(e.Header.Values("X-Forwarded-For"), ", "); got != want {
			return fmt.Errorf("the pod got X-Forwarded-For %q, want %q", got, want)
		}
		return nil
	})
}

// checkProxyProtocol: a client that sends no PROXY header is not served.
func (o *opRun) checkProxyProtocol() error {
	for _, u := range []string{"http://plain." + o.d.Variant + ".e2e.test/", "https://edge." + o.d.Variant + ".e2e.test/"} {
		rep, err := o.ep.do(opRequest{url: u, noProxy: true})
		if err == nil && rep.status < 400 {
			return fmt.Errorf("%s without a PROXY header: answer %d from %q", u, rep.status, rep.backend())
		}
	}
	return nil
}

// checkMutualTLS: ROUTER_MUTUAL_TLS_AUTH required refuses a client without a certificate or with one
// of an unknown CA; optional serves a client without one. A certificate of the CA is served when its
// subject passes ROUTER_MUTUAL_TLS_AUTH_FILTER (403 otherwise), and the pod gets its subject in
// X-SSL-Client-DN.
func (o *opRun) checkMutualTLS() {
	mode, filter := o.env["ROUTER_MUTUAL_TLS_AUTH"], o.env["ROUTER_MUTUAL_TLS_AUTH_FILTER"]
	u := "https://edge." + o.d.Variant + ".e2e.test" + framework.EchoPath
	as := func(client string) func(*tls.Config) {
		return func(c *tls.Config) {
			cert := &tls.Certificate{}
			if client != "" {
				cert = o.fx.clients[client]
			}
			c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
	}
	served := func(client string) error {
		rep, err := o.get(u, nil, as(client))
		if err != nil {
			return fmt.Errorf("client %s: %w", client, err)
		}
		if rep.status != http.StatusOK {
			return fmt.Errorf("client %s: answer %d from %q, want 200", client, rep.status, rep.backend())
		}
		e, err := rep.echo()
		if err != nil {
			return err
		}
		want := "/" + strings.Join(opClientSubjects[client], "/")
		if got := e.Header.Get("X-SSL-Client-DN"); strings.Trim(got, `"`) != want {
			return fmt.Errorf("client %s: the pod got X-SSL-Client-DN %q, want %q", client, got, want)
		}
		return nil
	}
	switch mode {
	case "required":
		o.check("mutual tls required", func() error {
			for _, client := range []string{"", clientStranger} {
				if rep, err := o.get(u, nil, as(client)); err == nil {
					return fmt.Errorf("client %q was answered %d", client, rep.status)
				}
			}
			return served(clientFilterA)
		})
	case "optional":
		o.check("mutual tls optional", func() error {
			rep, err := o.get(u, nil, as(""))
			if err != nil || rep.status != http.StatusOK {
				return fmt.Errorf("a client without a certificate: %v %+v", err, rep)
			}
			return served(clientFilterA)
		})
	default:
		o.t.Errorf("ROUTER_MUTUAL_TLS_AUTH=%q: the scenarios know required and optional", mode)
		return
	}
	if filter == "" {
		return
	}
	o.check("subject filter", func() error {
		if err := served(clientFilterB); err != nil {
			return err
		}
		rep, err := o.get(u, nil, as(clientOutsider))
		if err != nil {
			return fmt.Errorf("client %s: %w", clientOutsider, err)
		}
		if rep.status != http.StatusForbidden {
			return fmt.Errorf("client %s (outside %s): answer %d from %q, want 403", clientOutsider, filter, rep.status, rep.backend())
		}
		return nil
	})
}

// headerAction is one entry of ROUTER_HTTP_REQUEST_HEADERS or ROUTER_HTTP_RESPONSE_HEADERS.
type headerAction struct{ name, value, action string }

// parseHeaderActions reads the operator's encoding: entries separated by commas, each
// name:value:Set or name:Delete with every part query-escaped.
func parseHeaderActions(v string) ([]headerAction, error) {
	var out []headerAction
	for _, entry := range strings.Split(v, ",") {
		parts := strings.Split(entry, ":")
		for i, p := range parts {
			u, err := url.QueryUnescape(p)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", entry, err)
			}
			parts[i] = u
		}
		switch {
		case len(parts) == 3 && parts[2] == "Set":
			out = append(out, headerAction{parts[0], parts[1], "Set"})
		case len(parts) == 2 && parts[1] == "Delete":
			out = append(out, headerAction{parts[0], "", "Delete"})
		default:
			return nil, fmt.Errorf("%q: want name:value:Set or name:Delete", entry)
		}
	}
	return out, nil
}

// expectedHeader is what a Set action's value gives: the value itself, or, for the two sample
// expressions the captures use, the header they read in lower case; ok is false for other dynamic
// values (then only the header's presence is checked).
func expectedHeader(value string, reqHost string, resHeaders map[string]string) (string, bool) {
	if value == "%[req.hdr(host),lower]" {
		return strings.ToLower(reqHost), true
	}
	if name, ok := strings.CutPrefix(value, "%[res.hdr("); ok {
		if name, ok := strings.CutSuffix(name, "),lower]"); ok {
			return strings.ToLower(resHeaders[name]), true
		}
	}
	if strings.Contains(value, "%[") || strings.Contains(value, "%{") {
		return "", false
	}
	return strings.ReplaceAll(value, "%%", "%"), true
}

// checkHeaderActions: the pod sees the request header actions, the client the response ones.
func (o *opRun) checkHeaderActions() {
	reqActs, err := parseHeaderActions(o.env["ROUTER_HTTP_REQUEST_HEADERS"])
	if o.env["ROUTER_HTTP_REQUEST_HEADERS"] == "" {
		reqActs, err = nil, nil
	}
	if err != nil {
		o.t.Errorf("ROUTER_HTTP_REQUEST_HEADERS: %v", err)
		return
	}
	resActs, err := parseHeaderActions(o.env["ROUTER_HTTP_RESPONSE_HEADERS"])
	if o.env["ROUTER_HTTP_RESPONSE_HEADERS"] == "" {
		resActs, err = nil, nil
	}
	if err != nil {
		o.t.Errorf("ROUTER_HTTP_RESPONSE_HEADERS: %v", err)
		return
	}
	if len(reqActs)+len(resActs) == 0 {
		return
	}
	// The pod sends every header a response action names or reads, in mixed case; the client sends
	// every header a request action names.
	resHeaders := map[string]string{}
	q := url.Values{}
	for _, a := range resActs {
		resHeaders[a.name] = "Pod-Value-Of-" + a.name
		if name, ok := strings.CutPrefix(a.value, "%[res.hdr("); ok {
			name, _, _ = strings.Cut(name, ")")
			resHeaders[name] = "MiXeD-" + name
		}
	}
	for k, v := range resHeaders {
		q.Add("set", k+":"+v)
	}
	reqHeader := http.Header{}
	for _, a := range reqActs {
		reqHeader.Set(a.name, "client-value")
	}
	type exchange struct {
		echo framework.Echo
		rep  *opReply
	}
	var got []exchange
	for _, scheme := range []string{"http", "https"} {
		host := "PLAIN." + o.d.Variant + ".E2E.test" // a Host in mixed case, for the lower-case actions
		if scheme == "https" {
			host = "edge." + o.d.Variant + ".e2e.test"
		}
		rep, err := o.get(scheme+"://"+host+framework.EchoPath+"?"+q.Encode(), reqHeader, nil)
		if err == nil && rep.status != http.StatusOK {
			err = fmt.Errorf("answer %d from %q", rep.status, rep.backend())
		}
		var e framework.Echo
		if err == nil {
			e, err = rep.echo()
		}
		if err != nil {
			o.t.Errorf("header actions over %s: %v", scheme, err)
			return
		}
		got = append(got, exchange{e, rep})
	}
	if len(reqActs) > 0 {
		o.check("request header actions", func() error {
			for _, x := range got {
				if err := checkActions(reqActs, x.echo.Header, x.echo.Host, resHeaders, "the pod"); err != nil {
					return fmt.Errorf("%s: %w", x.echo.Host, err)
				}
			}
			return nil
		})
	}
	if len(resActs) > 0 {
		o.check("response header actions", func() error {
			for _, x := range got {
				if err := checkActions(resActs, x.rep.header, x.echo.Host, resHeaders, "the client"); err != nil {
					return fmt.Errorf("%s: %w", x.echo.Host, err)
				}
			}
			return nil
		})
	}
}

// checkActions checks that got (the headers who received) shows every action.
func checkActions(acts []headerAction, got http.Header, reqHost string, resHeaders map[string]string, who string) error {
	for _, a := range acts {
		vals := got.Values(a.name)
		if a.action == "Delete" {
			if len(vals) > 0 {
				return fmt.Errorf("%s got %s %q, which a Delete action removes", who, a.name, vals)
			}
			continue
		}
		want, exact := expectedHeader(a.value, reqHost, resHeaders)
		switch {
		case len(vals) != 1:
			return fmt.Errorf("%s got %s %q, want one value (Set %q)", who, a.name, vals, a.value)
		case exact && vals[0] != want:
			return fmt.Errorf("%s got %s %q, want %q (Set %q)", who, a.name, vals[0], want, a.value)
		}
	}
	return nil
}

// checkUniqueID: the pod gets the ROUTER_UNIQUE_ID_HEADER_NAME header, in ROUTER_UNIQUE_ID_FORMAT's
// shape (upper-case hexadecimal fields, as many as the format has after its %{+X}o), new for every
// request.
func (o *opRun) checkUniqueID() error {
	name, format := o.env["ROUTER_UNIQUE_ID_HEADER_NAME"], strings.Trim(o.env["ROUTER_UNIQUE_ID_FORMAT"], `"`)
	fields := strings.Count(format, "%") - strings.Count(format, "%{+X}o")
	seen := map[string]bool{}
	for range 2 {
		rep, err := o.get("http://plain."+o.d.Variant+".e2e.test"+framework.EchoPath, nil, nil)
		if err != nil {
			return err
		}
		e, err := rep.echo()
		if err != nil {
			return err
		}
		ids := e.Header.Values(name)
		if len(ids) != 1 {
			return fmt.Errorf("the pod got %s %q, want one value", name, ids)
		}
		parts := strings.FieldsFunc(ids[0], func(r rune) bool { return r == ':' || r == '_' })
		if len(parts) != fields {
			return fmt.Errorf("%s %q has %d fields, want %d (format %s)", name, ids[0], len(parts), fields, format)
		}
		for _, p := range parts {
			if strings.Trim(p, "0123456789ABCDEF") != "" {
				return fmt.Errorf("%s %q: field %q is not upper-case hexadecimal", name, ids[0], p)
			}
		}
		if seen[ids[0]] {
			return fmt.Errorf("two requests got the same %s %q", name, ids[0])
		}
		seen[ids[0]] = true
	}
	return nil
}

// checkHeaderCase: a response header ROUTER_H1_CASE_ADJUST names reaches an HTTP/1.1 client in that
// case on the wire, over HTTP and through edge termination; other names stay in lower case.
func (o *opRun) checkHeaderCase() error {
	q := url.Values{}
	var want []string
	for _, name := range strings.Split(o.env["ROUTER_H1_CASE_ADJUST"], ",") {
		if strings.EqualFold(name, "Host") { // a request header: the pod's side, which Go's server folds
			continue
		}
		q.Add("set", name+":adjusted")
		want = append(want, name)
	}
	if len(want) == 0 {
		return errors.New("ROUTER_H1_CASE_ADJUST names no response header to look for")
	}
	for _, u := range []string{"http://plain.", "https://edge."} {
		raw, err := o.ep.raw(u + o.d.Variant + ".e2e.test" + framework.EchoPath + "?" + q.Encode())
		if err != nil {
			return err
		}
		names := rawHeaderNames(raw)
		for _, w := range append(want, "x-backend") {
			if !slices.Contains(names, w) {
				return fmt.Errorf("%s: no header named exactly %q among %q", u, w, names)
			}
		}
	}
	return nil
}

// checkErrorPages: with ROUTER_ERRORFILE_404 a host no Route has gets its page (404), over HTTP and
// HTTPS; with ROUTER_ERRORFILE_503 a Route without endpoints gets its page; without them, haroute's
// own 503 page.
func (o *opRun) checkErrorPages() {
	page := func(u string, status int, text string) error {
		rep, err := o.get(u, nil, nil)
		if err != nil {
			return err
		}
		if rep.status != status || rep.backend() != "" || !strings.Contains(string(rep.body), text) {
			return fmt.Errorf("%s: %d from %q with %.200q, want %d with %q", u, rep.status, rep.backend(), rep.body, status, text)
		}
		return nil
	}
	unknown := "unknown." + o.d.Variant + ".e2e.test/"
	empty := "http://empty." + o.d.Variant + ".e2e.test/"
	if o.env["ROUTER_ERRORFILE_404"] != "" {
		o.check("error page 404", func() error {
			return errors.Join(page("http://"+unknown, http.StatusNotFound, "operator 404: no route"),
				page("https://"+unknown, http.StatusNotFound, "operator 404: no route"))
		})
	} else {
		o.check("no route: 503", func() error {
			return page("http://"+unknown, http.StatusServiceUnavailable, "Application is not available")
		})
	}
	if o.env["ROUTER_ERRORFILE_503"] != "" {
		o.check("error page 503", func() error { return page(empty, http.StatusServiceUnavailable, "operator 503: no pod") })
	}
}

// mimeTypes splits ROUTER_COMPRESSION_MIME: space-separated, a type with a space double-quoted.
func mimeTypes(v string) []string {
	var out []string
	for v = strings.TrimSpace(v); v != ""; v = strings.TrimSpace(v) {
		if rest, ok := strings.CutPrefix(v, `"`); ok {
			typ, after, _ := strings.Cut(rest, `"`)
			out, v = append(out, typ), after
			continue
		}
		typ, after, _ := strings.Cut(v, " ")
		out, v = append(out, typ), after
	}
	return out
}

// checkCompression: a response of a listed type is gzipped for a client that accepts gzip; one of
// another type is not.
func (o *opRun) checkCompression() error {
	types := mimeTypes(o.env["ROUTER_COMPRESSION_MIME"])
	if len(types) == 0 {
		return errors.New("ROUTER_COMPRESSION_MIME lists no type")
	}
	for _, typ := range append(types, "image/png") {
		listed := typ != "image/png"
		u := "http://plain." + o.d.Variant + ".e2e.test" + framework.EchoPath + "?pad=4096&set=" + url.QueryEscape("Content-Type:"+typ)
		rep, err := o.get(u, http.Header{"Accept-Encoding": {"gzip"}}, nil)
		if err != nil {
			return err
		}
		if got := rep.header.Get("Content-Encoding") == "gzip"; got != listed {
			return fmt.Errorf("Content-Type %q: Content-Encoding %q, want gzip: %v", typ, rep.header.Get("Content-Encoding"), listed)
		}
		if !listed {
			continue
		}
		zr, err := gzip.NewReader(strings.NewReader(string(rep.body)))
		if err != nil {
			return fmt.Errorf("Content-Type %q: %w", typ, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !strings.Contains(string(plain), `"backend":"web"`) {
			return fmt.Errorf("Content-Type %q: the gzipped body does not decode to the echo: %v", typ, err)
		}
	}
	return nil
}

// checkSyslog: a request shows in the access log HAProxy sends to ROUTER_SYSLOG_ADDRESS (the test's
// receiver), in ROUTER_SYSLOG_FORMAT when set.
func (o *opRun) checkSyslog() error {
	probe := "/syslog-probe-" + randomHex(o.t)
	if _, err := o.get("http://plain."+o.d.Variant+".e2e.test"+probe, nil, nil); err != nil {
		return err
	}
	parts := []string{probe}
	if strings.Contains(o.env["ROUTER_SYSLOG_FORMAT"], "%HM %HU %HV") {
		parts = []string{"GET " + probe + " HTTP/1.1"}
	}
	line, err := o.syslog.wait(parts...)
	if err != nil {
		return err
	}
	o.t.Logf("access log: %q", line)
	return nil
}

// checkSharding: a Route without ROUTE_LABELS, or in a namespace outside NAMESPACE_LABELS, is neither
// served nor given status by this router.
func (o *opRun) checkSharding() {
	notServed := func(ns, name, host string) error {
		rep, err := o.get("http://"+host+"/", nil, nil)
		if err != nil {
			return err
		}
		if rep.backend() != "" {
			return fmt.Errorf("%s/%s (%s) is served by %s", ns, name, host, rep.backend())
		}
		got, err := o.fx.c.Routes.RouteV1().Routes(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, in := range got.Status.Ingress {
			if in.RouterName == o.env["ROUTER_SERVICE_NAME"] {
				return fmt.Errorf("%s/%s has a status entry of this router: %+v", ns, name, in)
			}
		}
		return nil
	}
	if o.env["ROUTE_LABELS"] != "" {
		o.check("route labels", func() error {
			return notServed(o.ns, "unlabelled", "unlabelled."+o.d.Variant+".e2e.test")
		})
	}
	if o.env["NAMESPACE_LABELS"] != "" {
		o.check("namespace labels", func() error {
			return notServed(o.ns+"-other", "elsewhere", "elsewhere."+o.d.Variant+".e2e.test")
		})
	}
	if o.env["ROUTER_ALLOW_WILDCARD_ROUTES"] == "true" {
		o.check("wildcard", func() error {
			rep, err := o.get("http://any.wild."+o.d.Variant+".e2e.test/", nil, nil)
			if err != nil {
				return err
			}
			if rep.status != http.StatusOK || rep.backend() != "web" {
				return fmt.Errorf("a host under the wildcard Route: %d from %q", rep.status, rep.backend())
			}
			return nil
		})
	}
}

// checkIPMode: ROUTER_IP_V4_V6_MODE v4v6 serves clients on 127.0.0.1 and [::1], v6 on [::1] only.
func (o *opRun) checkIPMode() {
	mode := o.env["ROUTER_IP_V4_V6_MODE"]
	if mode != "v6" && mode != "v4v6" {
		return
	}
	name := map[string]string{"v6": "ipv6 only", "v4v6": "ipv4 and ipv6"}[mode]
	o.check(name, func() error {
		for _, tc := range []struct {
			host string
			want bool
		}{{"::1", true}, {"127.0.0.1", mode == "v4v6"}} {
			ep := o.ep
			ep.host = tc.host
			for _, u := range []string{"http://plain.", "https://edge."} {
				rep, err := ep.do(opRequest{url: u + o.d.Variant + ".e2e.test/"})
				served := err == nil && rep.status == http.StatusOK && rep.backend() == "web"
				if served != tc.want {
					return fmt.Errorf("%s on %s: served %v (%v), want %v", u, tc.host, served, err, tc.want)
				}
			}
		}
		return nil
	})
}

// checkTuning: HAProxy runs with ROUTER_THREADS threads and, when it is a number,
// ROUTER_MAX_CONNECTIONS connections.
func (o *opRun) checkTuning() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := o.r.Admin.Command(ctx, "show info")
	if err != nil {
		return err
	}
	want := map[string]string{}
	if v := o.env["ROUTER_THREADS"]; v != "" {
		want["Nbthread"] = v
	}
	if v := o.env["ROUTER_MAX_CONNECTIONS"]; v != "" && v != "auto" {
		want["Maxconn"] = v
	}
	for k, v := range want {
		if !strings.Contains(info, "\n"+k+": "+v+"\n") {
			line := ""
			for _, l := range strings.Split(info, "\n") {
				if strings.HasPrefix(l, k+":") {
					line = l
				}
			}
			return fmt.Errorf("show info has %q, want %s: %s", line, k, v)
		}
	}
	return nil
}

// reloadsTotal returns haroute_reloads_total (all reasons) from /metrics.
func (o *opRun) reloadsTotal() (float64, error) {
	sc := statsClient{port: o.r.StatsPort, serverName: o.metricsName, roots: o.fx.metricsCA.Pool()}
	code, body, _, err := sc.get("/metrics", o.statsUser, o.statsPassword)
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %d", code)
	}
	return metricSum(body, "haroute_reloads_total")
}

// checkRotation: the default certificate Secret is updated (a new ..data, as the kubelet does):
// HAProxy serves the new certificate, on a Route without one and for an unknown name, without a
// reload (HAProxy's reload counter and haroute_reloads_total stay).
func (o *opRun) checkRotation() error {
	dir := o.mounts.dirOf("default-certificate")
	if dir == "" {
		return errors.New("no default-certificate mount")
	}
	before := o.r.Reloads()
	metricBefore, err := o.reloadsTotal()
	if err != nil {
		return err
	}
	crt, key := o.fx.defaultCA.Issue(o.t, "*."+o.domain())
	old := o.defaultCert
	o.defaultCert = parseCert(o.t, crt)
	if err := framework.WriteKubeletVolume(dir, map[string][]byte{"tls.crt": crt, "tls.key": key}); err != nil {
		return err
	}
	for _, u := range []string{"https://edge-default." + o.d.Variant + ".e2e.test/", "https://unknown." + o.d.Variant + ".e2e.test/"} {
		if err := framework.Eventually(func() error {
			rep, err := o.get(u, nil, nil)
			if err != nil {
				return err
			}
			if leaf := rep.leaf(); leaf != nil && leaf.Equal(old) {
				return errors.New("still the old default certificate")
			}
			return o.servedBy(rep, nil, "")
		}); err != nil {
			return fmt.Errorf("%s after the rotation: %w", u, err)
		}
	}
	if after := o.r.Reloads(); after != before {
		return fmt.Errorf("HAProxy's reload counter went from %d to %d", before, after)
	}
	metricAfter, err := o.reloadsTotal()
	if err != nil {
		return err
	}
	if metricAfter != metricBefore {
		return fmt.Errorf("haroute_reloads_total went from %v to %v", metricBefore, metricAfter)
	}
	return nil
}
