package mapping

import (
	"encoding/pem"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/mapping/model"
)

func TestCertificateBundle(t *testing.T) {
	exampleCrt, exampleKey := readCert(t, "example.crt"), readCert(t, "example.key")
	otherCrt, otherKey := readCert(t, "other.crt"), readCert(t, "other.key")
	backendCrt, backendKey := readCert(t, "backend.crt"), readCert(t, "backend.key")
	caCrt := readCert(t, "ca.crt")
	garbage := "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"

	good := []struct {
		name           string
		cert, key, ca  string
		wantTypes      []string
		wantBlankLines bool
	}{
		{"rsa pkcs1 with chain", exampleCrt, exampleKey, caCrt, []string{"CERTIFICATE", "CERTIFICATE", "RSA PRIVATE KEY"}, false},
		{"ec sec1", otherCrt, otherKey, "", []string{"CERTIFICATE", "EC PRIVATE KEY"}, false},
		{"ec pkcs8", backendCrt, backendKey, "", []string{"CERTIFICATE", "PRIVATE KEY"}, false},
		{"intermediate in certificate field", exampleCrt + caCrt, exampleKey, "", []string{"CERTIFICATE", "CERTIFICATE", "RSA PRIVATE KEY"}, false},
		{"blank lines and text around blocks are dropped", "subject=x\n\n" + exampleCrt + "\n\n", "\n" + exampleKey + "\n\n", "\n\n" + caCrt,
			[]string{"CERTIFICATE", "CERTIFICATE", "RSA PRIVATE KEY"}, false},
		{"ec parameters block is dropped", otherCrt, "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + otherKey, "",
			[]string{"CERTIFICATE", "EC PRIVATE KEY"}, false},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			bundle, err := certificateBundle([]byte(tt.cert), []byte(tt.key), []byte(tt.ca))
			if err != nil {
				t.Fatal(err)
			}
			if model.HasBlankLine(bundle) {
				t.Fatalf("bundle has a blank line:\n%s", bundle)
			}
			var types []string
			rest := []byte(bundle)
			for {
				var b *pem.Block
				b, rest = pem.Decode(rest)
				if b == nil {
					break
				}
				types = append(types, b.Type)
			}
			if strings.Join(types, ",") != strings.Join(tt.wantTypes, ",") || strings.TrimSpace(string(rest)) != "" {
				t.Fatalf("bundle blocks %v (rest %q), want %v", types, rest, tt.wantTypes)
			}
		})
	}

	bad := []struct {
		name, cert, key, ca, msg string
	}{
		{"mismatched key", exampleCrt, otherKey, "", "does not match"},
		{"mismatched ec key", otherCrt, backendKey, "", "does not match"},
		{"garbage certificate", garbage, exampleKey, "", "spec.tls.certificate"},
		{"no pem", "hello", exampleKey, "", "no PEM data"},
		{"key as certificate", exampleKey, exampleKey, "", "want CERTIFICATE"},
		{"certificate as key", exampleCrt, exampleCrt, "", "want a private key"},
		{"two keys", exampleCrt, exampleKey + otherKey, "", "more than one private key"},
		{"only ec parameters", otherCrt, "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n", "", "no private key"},
		{"garbage key", exampleCrt, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n", "", "does not parse"},
		{"bad ca", exampleCrt, exampleKey, garbage, "spec.tls.caCertificate"},
		{"key in ca", exampleCrt, exampleKey, otherKey, "spec.tls.caCertificate"},
		{"malformed block before a good one", "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n" + exampleCrt, exampleKey, "", "malformed"},
		{"truncated block", exampleCrt[:len(exampleCrt)/2], exampleKey, "", "spec.tls.certificate"},
		{"encrypted key", exampleCrt, "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n", "", "headers"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := certificateBundle([]byte(tt.cert), []byte(tt.key), []byte(tt.ca))
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want an error containing %q", err, tt.msg)
			}
		})
	}
}

func tlsRoute(name string, tls *routev1.TLSConfig) *routev1.Route {
	r := newRoute("ns", name, name+".example.com", 0)
	r.Spec.TLS = tls
	return r
}

