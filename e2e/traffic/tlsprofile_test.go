package traffic

import (
	"context"
	"crypto/tls"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
)

// The TLS profile tests run a Go crypto/tls client (and, for the TLS 1.3 cipher suites it cannot
// choose, openssl s_client) against HAProxy configured from OpenShift's TLS variables, as the ingress
// operator renders them, and check which handshakes succeed.
//
// The router's certificates are RSA (2048 bits) so that the ECDHE-RSA and RSA key-exchange suites Go
// offers can be negotiated: with an ECDSA certificate only ECDHE-ECDSA suites could, and in TLS 1.2
// OpenSSL also wants the certificate's curve among the client's groups, which would mix the curve
// probes with the certificate.
//
// What HAProxy's OpenSSL does, found by running these tests on HAProxy 2.6 (OpenSSL 3.0.19) and
// 3.2 (OpenSSL 3.6.5) and asserted exactly (both give the same table):
//   - TLS 1.0 and 1.1 are refused even when SSL_MIN_VERSION allows them and the cipher is in
//     ROUTER_CIPHERS: OpenSSL 3's default security level 1 forbids them. The ingress operator's Old
//     profile (whose VersionTLS10 it writes as SSL_MIN_VERSION=TLSv1.1) therefore serves TLS 1.2 and
//     1.3 only. A cipher list ending in @SECLEVEL=0 (profile custom-seclevel0, not an OpenShift
//     value) brings TLS 1.0 and 1.1 back, which shows that the security level is the cause.
//   - The 3DES suites (DES-CBC3-SHA, ECDHE-RSA-DES-CBC3-SHA) are never negotiated, not even at
//     @SECLEVEL=0: neither OpenSSL has a 3DES TLS cipher (`openssl ciphers DES-CBC3-SHA`: "no
//     cipher match"; HAProxy 2.6 and 3.2 refuse `ssl-default-bind-ciphers DES-CBC3-SHA` alone).
//     OpenSSL skips the unknown names of a list that has known ones, so the Old profile's
//     DES-CBC3-SHA is silently dropped.
//   - A TLS 1.2 ECDHE suite needs a group common to the client's list and ROUTER_CURVES, and so
//     does a TLS 1.3 handshake; without one the handshake fails ("handshake failure").

// tlsVersionNames are the protocol versions, oldest first, by the names SSL_MIN_VERSION takes.
func tlsVersionNames() []string { return model.TLSVersions() }

// tlsVersionID maps SSL_MIN_VERSION's names to crypto/tls's.
func tlsVersionID(name string) uint16 {
	switch name {
	case "TLSv1.0":
		return tls.VersionTLS10
	case "TLSv1.1":
		return tls.VersionTLS11
	case "TLSv1.2":
		return tls.VersionTLS12
	case "TLSv1.3":
		return tls.VersionTLS13
	}
	return 0
}

// probeSuite is a TLS 1.0-1.2 cipher suite the Go client can offer to an RSA certificate.
type probeSuite struct {
	name  string // OpenSSL's name, as in ROUTER_CIPHERS
	id    uint16
	tls12 bool // TLS 1.2 only (GCM, ChaCha20, SHA-256 MACs)
	ecdhe bool // needs a common group
}

func probeSuites() []probeSuite {
	return []probeSuite{
		{"ECDHE-RSA-AES128-GCM-SHA256", tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, true, true},
		{"ECDHE-RSA-AES256-GCM-SHA384", tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, true, true},
		{"ECDHE-RSA-CHACHA20-POLY1305", tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, true, true},
		{"ECDHE-RSA-AES128-SHA256", tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, true, true},
		{"ECDHE-RSA-AES128-SHA", tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, false, true},
		{"ECDHE-RSA-AES256-SHA", tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, false, true},
		{"ECDHE-RSA-DES-CBC3-SHA", tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, false, true},
		{"AES128-GCM-SHA256", tls.TLS_RSA_WITH_AES_128_GCM_SHA256, true, false},
		{"AES256-GCM-SHA384", tls.TLS_RSA_WITH_AES_256_GCM_SHA384, true, false},
		{"AES128-SHA256", tls.TLS_RSA_WITH_AES_128_CBC_SHA256, true, false},
		{"AES128-SHA", tls.TLS_RSA_WITH_AES_128_CBC_SHA, false, false},
		{"DES-CBC3-SHA", tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA, false, false},
	}
}

