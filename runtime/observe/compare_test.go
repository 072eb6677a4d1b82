package observe

import (
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"reflect"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// appliedFixture is a small applied state with two backends, two maps, a certificate and a CA file.
func appliedFixture(t *testing.T) *model.Config {
	t.Helper()
	cert, key := selfSigned(t, "www.example.com")
	ca, _ := selfSigned(t, "ca.example.com")
	return &model.Config{
		Maps: []model.MapFile{
			{Name: model.MapHTTP, Entries: []model.MapEntry{
				{Key: "=www.example.com/api", Value: "be_http:ns:api"},
				{Key: "www.example.com/", Value: "be_http:ns:www"},
				{Key: "www.example.com/api/", Value: "be_http:ns:api"},
			}},
			{Name: model.MapWildcardDomain},
		},
		Backends: []*model.Backend{
			{Name: "be_http:ns:api", Servers: []model.Server{
				server("pod:a:svc:http:10.0.0.1:8080", 11, "10.0.0.1", 8080, 1, model.StateReady),
				server("pod:b:svc:http:10.0.0.2:8080", 12, "10.0.0.2", 8080, 2, model.StateReady),
			}},
			{Name: "be_secure:ns:www", TLS: &model.BackendTLS{CAFile: "ns:www.pem"}, Servers: []model.Server{
				server("pod:c:svc:http:fd00::3:8443", 13, "fd00::3", 8443, 1, model.StateDrain),
			}},
		},
		Certificates: []model.Certificate{
			{Name: "ns:www.pem", PEM: cert + key, SNI: []string{"www.example.com"}, ALPN: "h2,http/1.1"},
		},
		CAFiles: []model.CAFile{{Name: "ns:www.pem", PEM: ca}},
	}
}

func TestCompareEqualIsEmpty(t *testing.T) {
	a := appliedFixture(t)
	if d := Compare(a, a.Clone()); len(d) != 0 {
		t.Errorf("drift between equal states: %v", d)
	}
	if d := Compare(nil, nil); len(d) != 0 {
		t.Errorf("drift between nil states: %v", d)
	}
}

func TestCompareListsEveryDrift(t *testing.T) {
	a := appliedFixture(t)
	o := a.Clone()
	api := o.Backends[0]
	api.Servers[0].Weight = 7                                                               // weight
	api.Servers[1].State = model.StateMaint                                                 // state
	api.Servers = append(api.Servers, server("x", 19, "10.0.0.9", 80, 1, model.StateReady)) // extra
	o.Backends[1].Servers[0].Port = 9443                                                    // address
	api.Servers[1].ID = 99                                                                  // id
	o.Backends[1].Servers = append(o.Backends[1].Servers[:0:0], o.Backends[1].Servers...)
	m := &o.Maps[0]
	m.Entries = []model.MapEntry{
		{Key: "=www.example.com/api", Value: "be_http:ns:other"}, // value
		{Key: "new.example.com/", Value: "be_http:ns:new"},       // extra
		{Key: "www.example.com/", Value: "be_http:ns:www"},
		{Key: "www.example.com/", Value: "be_http:ns:dup"}, // duplicate
		// www.example.com/api/ missing
	}
	other, _ := selfSigned(t, "www.example.com")
	o.Certificates[0].PEM = certMarker(leafSHA1(other))
	o.Certificates[0].SNI = []string{"evil.example.com", "www.example.com"}
	o.Certificates = append(o.Certificates, model.Certificate{Name: "ns:gone.pem", PEM: certMarker(""), SNI: []string{"gone.example.com"}})
	o.CAFiles[0].PEM = caMarker(2)
	o.CAFiles = append(o.CAFiles, model.CAFile{Name: "ns:extra.pem", PEM: caMarker(1)})

	wantFP := leafSHA1(a.Certificates[0].PEM)
	want := []Drift{
		{Kind: CAFile, Subject: "ns:extra.pem", Got: "live CA file with 1 certificate(s)"},
		{Kind: CAFile, Subject: "ns:www.pem", Want: "CA file with 1 certificate(s)", Got: "live CA file with 2 certificate(s)"},
		{Kind: Certificate, Subject: "ns:www.pem", Want: "certificate sha1 " + wantFP, Got: "live certificate sha1 " + leafSHA1(other)},
		{Kind: CrtList, Subject: "ns:gone.pem", Got: "gone.example.com"},
		{Kind: CrtList, Subject: "ns:www.pem", Want: "[alpn h2,http/1.1] www.example.com", Got: "[alpn h2,http/1.1] evil.example.com www.example.com"},
		{Kind: ExtraMapEntry, Subject: "os_http_be.map new.example.com/", Got: "be_http:ns:new"},
		{Kind: ExtraMapEntry, Subject: "os_http_be.map www.example.com/", Want: "be_http:ns:www", Got: "be_http:ns:dup"},
		{Kind: ExtraServer, Subject: "be_http:ns:api/x", Got: "10.0.0.9:80"},
		{Kind: MapValue, Subject: "os_http_be.map =www.example.com/api", Want: "be_http:ns:api", Got: "be_http:ns:other"},
		{Kind: MissingMapEntry, Subject: "os_http_be.map www.example.com/api/", Want: "be_http:ns:api"},
		{Kind: ServerAddr, Subject: "be_secure:ns:www/pod:c:svc:http:fd00::3:8443", Want: "[fd00::3]:8443", Got: "[fd00::3]:9443"},
		{Kind: ServerID, Subject: "be_http:ns:api/pod:b:svc:http:10.0.0.2:8080", Want: "12", Got: "99"},
		{Kind: ServerState, Subject: "be_http:ns:api/pod:b:svc:http:10.0.0.2:8080", Want: "ready", Got: "maint"},
		{Kind: ServerWeight, Subject: "be_http:ns:api/pod:a:svc:http:10.0.0.1:8080", Want: "1", Got: "7"},
	}
	got := Compare(a, o)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Compare:\n%s\nwant:\n%s", lines(got), lines(want))
	}
	// The reverse direction sees the mirror image: missing where extra was, and so on.
	rev := Compare(o, a)
	kinds := map[DriftKind]int{}
	for _, d := range rev {
		kinds[d.Kind]++
	}
	if kinds[MissingServer] != 1 || kinds[ExtraServer] != 0 || kinds[MissingMapEntry] != 1 || kinds[ExtraMapEntry] != 1 {
		t.Errorf("reverse Compare:\n%s", lines(rev))
	}
	// Compare leaves its arguments alone and is deterministic.
	if again := Compare(a, o); !reflect.DeepEqual(again, got) {
		t.Errorf("second Compare differs")
	}
	if a.Backends[0].Servers[0].Weight != 1 || len(a.Maps[0].Entries) != 3 {
		t.Errorf("Compare or Clone changed applied")
	}
}

