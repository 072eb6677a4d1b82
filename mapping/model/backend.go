package model

import (
	"fmt"
	"strings"
)

// BackendKind says which kind of Route a backend serves; it fixes the name prefix and the TLS handling.
type BackendKind string

// Backend kinds with OpenShift's name prefixes.
const (
	KindHTTP        BackendKind = "http"        // be_http:<ns>:<route>, termination none
	KindEdge        BackendKind = "edge"        // be_edge_http:<ns>:<route>
	KindReencrypt   BackendKind = "reencrypt"   // be_secure:<ns>:<route>
	KindPassthrough BackendKind = "passthrough" // be_tcp:<ns>:<route>
)

// Prefix returns the backend name prefix OpenShift uses for the kind.
func (k BackendKind) Prefix() string {
	switch k {
	case KindHTTP:
		return "be_http"
	case KindEdge:
		return "be_edge_http"
	case KindReencrypt:
		return "be_secure"
	case KindPassthrough:
		return "be_tcp"
	}
	return ""
}

// Mode returns the proxy mode of backends of the kind.
func (k BackendKind) Mode() Mode {
	if k == KindPassthrough {
		return ModeTCP
	}
	return ModeHTTP
}

// SpareNamespace stands in the namespace position of spare backend names. It cannot be a
// Kubernetes namespace (those are DNS-1123 labels), so spares never collide with Routes.
const SpareNamespace = "_spare"

// SpareBackendName returns the name of spare number i of the kind and balance algorithm, e.g.
// "be_http:_spare:random-03".
func SpareBackendName(k BackendKind, balance string, i int) string {
	return fmt.Sprintf("%s:%s:%s-%02d", k.Prefix(), SpareNamespace, balance, i)
}

// HandoverSuffix ends the name of the backend that serves a Route while HAProxy 3.4 recreates the
// Route's own backend from another profile (HandoverBackendName). Kubernetes names hold no '_', so
// no Route's backend name ends with it.
const HandoverSuffix = "_next"

// HandoverBackendName returns the name of the backend that stands in for backend name during a
// profile hand-over, e.g. "be_http:ns:route_next".
func HandoverBackendName(name string) string { return name + HandoverSuffix }

// IsHandover reports whether a backend name is a hand-over backend's (HandoverBackendName).
func IsHandover(name string) bool { return strings.HasSuffix(name, HandoverSuffix) }

// BackendName returns OpenShift's backend name, e.g. "be_http:ns:route".
func BackendName(k BackendKind, namespace, route string) string {
	return k.Prefix() + ":" + namespace + ":" + route
}