// usableWith reports whether the suite exists in version v.
func (s probeSuite) usableWith(v uint16) bool {
	return v <= tls.VersionTLS12 && (v == tls.VersionTLS12 || !s.tls12)
}

// probeCurve is a key-exchange group the Go client can offer.
type probeCurve struct {
	name string // OpenSSL's name
	id   tls.CurveID
}

func probeCurves() []probeCurve {
	return []probeCurve{
		{"X25519", tls.X25519}, {"secp256r1", tls.CurveP256}, {"secp384r1", tls.CurveP384}, {"secp521r1", tls.CurveP521},
		{"X25519MLKEM768", tls.X25519MLKEM768},
	}
}

// classicalCurves are the elliptic curves of probeCurves (what TLS 1.2 can use).
func classicalCurves() []tls.CurveID {
	return []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}
}

// curveID maps a group name ROUTER_CURVES may hold to crypto/tls's (0: unknown to the Go client).
func curveID(name string) tls.CurveID {
	switch name {
	case "X25519", "x25519":
		return tls.X25519
	case "secp256r1", "prime256v1", "P-256":
		return tls.CurveP256
	case "secp384r1", "P-384":
		return tls.CurveP384
	case "secp521r1", "P-521":
		return tls.CurveP521
	case "X25519MLKEM768":
		return tls.X25519MLKEM768
	}
	return 0
}

// tls13Suites are TLS 1.3's cipher suites by their OpenSSL (and ROUTER_CIPHERSUITES) names.
func tls13Suites() []string {
	return []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
}

// tlsProfileCase is one TLS profile: the variables the ingress operator sets, by name.
type tlsProfileCase struct {
	name string
	env  map[string]string
}

// tlsProfileVariables are the variables of a TLS profile.
func tlsProfileVariables() []string {
	return []string{"SSL_MIN_VERSION", "SSL_MAX_VERSION", "ROUTER_CIPHERS", "ROUTER_CIPHERSUITES", "ROUTER_CURVES"}
}

// operatorProfile returns the TLS variables of an operator variant, without X25519MLKEM768 in
// ROUTER_CURVES (the operator's default groups name it first; OpenSSL 3.0, under HAProxy 2.6, does
// not know it and HAProxy refuses the configuration: TestTLSProfileMLKEMCurve).
func operatorProfile(t *testing.T, name, variant string) tlsProfileCase {
	t.Helper()
	all := operatorEnv(t, variant)
	env := map[string]string{}
	for _, k := range tlsProfileVariables() {
		if v, ok := all[k]; ok {
			env[k] = v
		}
	}
	if c, ok := env["ROUTER_CURVES"]; ok {
		groups := slices.DeleteFunc(strings.Split(c, ":"), func(g string) bool { return g == "X25519MLKEM768" })
		env["ROUTER_CURVES"] = strings.Join(groups, ":")
	}
	return tlsProfileCase{name: name, env: env}
}

// parsedProfile is what the test expects from a profile, read from the options mapping.FromEnv made.
type parsedProfile struct {
	min, max     uint16 // min: SSL_MIN_VERSION or OpenShift's default TLS 1.2; max: TLS 1.3 when unset
	ciphers      []string
	cipherSuites []string // ROUTER_CIPHERSUITES; unset: OpenSSL's default, all three
	curves       []tls.CurveID
	secLevel0    bool // ROUTER_CIPHERS ends with @SECLEVEL=0
}