func TestCompareMissingServerAndBackend(t *testing.T) {
	a := appliedFixture(t)
	o := a.Clone()
	o.Backends[0].Servers = o.Backends[0].Servers[:1]
	o.Backends = o.Backends[:1]
	got := Compare(a, o)
	want := []Drift{
		{Kind: MissingServer, Subject: "be_http:ns:api/pod:b:svc:http:10.0.0.2:8080", Want: "10.0.0.2:8080"},
		{Kind: MissingServer, Subject: "be_secure:ns:www/pod:c:svc:http:fd00::3:8443", Want: "[fd00::3]:8443"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Compare:\n%s\nwant:\n%s", lines(got), lines(want))
	}
}

func TestLeafSHA1(t *testing.T) {
	cert, key := selfSigned(t, "a.example.com")
	b, _ := pem.Decode([]byte(cert))
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(c.Raw)
	want := strings.ToUpper(hex.EncodeToString(sum[:]))
	// The key first, then the certificate and a second one: the first certificate counts.
	second, _ := selfSigned(t, "b.example.com")
	if got := leafSHA1(key + cert + second); got != want {
		t.Errorf("leafSHA1 = %s, want %s", got, want)
	}
	if got := leafSHA1(key); got != "" {
		t.Errorf("leafSHA1 of a key = %q", got)
	}
	if n := countCertificates(key + cert + second); n != 2 {
		t.Errorf("countCertificates = %d, want 2", n)
	}
	colons := strings.ToLower(want[:2]) + ":" + strings.ToLower(want[2:])
	if normalizeFingerprint(colons) != want {
		t.Errorf("normalizeFingerprint(%q) = %q", colons, normalizeFingerprint(colons))
	}
}

func lines(ds []Drift) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}