// Backend is one HAProxy backend serving one Route.
type Backend struct {
	Name string      `json:"name" yaml:"name"`
	Kind BackendKind `json:"kind" yaml:"kind"`
	Mode Mode        `json:"mode" yaml:"mode"`
	// Route names the Route ("<ns>/<name>") the backend serves; empty for a free spare or a retired
	// backend.
	Route string `json:"route" yaml:"route"`
	// Spare marks a backend of the spare pool (named by SpareBackendName): rendered empty with default
	// options so that a new Route can claim it at runtime through map updates. A claimed spare keeps
	// its name and gets Route set until the next reload renames it.
	Spare bool `json:"spare,omitempty" yaml:"spare,omitempty"`
	// Retired marks a backend whose Route went away at runtime: no map entry points to it and it has
	// no servers; the next reload drops it (HAProxy before 3.4 cannot delete a backend at runtime,
	// 3.4 does: see Removing).
	Retired bool `json:"retired,omitempty" yaml:"retired,omitempty"`
	// Removing marks a retired backend that HAProxy 3.4+ deletes at runtime: the plan after the one
	// that retired it unpublishes it, removes its servers and deletes it (`del backend`), and keeps
	// it, Removing, while HAProxy defers that (connections still attached). A Route that comes back
	// meanwhile gets it again, published anew.
	Removing bool `json:"removing,omitempty" yaml:"removing,omitempty"`
	// Balance is the load-balancing algorithm: roundrobin, leastconn, random or source. Every value
	// accepts servers added at runtime (source is rendered with hash-type consistent).
	Balance string `json:"balance" yaml:"balance"`
	// Cookie configures sticky sessions; nil means none.
	Cookie *Cookie `json:"cookie,omitempty" yaml:"cookie,omitempty"`
	// Timeouts override the defaults; empty fields keep them. Values carry HAProxy units ("30s").
	TimeoutServer string `json:"timeoutServer,omitempty" yaml:"timeoutServer,omitempty"`
	TimeoutTunnel string `json:"timeoutTunnel,omitempty" yaml:"timeoutTunnel,omitempty"`
	// CheckInterval is the health-check interval of every server ("5000ms").
	CheckInterval string `json:"checkInterval" yaml:"checkInterval"`
	// Allowlist holds source IPs and CIDRs allowed to reach the backend; empty means everyone.
	Allowlist []string `json:"allowlist,omitempty" yaml:"allowlist,omitempty"`
	// RateLimit limits connections and requests per source address; nil means none.
	RateLimit *RateLimit `json:"rateLimit,omitempty" yaml:"rateLimit,omitempty"`
	// ForwardedHeaders is append, replace, never or if-none (http modes only).
	ForwardedHeaders string `json:"forwardedHeaders,omitempty" yaml:"forwardedHeaders,omitempty"`
	// HSTS is the Strict-Transport-Security header value to set on responses (TLS routes only).
	HSTS string `json:"hsts,omitempty" yaml:"hsts,omitempty"`
	// RewriteTarget rewrites the Route's path prefix (PathPrefix) to Target.
	Rewrite *Rewrite `json:"rewrite,omitempty" yaml:"rewrite,omitempty"`
	// CaseAdjustServer sends the request headers of ROUTER_H1_CASE_ADJUST to this backend's HTTP/1
	// servers with their adjusted case (haproxy.router.openshift.io/h1-adjust-case).
	CaseAdjustServer bool `json:"caseAdjustServer,omitempty" yaml:"caseAdjustServer,omitempty"`
	// ServerMaxConn limits concurrent connections per server (0: no limit).
	ServerMaxConn int `json:"serverMaxConn,omitempty" yaml:"serverMaxConn,omitempty"`
	// TLS, for reencrypt backends, says how servers are verified.
	TLS *BackendTLS `json:"tls,omitempty" yaml:"tls,omitempty"`
	// RequestHeaders and ResponseHeaders are the Route's header actions (spec.httpHeaders.actions),
	// in order (http modes only; see HeaderRule).
	RequestHeaders  []HeaderRule `json:"requestHeaders,omitempty" yaml:"requestHeaders,omitempty"`
	ResponseHeaders []HeaderRule `json:"responseHeaders,omitempty" yaml:"responseHeaders,omitempty"`
	// Servers are sorted by Name.
	Servers []Server `json:"servers" yaml:"servers"`
}

// Cookie is a sticky-session cookie inserted by HAProxy, as OpenShift's router has it: on HAProxy
// 3.0 and later each server's value is ServerCookie of its name (on the server line, and in `add
// server`); before 3.0 the values are HAProxy's dynamic cookies (a hash of Key, the server's address
// and port), which servers added at runtime get too. Its Secure and SameSite attributes are not
// backend options: MapCookieSameSite holds them, so that they change at runtime.
//
// Name reaches HAProxy through MapCookieNames, not the backend's options: the backend's cookie
// line names CookieEngineName.
type Cookie struct {
	Name string `json:"name" yaml:"name"`
	// Key is the backend's dynamic-cookie-key (HAProxy before 3.0).
	Key string `json:"key" yaml:"key"`
}