func parseProfile(t *testing.T, p model.TLSProfile) parsedProfile {
	t.Helper()
	out := parsedProfile{min: tlsVersionID(p.MinVersion), max: tls.VersionTLS13}
	if p.MaxVersion != "" {
		out.max = tlsVersionID(p.MaxVersion)
	}
	if out.min == 0 {
		t.Fatalf("profile %+v: no minimum version", p)
	}
	for _, c := range strings.Split(p.Ciphers, ":") {
		switch {
		case c == "@SECLEVEL=0":
			out.secLevel0 = true
		case strings.HasPrefix(c, "!"):
			// An exclusion (the intermediate list's !DSS): the probes offer RSA suites only.
		case strings.ContainsAny(c, "+@") || !strings.Contains(c, "-"):
			t.Fatalf("profile cipher list %q: %q is not a cipher name; the test can only predict explicit lists", p.Ciphers, c)
		default:
			out.ciphers = append(out.ciphers, c)
		}
	}
	out.cipherSuites = tls13Suites()
	if p.CipherSuites != "" {
		out.cipherSuites = strings.Split(p.CipherSuites, ":")
	}
	for _, c := range strings.Split(p.Curves, ":") {
		id := curveID(c)
		if id == 0 {
			t.Fatalf("profile curves %q: %q is unknown to the test", p.Curves, c)
		}
		out.curves = append(out.curves, id)
	}
	return out
}

// profileTarget is one way to reach the TLS listeners.
type profileTarget struct {
	name       string
	serverName string // SNI; "" sends none (fe_no_sni)
	leaf       string // the DNS name of the certificate that must be served
}

// profileProbe is one client configuration and the outcome the profile predicts.
type profileProbe struct {
	kind    string // "version", "cipher TLSv1.2", "curve TLSv1.3", ...
	item    string // the version, cipher or curve probed
	cfg     *tls.Config
	want    bool
	why     string                          // why a refusal is expected
	checkOK func(tls.ConnectionState) error // extra check of a successful handshake
}

// probesFor builds the probes of profile p, each with the outcome it predicts.
func probesFor(p parsedProfile) []profileProbe {
	var out []profileProbe
	versionOK := func(v uint16) (bool, string) {
		switch {
		case v < p.min || v > p.max:
			return false, whyRange
		case v < tls.VersionTLS12 && !p.secLevel0:
			return false, whySecLevel
		}
		return true, ""
	}
	anyCurve := func(offered []tls.CurveID) bool {
		return slices.ContainsFunc(offered, func(c tls.CurveID) bool { return slices.Contains(p.curves, c) })
	}
	cipherOK := func(s probeSuite, offered []tls.CurveID) (bool, string) {
		switch {
		case !slices.Contains(p.ciphers, s.name):
			return false, whyList
		case strings.Contains(s.name, "DES-CBC3"):
			return false, why3DES
		case s.ecdhe && !anyCurve(offered):
			return false, whyNoGroup
		}
		return true, ""
	}
	suite13OK := func(cs tls.ConnectionState) error {
		if cs.Version == tls.VersionTLS13 && !slices.Contains(p.cipherSuites, tls.CipherSuiteName(cs.CipherSuite)) {
			return fmt.Errorf("negotiated TLS 1.3 suite %s is not in ROUTER_CIPHERSUITES %v", tls.CipherSuiteName(cs.CipherSuite), p.cipherSuites)
		}
		return nil
	}
	for _, vn := range tlsVersionNames() {
		v := tlsVersionID(vn)
		// The version alone: every suite and group the client has.
		var ids []uint16
		want, why := versionOK(v)
		if v <= tls.VersionTLS12 {
			cipherWant := false
			for _, s := range probeSuites() {
				if s.usableWith(v) {
					ids = append(ids, s.id)
					if ok, _ := cipherOK(s, classicalCurves()); ok {
						cipherWant = true
					}
				}
			}
			if want && !cipherWant {
				want, why = false, whyNoCipher
			}
		} else if want && !anyCurve(classicalCurves()) {
			want, why = false, whyNoGroup
		}
		out = append(out, profileProbe{
			kind: "version", item: vn, want: want, why: why, checkOK: suite13OK,
			cfg: &tls.Config{MinVersion: v, MaxVersion: v, CipherSuites: ids, CurvePreferences: classicalCurves()},
		})
		if v <= tls.VersionTLS12 {
			// Each suite alone, with every group.
			for _, s := range probeSuites() {
				if !s.usableWith(v) {
					continue
				}
				want, why := versionOK(v)
				if want {
					want, why = cipherOK(s, classicalCurves())
				}
				out = append(out, profileProbe{
					kind: "cipher " + vn, item: s.name, want: want, why: why,
					cfg: &tls.Config{MinVersion: v, MaxVersion: v, CipherSuites: []uint16{s.id}, CurvePreferences: classicalCurves()},
				})
			}
		}
		if v < tls.VersionTLS12 {
			continue
		}
		// Each group alone: in TLS 1.2 with the ECDHE suites only, so that the group matters.
		var ecdhe []uint16
		ecdheWant := false
		for _, s := range probeSuites() {
			if s.usableWith(v) && s.ecdhe {
				ecdhe = append(ecdhe, s.id)
				if ok, _ := cipherOK(s, classicalCurves()); ok {
					ecdheWant = true
				}
			}
		}
		for _, c := range probeCurves() {
			if c.id == tls.X25519MLKEM768 && v != tls.VersionTLS13 {
				continue // a TLS 1.3 group
			}
			want, why := versionOK(v)
			switch {
			case !want:
			case !slices.Contains(p.curves, c.id):
				want, why = false, whyList
			case v == tls.VersionTLS12 && !ecdheWant:
				want, why = false, whyNoCipher
			}
			id := c.id
			out = append(out, profileProbe{
				kind: "curve " + vn, item: c.name, want: want, why: why,
				checkOK: func(cs tls.ConnectionState) error {
					if cs.CurveID != id {
						return fmt.Errorf("negotiated group %v, want the one offered, %v", cs.CurveID, id)
					}
					return suite13OK(cs)
				},
				cfg: &tls.Config{MinVersion: v, MaxVersion: v, CipherSuites: ecdhe, CurvePreferences: []tls.CurveID{c.id}},
			})
		}
	}
	return out
}

