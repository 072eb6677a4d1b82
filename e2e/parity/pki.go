package parity

import (
	"testing"

	"github.com/haroute/haroute/internal/testkit"
)

// PKI is the TLS material of a run, made afresh (certificates expire; their names, which the
// answers show, are fixed): the Routes' certificates, issued for their hosts by RouteCA, the routers'
// default certificate, and the pods' certificates, issued by BackendCA, which is also the routers'
// default destination CA (DEFAULT_DESTINATION_CA_PATH, as the ingress operator sets the service CA).
type PKI struct {
	RouteCA, DefaultCA, BackendCA *testkit.CA
	// Default is the default certificate and its key, one PEM (DEFAULT_CERTIFICATE_PATH).
	Default []byte
	t       testing.TB
	certs   map[string]keyPair
}

type keyPair struct{ cert, key []byte }

// The names the PKI's certificates carry.
const (
	routeCAName   = "parity route CA"
	defaultCAName = "parity default CA"
	backendCAName = "parity backend CA"
	// DefaultCertName is the common name of the routers' default certificate.
	DefaultCertName = "*.apps.parity.test"
)

// NewPKI makes the run's CAs and default certificate.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	p := &PKI{
		RouteCA:   testkit.NewCA(t, routeCAName),
		DefaultCA: testkit.NewCA(t, defaultCAName),
		BackendCA: testkit.NewCA(t, backendCAName),
		t:         t,
		certs:     map[string]keyPair{},
	}
	p.Default = p.DefaultCA.IssueBundle(t, DefaultCertName)
	return p
}

// Route returns the certificate and key of a Route's host (issued once per host by RouteCA).
func (p *PKI) Route(host string) (certPEM, keyPEM []byte) {
	return p.issue("route "+host, p.RouteCA, host)
}

// Backend returns the certificate and key a TLS pod serves, for dnsName (issued once by BackendCA).
func (p *PKI) Backend(dnsName string) (certPEM, keyPEM []byte) {
	return p.issue("backend "+dnsName, p.BackendCA, dnsName)
}

func (p *PKI) issue(key string, ca *testkit.CA, name string) ([]byte, []byte) {
	p.t.Helper()
	kp, ok := p.certs[key]
	if !ok {
		kp.cert, kp.key = ca.Issue(p.t, name)
		p.certs[key] = kp
	}
	return kp.cert, kp.key
}