func TestRouteTLS(t *testing.T) {
	crt, key, ca := readCert(t, "example.crt"), readCert(t, "example.key"), readCert(t, "ca.crt")
	secret := func(name string, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: typ, Data: data}
	}
	secrets := []*corev1.Secret{
		secret("good", corev1.SecretTypeTLS, map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}),
		secret("opaque", corev1.SecretTypeOpaque, map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}),
		secret("nokey", corev1.SecretTypeTLS, map[string][]byte{"tls.crt": []byte(crt)}),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "foreign"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}},
	}
	edgeTLS := func(mod func(*routev1.TLSConfig)) *routev1.TLSConfig {
		c := &routev1.TLSConfig{Termination: routev1.TLSTerminationEdge}
		mod(c)
		return c
	}
	tests := []struct {
		name     string
		tls      *routev1.TLSConfig
		defCA    string
		wantCert bool
		wantCA   string // BackendTLS.CAFile
		reject   string // substring of an ExtendedValidationFailed message
	}{
		{name: "edge default certificate", tls: edgeTLS(func(*routev1.TLSConfig) {})},
		{name: "edge own certificate", tls: edgeTLS(func(c *routev1.TLSConfig) { c.Certificate, c.Key, c.CACertificate = crt, key, ca }), wantCert: true},
		{name: "external certificate", tls: edgeTLS(func(c *routev1.TLSConfig) { c.ExternalCertificate = &routev1.LocalObjectReference{Name: "good"} }), wantCert: true},
		{name: "external opaque", tls: edgeTLS(func(c *routev1.TLSConfig) { c.ExternalCertificate = &routev1.LocalObjectReference{Name: "opaque"} }), reject: "type"},
		{name: "external missing", tls: edgeTLS(func(c *routev1.TLSConfig) { c.ExternalCertificate = &routev1.LocalObjectReference{Name: "nope"} }), reject: "not found"},
		{name: "external no key", tls: edgeTLS(func(c *routev1.TLSConfig) { c.ExternalCertificate = &routev1.LocalObjectReference{Name: "nokey"} }), reject: "lacks"},
		{name: "external other namespace", tls: edgeTLS(func(c *routev1.TLSConfig) { c.ExternalCertificate = &routev1.LocalObjectReference{Name: "foreign"} }), reject: "not found"},
		{name: "external empty name", tls: edgeTLS(func(c *routev1.TLSConfig) { c.ExternalCertificate = &routev1.LocalObjectReference{} }), reject: "no secret name"},
		{name: "external and inline", tls: edgeTLS(func(c *routev1.TLSConfig) {
			c.Certificate, c.Key = crt, key
			c.ExternalCertificate = &routev1.LocalObjectReference{Name: "good"}
		}), reject: "mutually exclusive"},
		{name: "ca without certificate", tls: edgeTLS(func(c *routev1.TLSConfig) { c.CACertificate = ca }), reject: "caCertificate"},
		{name: "edge with destination CA", tls: edgeTLS(func(c *routev1.TLSConfig) { c.DestinationCACertificate = ca }), reject: "destinationCACertificate"},
		{name: "reencrypt with destination CA", tls: &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt, DestinationCACertificate: ca}, wantCA: "ns_reencrypt-with-destination-ca.pem"},
		{name: "reencrypt default CA", tls: &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt}, defCA: "/etc/ca/service-ca.crt", wantCA: "/etc/ca/service-ca.crt"},
		{name: "reencrypt without CA", tls: &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt}, reject: "no default destination CA configured"},
		{name: "reencrypt bad destination CA", tls: &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt, DestinationCACertificate: key}, reject: "destinationCACertificate"},
		{name: "passthrough with key", tls: &routev1.TLSConfig{Termination: routev1.TLSTerminationPassthrough, Key: key}, reject: "passthrough"},
		{name: "passthrough with destination CA", tls: &routev1.TLSConfig{Termination: routev1.TLSTerminationPassthrough, DestinationCACertificate: ca}, reject: "passthrough"},
		{name: "passthrough with external", tls: &routev1.TLSConfig{Termination: routev1.TLSTerminationPassthrough, ExternalCertificate: &routev1.LocalObjectReference{Name: "good"}}, reject: "passthrough"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			opts.DefaultDestinationCAFile = tt.defCA
			name := strings.ToLower(strings.ReplaceAll(tt.name, " ", "-"))
			r := tlsRoute(name, tt.tls)
			cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}, Secrets: secrets}, opts)
			if tt.reject != "" {
				p := problemFor(problems, "ns", name)
				if p == nil || p.Reason != ReasonExtendedValidationFailed || !strings.Contains(p.Message, tt.reject) {
					t.Fatalf("got %v, want ExtendedValidationFailed containing %q", problems, tt.reject)
				}
				if len(cfg.Certificates)+len(cfg.CAFiles)+len(cfg.Backends) != 0 {
					t.Fatalf("a rejected Route left certificates, CA files or backends behind")
				}
				return
			}
			if len(problems) != 0 {
				t.Fatalf("unexpected problems %v", problems)
			}
			if got := len(cfg.Certificates) == 1; got != tt.wantCert {
				t.Fatalf("certificates %v, want one: %v", cfg.Certificates, tt.wantCert)
			}
			if tt.wantCert {
				c := cfg.Certificates[0]
				if c.Name != "ns_"+name+".pem" || len(c.SNI) != 1 || c.SNI[0] != name+".example.com" || c.ALPN != "h2,http/1.1" {
					t.Fatalf("certificate %+v", c)
				}
				if cfg.Routes[0].Certificate != c.Name {
					t.Fatalf("route info names certificate %q, want %q", cfg.Routes[0].Certificate, c.Name)
				}
			}
			b := cfg.Backends[0]
			if tt.wantCA == "" {
				if b.TLS != nil {
					t.Fatalf("backend TLS %+v, want none", b.TLS)
				}
				return
			}
			if b.TLS == nil || b.TLS.CAFile != tt.wantCA {
				t.Fatalf("backend TLS %+v, want CA file %s", b.TLS, tt.wantCA)
			}
			if strings.HasPrefix(tt.wantCA, "/") != (len(cfg.CAFiles) == 0) {
				t.Fatalf("CA files %v for CA %s", cfg.CAFiles, tt.wantCA)
			}
		})
	}
}

// TestWildcardCertificateSNI: a wildcard Route's certificate is served for "*.domain" only.
func TestWildcardCertificateSNI(t *testing.T) {
	r := tlsRoute("w", &routev1.TLSConfig{Termination: routev1.TLSTerminationEdge, Certificate: readCert(t, "example.crt"), Key: readCert(t, "example.key")})
	r.Spec.Host = "www.apps.example.com"
	r.Spec.WildcardPolicy = routev1.WildcardPolicySubdomain
	opts := testOptions()
	opts.AllowWildcardRoutes = true
	cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, opts)
	if len(problems) != 0 || len(cfg.Certificates) != 1 {
		t.Fatalf("problems %v certificates %v", problems, cfg.Certificates)
	}
	if sni := strings.Join(cfg.Certificates[0].SNI, ","); sni != "*.apps.example.com" {
		t.Fatalf("SNI %s, want *.apps.example.com", sni)
	}
}