// Why a probe is expected to be refused: short codes for the table (whyText has the long form).
const (
	whyRange    = "range"    // the version is outside SSL_MIN_VERSION..SSL_MAX_VERSION
	whySecLevel = "seclevel" // TLS < 1.2 at OpenSSL 3's default security level 1
	whyList     = "list"     // not in ROUTER_CIPHERS, ROUTER_CURVES or ROUTER_CIPHERSUITES
	why3DES     = "3des"     // 3DES: HAProxy's OpenSSL has no such TLS cipher
	whyNoGroup  = "nogroup"  // an ECDHE suite (or TLS 1.3) without a group of ROUTER_CURVES offered
	whyNoCipher = "nocipher" // nothing the client offers is in ROUTER_CIPHERS
)

func whyText(code string) string {
	return map[string]string{
		whyRange:    "outside SSL_MIN_VERSION..SSL_MAX_VERSION",
		whySecLevel: "OpenSSL 3's default security level 1 forbids TLS 1.0 and 1.1",
		whyList:     "not in ROUTER_CIPHERS, ROUTER_CURVES or ROUTER_CIPHERSUITES",
		why3DES:     "HAProxy's OpenSSL has no 3DES TLS cipher (`openssl ciphers DES-CBC3-SHA`: no cipher match)",
		whyNoGroup:  "no group of ROUTER_CURVES offered",
		whyNoCipher: "no cipher the client offers is in ROUTER_CIPHERS",
	}[code]
}

// profileResult collects, per probe kind, what could and could not be negotiated.
type profileResult struct {
	kinds   []string
	ok, bad map[string][]string
	whys    map[string][]string // the reasons of bad, by kind
}

func newProfileResult() *profileResult {
	return &profileResult{ok: map[string][]string{}, bad: map[string][]string{}, whys: map[string][]string{}}
}

// add records one probe; a refusal is written item(why).
func (r *profileResult) add(kind, item string, ok bool, why string) {
	if !slices.Contains(r.kinds, kind) {
		r.kinds = append(r.kinds, kind)
	}
	if ok {
		r.ok[kind] = append(r.ok[kind], item)
	} else {
		r.bad[kind] = append(r.bad[kind], item+"("+why+")")
		r.whys[kind] = append(r.whys[kind], why)
	}
}

