package parity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
)

// Namespace is the corpus's namespace; OtherNamespace holds the Routes that claim its hosts from
// elsewhere.
const (
	Namespace      = "parity"
	OtherNamespace = "parity-b"
)

// PodPort is the port every pod listens on, and PortName the name of the Services' and endpoints'
// one port; ServicePort is the Services' own port number.
const (
	PodPort     = 8080
	PortName    = "http"
	ServicePort = 80
)

// Pod is a backend of the corpus: an echo server (testkit.EchoHandler), over TLS with a certificate
// for CertName when that is set.
type Pod struct {
	Name     string
	CertName string `json:",omitempty"`
}

// Service is a Service of the corpus with the pods its EndpointSlice lists.
type Service struct {
	Namespace, Name string
	Pods            []string          `json:",omitempty"`
	Annotations     map[string]string `json:",omitempty"`
	// ClusterIP is the Service's cluster IP when it needs one (an idled Service: the stock router
	// then sends traffic there); the others are headless.
	ClusterIP string `json:",omitempty"`
}

// Backend is a Service of a Route and its weight (nil: the API server's default, 100).
type Backend struct {
	Service string
	Weight  *int32 `json:",omitempty"`
}

// TLS is a Route's spec.tls, with certificates named rather than given (the PKI issues them).
type TLS struct {
	Termination string
	Insecure    string `json:",omitempty"`
	// OwnCert gives the Route a certificate for its host, issued by the route CA; CAChain adds the
	// route CA as spec.tls.caCertificate.
	OwnCert, CAChain bool `json:",omitempty"`
	// DestCA sets spec.tls.destinationCACertificate to the backend CA.
	DestCA bool `json:",omitempty"`
	// External names the TLS Secret of spec.tls.externalCertificate.
	External string `json:",omitempty"`
}

// Route is a Route of the corpus.
type Route struct {
	Namespace, Name string
	Host            string `json:",omitempty"`
	Subdomain       string `json:",omitempty"`
	Path            string `json:",omitempty"`
	To              Backend
	Alternates      []Backend `json:",omitempty"`
	// TargetPort is spec.port.targetPort: nil means PortName; NoPort leaves spec.port out.
	TargetPort *TargetPort         `json:",omitempty"`
	TLS        *TLS                `json:",omitempty"`
	Wildcard   bool                `json:",omitempty"`
	Annotate   map[string]string   `json:",omitempty"`
	Headers    *HeaderActions      `json:",omitempty"`
	Secret     *ExternalCertSecret `json:",omitempty"`
}

// TargetPort is a Route's spec.port.targetPort: a name or a number; None leaves spec.port out.
type TargetPort struct {
	Name   string `json:",omitempty"`
	Number int32  `json:",omitempty"`
	None   bool   `json:",omitempty"`
}

// HeaderActions are a Route's spec.httpHeaders.actions: name → value to set, names to delete.
type HeaderActions struct {
	Request, Response []HeaderAction `json:",omitempty"`
}

// HeaderAction sets Name to Value, or deletes it when Delete is set.
type HeaderAction struct {
	Name, Value string
	Delete      bool `json:",omitempty"`
}

// ExternalCertSecret is a TLS Secret of the Route's namespace holding the certificate for Host.
// Granted gives OpenShift's router service account (system:serviceaccount:openshift-ingress:router)
// the right to read it, as the Route's author must for the stock router to use it: a Role and a
// RoleBinding, which only the API server has (the replay's manifests need none).
type ExternalCertSecret struct {
	Name, Host string
	Granted    bool `json:",omitempty"`
}

// Group is a part of the corpus: its Services, Routes and requests.
type Group struct {
	Name     string
	Services []Service
	Routes   []Route
	Requests []Request
}

// Corpus is what both routers are given and asked: pods, Services and Routes, and the requests.
type Corpus struct {
	Pods   []Pod
	Groups []Group
}

// Requests returns every request, group by group, in order.
func (c *Corpus) Requests() []Request {
	var out []Request
	for _, g := range c.Groups {
		out = append(out, g.Requests...)
	}
	return out
}

// Services returns every Service, sorted by namespace and name.
func (c *Corpus) Services() []Service {
	var out []Service
	for _, g := range c.Groups {
		out = append(out, g.Services...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Routes returns every Route, in corpus order (the order they are created in, oldest first).
func (c *Corpus) Routes() []Route {
	var out []Route
	for _, g := range c.Groups {
		out = append(out, g.Routes...)
	}
	return out
}

// Digest is a hash of the corpus: a recording answers the corpus whose digest it names.
func (c *Corpus) Digest() string {
	b, err := json.Marshal(c)
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Check returns an error when request IDs repeat, a session's SamePodAs names a request not before
// it, or a name of the corpus (pod, Service, Route) repeats.
func (c *Corpus) Check() error {
	seen := map[string]bool{}
	for _, r := range c.Requests() {
		if seen[r.ID] {
			return fmt.Errorf("corpus: request %s twice", r.ID)
		}
		if r.SamePodAs != "" && !seen[r.SamePodAs] {
			return fmt.Errorf("corpus: request %s: SamePodAs %s is not an earlier request", r.ID, r.SamePodAs)
		}
		seen[r.ID] = true
	}
	names := map[string]bool{}
	for _, p := range c.Pods {
		if names["pod "+p.Name] {
			return fmt.Errorf("corpus: pod %s twice", p.Name)
		}
		names["pod "+p.Name] = true
	}
	for _, s := range c.Services() {
		k := "service " + s.Namespace + "/" + s.Name
		if names[k] {
			return fmt.Errorf("corpus: %s twice", k)
		}
		names[k] = true
		for _, p := range s.Pods {
			if !names["pod "+p] {
				return fmt.Errorf("corpus: %s lists the unknown pod %s", k, p)
			}
		}
	}
	for _, r := range c.Routes() {
		k := "route " + r.Namespace + "/" + r.Name
		if names[k] {
			return fmt.Errorf("corpus: %s twice", k)
		}
		names[k] = true
	}
	return nil
}

// EndpointsAt returns the corpus's endpoints with the pods at addrs (pod name → address).
func (c *Corpus) EndpointsAt(addrs map[string]netip.AddrPort) (Endpoints, error) {
	var out Endpoints
	for _, s := range c.Services() {
		for _, p := range s.Pods {
			a, ok := addrs[p]
			if !ok {
				return nil, fmt.Errorf("corpus: no address for pod %s", p)
			}
			out = append(out, Endpoint{Pod: p, Service: s.Name, PortName: PortName, Addr: a})
		}
	}
	return out, nil
}