// CookieEngineName is the name of the cookie HAProxy's cookie engine inserts and reads in every
// backend with a Cookie; the backend's rules rename it to and from the Route's own (MapCookieNames).
// A client never sees it, and a server never receives it.
const CookieEngineName = "haroute_sticky"

// RateLimit mirrors haproxy.router.openshift.io/rate-limit-connections.*; zero fields are off.
type RateLimit struct {
	ConcurrentTCP int `json:"concurrentTCP,omitempty" yaml:"concurrentTCP,omitempty"`
	RateTCP       int `json:"rateTCP,omitempty" yaml:"rateTCP,omitempty"`
	RateHTTP      int `json:"rateHTTP,omitempty" yaml:"rateHTTP,omitempty"`
}

// Rewrite replaces the leading Prefix of the request path with Target, as OpenShift's
// haproxy.router.openshift.io/rewrite-target does.
type Rewrite struct {
	// Prefix is the Route's path as written ("" for none).
	Prefix string `json:"prefix" yaml:"prefix"`
	// Target is the literal path put in Prefix's place (the annotation's escapes decoded).
	Target string `json:"target" yaml:"target"`
	// SlashOptional: a "/" right after Prefix is replaced too (OpenShift: the target is exactly "/").
	SlashOptional bool `json:"slashOptional,omitempty" yaml:"slashOptional,omitempty"`
	// DropRest: the rest of the request path is dropped (OpenShift: the annotation held a '#').
	DropRest bool `json:"dropRest,omitempty" yaml:"dropRest,omitempty"`
}

// BackendTLS describes TLS from HAProxy to the servers of a reencrypt backend.
type BackendTLS struct {
	// CAFile names the CA bundle (a CAFile name, or an absolute path for a configured default).
	CAFile string `json:"caFile" yaml:"caFile"`
}

// ServerState is the administrative state of a server.
type ServerState string

// Server states.
const (
	StateReady ServerState = "ready"
	StateDrain ServerState = "drain"
	StateMaint ServerState = "maint"
)

// Server is one endpoint of a backend.
type Server struct {
	// Name follows OpenShift: "pod:<pod>:<service>:<port-name>:<ip>:<port>".
	Name string `json:"name" yaml:"name"`
	// ID is HAProxy's server id (1–MaxServerID, unique in the backend), rendered and sent with
	// `add server` so that a runtime server and a rendered one are the same to HAProxy: the `random`
	// and consistent-hash balancers place a server by its id, and HAProxy 2.6 leaves a runtime server
	// without an explicit id out of those trees. ServerIDs assigns it from the name.
	ID int32 `json:"id" yaml:"id"`
	// Addr is an IPv4 or IPv6 address (without brackets).
	Addr string `json:"addr" yaml:"addr"`
	Port int32  `json:"port" yaml:"port"`
	// Weight is 0–256; 0 receives no traffic.
	Weight int32       `json:"weight" yaml:"weight"`
	State  ServerState `json:"state" yaml:"state"`
	// Service is the Service the endpoint belongs to ("<ns>/<svc>").
	Service string `json:"service" yaml:"service"`
	// VerifyHost, on reencrypt backends verified by the router's default destination CA, is the name
	// the server certificate must carry, "<service>.<namespace>.svc"; empty when the Route's own
	// destination CA verifies the chain alone (OpenShift's rule). No SNI is sent, as in OpenShift.
	VerifyHost string `json:"verifyHost,omitempty" yaml:"verifyHost,omitempty"`
	// HealthCheck says whether HAProxy health-checks the server. As in OpenShift, only the servers of
	// a backend with more than one active endpoint (of a Service with a non-zero weight) are
	// checked: a lone server is served whatever a check would say. Every server line configures
	// the check anyway, so that it can be turned on (enable health) and off (disable health) at
	// runtime; HAProxy starts every configured check, and haroute turns off the others right after
	// each start (plan.DormantChecks).
	HealthCheck bool `json:"healthCheck,omitempty" yaml:"healthCheck,omitempty"`
}