// refused lists the refused items of kind, or "all (why)" when nothing was negotiated, all for the
// same reason.
func (r *profileResult) refused(kind string) string {
	if w := r.whys[kind]; len(r.ok[kind]) == 0 && len(w) > 1 && !slices.ContainsFunc(w, func(x string) bool { return x != w[0] }) {
		return "all (" + w[0] + ")"
	}
	return list(r.bad[kind])
}

func (r *profileResult) format(name string, env map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", name)
	for _, k := range tlsProfileVariables() {
		if v, ok := env[k]; ok {
			fmt.Fprintf(&b, " %s=%q", k, v)
		}
	}
	b.WriteString("\n")
	for _, k := range r.kinds {
		fmt.Fprintf(&b, "  %-23s ok: %s\n  %-23s refused: %s\n", k, list(r.ok[k]), "", r.refused(k))
	}
	return b.String()
}

func list(items []string) string {
	if len(items) == 0 {
		return "-"
	}
	return strings.Join(items, " ")
}

// TestTLSProfile serves one edge Route with its own certificate under each TLS profile and
// negotiates every protocol version, TLS 1.0-1.2 cipher suite and group the Go client can offer,
// through fe_sni with the Route's certificate (crt-list), fe_sni with the default certificate and
// fe_no_sni: the three must agree with the profile and with each other.
func TestTLSProfile(t *testing.T) {
	b := buildOf(t)
	t.Logf("%s", b)
	profiles := []tlsProfileCase{
		operatorProfile(t, "old", "old-tls"),
		operatorProfile(t, "intermediate", "default"),
		operatorProfile(t, "modern", "modern-tls"),
		operatorProfile(t, "custom", "custom-tls"),
		{name: "custom-seclevel0", env: map[string]string{
			"SSL_MIN_VERSION": "TLSv1.0",
			"ROUTER_CIPHERS":  "ECDHE-RSA-AES128-SHA:ECDHE-RSA-DES-CBC3-SHA:AES128-SHA:DES-CBC3-SHA:@SECLEVEL=0",
			"ROUTER_CURVES":   "X25519",
		}},
		{name: "custom-legacy", env: map[string]string{
			"SSL_MIN_VERSION":     "TLSv1.0",
			"SSL_MAX_VERSION":     "TLSv1.2",
			"ROUTER_CIPHERS":      "ECDHE-RSA-AES128-SHA:ECDHE-RSA-DES-CBC3-SHA:AES128-SHA:AES256-GCM-SHA384:DES-CBC3-SHA",
			"ROUTER_CIPHERSUITES": "TLS_AES_256_GCM_SHA384",
			"ROUTER_CURVES":       "secp384r1,secp521r1", // commas, which mapping turns into HAProxy's colons
		}},
	}
	var table strings.Builder
	for _, pc := range profiles {
		t.Run(pc.name, func(t *testing.T) {
			res := runTLSProfile(t, pc)
			table.WriteString(res.format(pc.name, pc.env))
		})
	}
	var legend strings.Builder
	for _, c := range []string{whyRange, whySecLevel, whyList, why3DES, whyNoGroup, whyNoCipher} {
		fmt.Fprintf(&legend, "  (%s) %s\n", c, whyText(c))
	}
	t.Logf("TLS profiles on %s (Go client; TLS 1.3 suites one by one by openssl s_client); refused(why):\n%s%s", b, legend.String(), table.String())
}

