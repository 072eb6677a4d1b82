package oracle

import (
	"fmt"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
)

// Namespaces of the walk: two, so that hosts are now and then claimed across namespaces.
var walkNamespaces = []string{"ns-a", "ns-b"}

// defaultCertName is the only name on the router's default certificate.
const defaultCertName = "default.router.test"

// Bed is what the tests share: the CAs, the router's default certificate and the loopback backends
// (started once per test, each answering with its own name).
type Bed struct {
	// RouterCA signs the default certificate and the Routes' certificates; ServiceCA the TLS
	// backends' certificate (the reencrypt Routes' destination CA).
	RouterCA, ServiceCA *testkit.CA
	DefaultCertPEM      []byte
	Backends            map[string]*testkit.Backend
	Addrs               []Addr
}

// NewBed starts nHTTP plain HTTP backends ("h00"...) on 127.0.0.2-31 and nTLS TLS backends
// ("t00"...) on 127.0.1.2-31. The TLS backends share one certificate for "*.<ns>.svc" of every walk
// namespace (what reencrypt Routes verify) and the walk's host domains (what passthrough clients
// see).
func NewBed(t testing.TB, nHTTP, nTLS int) *Bed {
	t.Helper()
	b := &Bed{
		RouterCA:  testkit.NewCA(t, "oracle router CA"),
		ServiceCA: testkit.NewCA(t, "oracle service CA"),
		Backends:  map[string]*testkit.Backend{},
	}
	b.DefaultCertPEM = b.RouterCA.IssueBundle(t, defaultCertName)
	names := []string{"*." + appsDomain}
	for i := 0; i < wildcardDomains; i++ {
		names = append(names, fmt.Sprintf("*.w%d.%s", i, appsDomain))
	}
	for _, ns := range walkNamespaces {
		names = append(names, "*."+ns+".svc")
	}
	certPEM, keyPEM := b.ServiceCA.Issue(t, names...)
	for i := 0; i < nHTTP; i++ {
		be := testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.0.%d", 2+i%30), fmt.Sprintf("h%02d", i))
		b.add(be)
	}
	for i := 0; i < nTLS; i++ {
		be := testkit.StartTLSBackend(t, fmt.Sprintf("127.0.1.%d", 2+i%30), fmt.Sprintf("t%02d", i), certPEM, keyPEM)
		b.add(be)
	}
	return b
}

func (b *Bed) add(be *testkit.Backend) {
	b.Backends[be.Name] = be
	b.Addrs = append(b.Addrs, Addr{Name: be.Name, IP: be.IP, Port: be.Port, TLS: be.TLS})
}

// Issuer returns a certificate issuer for the walk: the router CA issues Route certificates.
func (b *Bed) Issuer(t testing.TB) func(names ...string) ([]byte, []byte) {
	return func(names ...string) ([]byte, []byte) {
		return b.RouterCA.Issue(t, names...)
	}
}

// WalkOptionsFor returns the oracle walk's options for a router configured with opts.
func WalkOptionsFor(opts mapping.Options, issue func(names ...string) ([]byte, []byte)) WalkOptions {
	return WalkOptions{
		Weights:           Weights(),
		Namespaces:        walkNamespaces,
		MaxRoutes:         25,
		MinRoutes:         3,
		MaxEndpoints:      6,
		DefaultBalance:    opts.LoadBalanceAlgorithm,
		DefaultTCPBalance: opts.TCPBalanceScheme,
		IssueCert:         issue,
	}
}

// SeedRoutes adds the walk's first Routes: two http Routes overlapping on one host, an edge Route
// redirecting plain http, a passthrough Route, a reencrypt Route allowing plain http and a wildcard
// edge Route on the default certificate.
func SeedRoutes(wk *Walker) error {
	for _, spec := range []RouteSpec{
		{Namespace: "ns-a", Name: "web", Host: "h0." + appsDomain, Kind: KindHTTP, Endpoints: []int{2}},
		{Namespace: "ns-a", Name: "api", Host: "h0." + appsDomain, Path: "/api", Kind: KindHTTP, Endpoints: []int{1}},
		{Namespace: "ns-a", Name: "shop", Host: "h1." + appsDomain, Kind: KindEdge, Insecure: "Redirect", OwnCert: true, Endpoints: []int{2}},
		{Namespace: "ns-b", Name: "pass", Host: "h2." + appsDomain, Kind: KindPassthrough, Endpoints: []int{2}},
		{Namespace: "ns-b", Name: "secure", Host: "h3." + appsDomain, Kind: KindReencrypt, Insecure: "Allow", OwnCert: true, Endpoints: []int{1}},
		{Namespace: "ns-b", Name: "wild", Host: "*.w0." + appsDomain, Wildcard: true, Kind: KindEdge, Endpoints: []int{1}},
	} {
		if _, err := wk.AddRoute(spec); err != nil {
			return err
		}
	}
	return nil
}

// AddStableRoutes adds the churn test's stable Routes (hosts "stable-N.apps.test", which the walk's
// host pools never produce) and returns their keys: two http Routes overlapping on one host, an
// edge Route that also allows plain http, a reencrypt Route and a passthrough Route.
func AddStableRoutes(wk *Walker) ([]string, error) {
	var keys []string
	for _, spec := range []RouteSpec{
		{Namespace: "ns-a", Name: "stable-web", Host: "stable-0." + appsDomain, Kind: KindHTTP, Endpoints: []int{2}},
		{Namespace: "ns-a", Name: "stable-api", Host: "stable-0." + appsDomain, Path: "/api", Kind: KindHTTP, Endpoints: []int{2}},
		{Namespace: "ns-b", Name: "stable-edge", Host: "stable-1." + appsDomain, Kind: KindEdge, Insecure: "Allow", OwnCert: true, Endpoints: []int{2}},
		{Namespace: "ns-b", Name: "stable-secure", Host: "stable-2." + appsDomain, Kind: KindReencrypt, OwnCert: true, Endpoints: []int{2}},
		{Namespace: "ns-a", Name: "stable-pass", Host: "stable-3." + appsDomain, Kind: KindPassthrough, Endpoints: []int{2}},
	} {
		spec.Stable = true
		r, err := wk.AddRoute(spec)
		if err != nil {
			return nil, err
		}
		keys = append(keys, r.Key())
	}
	return keys, nil
}