// runTLSProfile starts HAProxy with one profile and runs its probes.
func runTLSProfile(t *testing.T, pc tlsProfileCase) *profileResult {
	opts := envOptions(t, pc.env)
	p := parseProfile(t, opts.TLS)
	f := newFixture(t)
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	f.m.Service("tls", "web", web)
	crt, key := f.ca.IssueRSA(t, 2048, "profile.example.com")
	f.m.Route("tls", "profile", "profile.example.com", "", "web", testbed.Edge(crt, key))
	dcrt, dkey := f.ca.IssueRSA(t, 2048, defaultCertName)
	r := f.startWith(t, opts, model.ListenerFiles{}, append(dcrt, dkey...))
	checkProfileRendered(t, r, opts.TLS)

	targets := []profileTarget{
		{"route certificate", "profile.example.com", "profile.example.com"},
		{"default certificate", "unknown.example.com", defaultCertName},
		{"no SNI", "", defaultCertName},
	}
	res := newProfileResult()
	for _, pr := range probesFor(p) {
		got := make([]bool, len(targets))
		for i, tg := range targets {
			cfg := pr.cfg.Clone()
			cfg.ServerName, cfg.InsecureSkipVerify = tg.serverName, true
			cs, err := handshake(r.Options.HTTPSPort, cfg)
			got[i] = err == nil
			switch {
			case err == nil && !pr.want:
				t.Errorf("%s %s via %s: negotiated %s %s, want refused (%s)", pr.kind, pr.item, tg.name,
					tls.VersionName(cs.Version), tls.CipherSuiteName(cs.CipherSuite), whyText(pr.why))
			case err != nil && pr.want:
				t.Errorf("%s %s via %s: refused (%v), want negotiated", pr.kind, pr.item, tg.name, err)
			case err == nil:
				if leaf := cs.PeerCertificates[0]; !slices.Equal(leaf.DNSNames, []string{tg.leaf}) {
					t.Errorf("%s %s via %s: served the certificate of %v, want %s", pr.kind, pr.item, tg.name, leaf.DNSNames, tg.leaf)
				}
				if pr.checkOK != nil {
					if err := pr.checkOK(cs); err != nil {
						t.Errorf("%s %s via %s: %v", pr.kind, pr.item, tg.name, err)
					}
				}
			}
		}
		if got[1] != got[0] || got[2] != got[0] {
			t.Errorf("%s %s: the targets disagree: %v negotiated %v", pr.kind, pr.item, targets, got)
		}
		why := pr.why
		if got[0] && !pr.want {
			why = "unexpected"
		}
		res.add(pr.kind, pr.item, got[0], why)
	}
	openSSLSuites(t, r.Options.HTTPSPort, p, res)
	return res
}

// checkProfileRendered checks the global TLS lines of haproxy.cfg.
func checkProfileRendered(t *testing.T, r *testbed.StaticHAProxy, p model.TLSProfile) {
	t.Helper()
	cfg := string(r.File(layout.Config))
	want := []string{"ssl-default-bind-ciphers " + p.Ciphers + "\n", "ssl-min-ver " + p.MinVersion}
	if p.Curves != "" {
		want = append(want, "ssl-default-bind-curves "+p.Curves+"\n")
	}
	if p.DHParamBits != 0 {
		want = append(want, fmt.Sprintf("tune.ssl.default-dh-param %d\n", p.DHParamBits))
	}
	if p.CipherSuites != "" {
		want = append(want, "ssl-default-bind-ciphersuites "+p.CipherSuites+"\n")
	}
	if p.MaxVersion != "" {
		want = append(want, "ssl-max-ver "+p.MaxVersion)
	}
	for _, w := range want {
		if !strings.Contains(cfg, w) {
			t.Errorf("haproxy.cfg has no %q", w)
		}
	}
}

// openSSLSuites offers each TLS 1.3 cipher suite alone with openssl s_client (the Go client cannot
// restrict its TLS 1.3 offer) and checks that HAProxy accepts exactly those of ROUTER_CIPHERSUITES.
func openSSLSuites(t *testing.T, port int, p parsedProfile, res *profileResult) {
	t.Helper()
	t.Run("TLSv1.3 suites by openssl", func(t *testing.T) {
		bin, err := exec.LookPath("openssl")
		if err != nil {
			t.Skip("no openssl binary in PATH: the TLS 1.3 cipher suites cannot be offered one by one (Go's client offers them all)")
		}
		group := ""
		for _, c := range probeCurves() {
			if slices.Contains(p.curves, c.id) {
				group = c.name
				break
			}
		}
		for _, s := range tls13Suites() {
			want, why := true, ""
			switch {
			case p.max != tls.VersionTLS13:
				want, why = false, whyRange
			case !slices.Contains(p.cipherSuites, s):
				want, why = false, whyList
			}
			got, out := sClient(t, bin, port, "profile.example.com", "-tls1_3", "-ciphersuites", s, "-groups", group)
			if got != want {
				t.Errorf("openssl s_client -tls1_3 -ciphersuites %s -groups %s: negotiated %v, want %v (ROUTER_CIPHERSUITES %v, max %s)\n%s",
					s, group, got, want, p.cipherSuites, tls.VersionName(p.max), out)
			}
			res.add("suite TLSv1.3 (openssl)", s, got, why)
		}
	})
}

// sClient runs `openssl s_client -brief` against 127.0.0.1:port with SNI host and args, with no
// input, and reports whether a handshake completed (openssl prints the negotiated protocol).
func sClient(t *testing.T, bin string, port int, host string, args ...string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*tlsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"s_client", "-brief", "-connect", fmt.Sprintf("127.0.0.1:%d", port), "-servername", host}, args...)...)
	cmd.Stdin = strings.NewReader("")
	cmd.Env = testkit.CleanEnv()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("openssl s_client %v: no answer within %v", args, 2*tlsTimeout)
	}
	ok := err == nil && strings.Contains(string(out), "CONNECTION ESTABLISHED")
	return ok, string(out)
}

// TestTLSProfileMLKEMCurve renders the ingress operator's default groups, which name
// X25519MLKEM768 first. OpenSSL before 3.5 does not know that group: HAProxy refuses the
// configuration. From OpenSSL 3.5 on HAProxy accepts it and a client offering only that group
// negotiates it (TLS 1.3).
func TestTLSProfileMLKEMCurve(t *testing.T) {
	b := buildOf(t)
	env := operatorEnv(t, "default")
	if !strings.Contains(env["ROUTER_CURVES"], "X25519MLKEM768") {
		t.Fatalf("the operator's default ROUTER_CURVES %q no longer names X25519MLKEM768", env["ROUTER_CURVES"])
	}
	tlsEnv := map[string]string{}
	for _, k := range tlsProfileVariables() {
		tlsEnv[k] = env[k]
	}
	opts := envOptions(t, tlsEnv)
	if opts.TLS.Curves != env["ROUTER_CURVES"] {
		t.Fatalf("curves %q, want the operator's %q", opts.TLS.Curves, env["ROUTER_CURVES"])
	}
	f := newFixture(t)
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	f.m.Service("tls", "web", web)
	crt, key := f.ca.Issue(t, "mlkem.example.com")
	f.m.Route("tls", "mlkem", "mlkem.example.com", "", "web", testbed.Edge(crt, key))

	if !b.openSSLAtLeast(3, 5) {
		err := checkRendered(t, f.m.Input(t), opts, f.ca.IssueBundle(t, defaultCertName))
		if err == nil {
			t.Fatalf("%s: haproxy -c accepted ssl-default-bind-curves %s; OpenSSL before 3.5 has no X25519MLKEM768", b, opts.TLS.Curves)
		}
		if !strings.Contains(err.Error(), "curves") {
			t.Errorf("%s: haproxy -c refused the configuration, but not for its curves:\n%v", b, err)
		}
		t.Logf("%s refuses ROUTER_CURVES=%s as expected:\n%v", b, opts.TLS.Curves, err)
		return
	}
	r := f.startWith(t, opts, model.ListenerFiles{}, f.ca.IssueBundle(t, defaultCertName))
	cs, err := handshake(r.Options.HTTPSPort, &tls.Config{
		ServerName: "mlkem.example.com", RootCAs: f.ca.Pool(), MinVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{tls.X25519MLKEM768},
	})
	if err != nil {
		t.Fatalf("%s: a TLS 1.3 client offering X25519MLKEM768 only: %v", b, err)
	}
	if cs.CurveID != tls.X25519MLKEM768 {
		t.Errorf("%s: negotiated group %v, want X25519MLKEM768", b, cs.CurveID)
	}
}

// checkRendered translates and renders in with opts and defaultCert into a new directory, as
// testbed.StartStaticHAProxy does, and runs `haproxy -c` on it, returning its refusal.
func checkRendered(t *testing.T, in mapping.Input, opts mapping.Options, defaultCert []byte) error {
	t.Helper()
	cfg, problems := mapping.Translate(in, opts)
	if cfg == nil {
		t.Fatalf("Translate returned no config (problems: %v)", problems)
	}
	dir := testkit.TempDir(t)
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: render.Options{DefaultCertificatePEM: defaultCert}, Binary: testkit.HAProxyBinary()})
	if err != nil {
		t.Fatal(err)
	}
	first, err := inst.InitialFiles(cfg)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	testbed.WriteFiles(t, dir, first.Files)
	return testbed.CheckConfig(layout.For(dir).Config())
}

// TestTLSProfileNamedLists runs ROUTER_CIPHERS=modern, intermediate and old (the named lists
// OpenShift's router accepts instead of a list; old also sets 1024-bit DHE parameters) with
// SSL_MIN_VERSION=TLSv1.0: HAProxy must accept each list, serve TLS 1.2 with the suites it names and
// refuse the ones it leaves out; TLS 1.0 stays refused (OpenSSL's security level, see above).
func TestTLSProfileNamedLists(t *testing.T) {
	type probe struct {
		version uint16
		suite   uint16
		want    bool
	}
	gcm := tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 // ECDHE-RSA-AES128-GCM-SHA256: in all three
	cbc := tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA    // ECDHE-RSA-AES128-SHA: not in modern
	rsa := tls.TLS_RSA_WITH_AES_128_CBC_SHA          // AES128-SHA: not in modern
	for _, tc := range []struct {
		list   string
		dh     int
		probes []probe
	}{
		{"modern", 2048, []probe{{tls.VersionTLS12, gcm, true}, {tls.VersionTLS12, cbc, false}, {tls.VersionTLS12, rsa, false}, {tls.VersionTLS10, cbc, false}}},
		{"intermediate", 2048, []probe{{tls.VersionTLS12, gcm, true}, {tls.VersionTLS12, cbc, true}, {tls.VersionTLS12, rsa, true}, {tls.VersionTLS10, cbc, false}}},
		{"old", 1024, []probe{{tls.VersionTLS12, gcm, true}, {tls.VersionTLS12, cbc, true}, {tls.VersionTLS12, rsa, true}, {tls.VersionTLS10, cbc, false}}},
	} {
		t.Run(tc.list, func(t *testing.T) {
			opts := envOptions(t, map[string]string{"ROUTER_CIPHERS": tc.list, "SSL_MIN_VERSION": "TLSv1.0"})
			if opts.TLS.DHParamBits != tc.dh {
				t.Errorf("ROUTER_CIPHERS=%s: DH parameters of %d bits, want %d", tc.list, opts.TLS.DHParamBits, tc.dh)
			}
			f := newFixture(t)
			f.m.Service("tls", "web", testkit.StartHTTPBackend(t, "127.0.0.2", "web"))
			crt, key := f.ca.IssueRSA(t, 2048, "named.example.com")
			f.m.Route("tls", "named", "named.example.com", "", "web", testbed.Edge(crt, key))
			dcrt, dkey := f.ca.IssueRSA(t, 2048, defaultCertName)
			r := f.startWith(t, opts, model.ListenerFiles{}, append(dcrt, dkey...))
			checkProfileRendered(t, r, opts.TLS)
			for _, p := range tc.probes {
				_, err := handshake(r.Options.HTTPSPort, &tls.Config{
					ServerName: "named.example.com", RootCAs: f.ca.Pool(), MinVersion: p.version, MaxVersion: p.version,
					CipherSuites: []uint16{p.suite}, CurvePreferences: []tls.CurveID{tls.X25519},
				})
				if got := err == nil; got != p.want {
					t.Errorf("ROUTER_CIPHERS=%s, %s %s: negotiated %v (%v), want %v", tc.list, tls.VersionName(p.version), tls.CipherSuiteName(p.suite), got, err, p.want)
				}
			}
		})
	}
}
