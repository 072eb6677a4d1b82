package model

// Config is the complete desired state of one HAProxy instance.
type Config struct {
	// Settings are the router-wide settings (OpenShift ROUTER_* equivalents) the state was built with.
	Settings Settings `json:"settings" yaml:"settings"`
	// Frontends are the listeners, in rendering order.
	Frontends []Frontend `json:"frontends" yaml:"frontends"`
	// Maps are the lookup tables the frontends consult, sorted by Name.
	Maps []MapFile `json:"maps" yaml:"maps"`
	// Backends are sorted by Name. A Config and what it points to are read-only once built: states
	// that follow one another share the backends that did not change (the very pointers), which is
	// how the planner and the renderer skip them at once.
	Backends []*Backend `json:"backends" yaml:"backends"`
	// Certificates are the TLS certificates served by the TLS-terminating frontends, sorted by Name.
	Certificates []Certificate `json:"certificates,omitempty" yaml:"certificates,omitempty"`
	// CAFiles are CA bundles used to verify re-encrypted backends, sorted by Name.
	CAFiles []CAFile `json:"caFiles,omitempty" yaml:"caFiles,omitempty"`
	// Routes records, per admitted Route, which backend, map entries and certificate it produced.
	// It is bookkeeping for `explain` and status; it does not change what is rendered.
	Routes []RouteInfo `json:"routes,omitempty" yaml:"routes,omitempty"`
	// Listener holds the router-wide TLS files of the terminating listeners (default certificate,
	// client CA and CRLs), which change at runtime.
	Listener ListenerFiles `json:"listener,omitzero" yaml:"listener,omitempty"`
}

// Frontend is one listener of the fixed OpenShift layout.
type Frontend struct {
	// Name is public, public_ssl, fe_sni or fe_no_sni.
	Name string `json:"name" yaml:"name"`
	// Mode is http or tcp.
	Mode Mode `json:"mode" yaml:"mode"`
	// Bind is the listening address: ":80", "127.0.0.1:8080", or "unix@<relative socket path>";
	// empty when the frontend listens on IPv6 only.
	Bind string `json:"bind" yaml:"bind"`
	// BindV6 is the address of an IPv6-only listener (HAProxy's v6only), e.g. ":::80"; empty for
	// none.
	BindV6 string `json:"bindV6,omitempty" yaml:"bindV6,omitempty"`
}

// Mode is an HAProxy proxy mode.
type Mode string

// Proxy modes.
const (
	ModeHTTP Mode = "http"
	ModeTCP  Mode = "tcp"
)

// Well-known frontend, backend and map names (OpenShift's).
const (
	FrontendPublic    = "public"
	FrontendPublicSSL = "public_ssl"
	FrontendSNI       = "fe_sni"
	FrontendNoSNI     = "fe_no_sni"

	// DefaultBackend answers 503 when no Route matches.
	DefaultBackend = "openshift_default"
	// SNIBackend and NoSNIBackend hand TLS connections from public_ssl to fe_sni / fe_no_sni.
	SNIBackend   = "be_sni"
	NoSNIBackend = "be_no_sni"

	// MapHTTP maps plain-HTTP requests (host+path) to backends.
	MapHTTP = "os_http_be.map"
	// MapEdgeReencrypt maps TLS-terminated requests (host+path) to edge and reencrypt backends.
	MapEdgeReencrypt = "os_edge_reencrypt_be.map"
	// MapHTTPRedirect maps the host+path keys of every Route to "1" when its plain-HTTP requests are
	// redirected to https, "0" otherwise: the most specific Route of a request decides, before and
	// whatever the backend lookup in MapHTTP, as in OpenShift.
	MapHTTPRedirect = "os_route_http_redirect.map"
	// MapTCP maps an SNI host name to a passthrough backend (or to be_sni for a terminated host that
	// would otherwise fall under a wildcard passthrough Route).
	MapTCP = "os_tcp_be.map"
	// MapWildcardDomain lists the "*.domain" keys that have at least one wildcard Route, so that
	// frontends only do wildcard lookups where one can match.
	MapWildcardDomain = "os_wildcard_domain.map"
	// MapForwardedHeaders maps a backend to its forwarded-headers policy (replace, never or if-none)
	// where that differs from the settings' default. The HTTP frontends apply the policy once for
	// every Route, instead of a copy of the header rules in each backend (which cost HAProxy about
	// 9 kB per backend), and a Route's policy changes at runtime with a map entry.
	MapForwardedHeaders = "haroute_forwarded.map"
	// MapCookieSameSite maps the backend of an edge or reencrypt Route whose insecure policy is not
	// Allow to the SameSite value of its sticky-session cookie (Lax, Strict or None): the backend adds
	// "; Secure; SameSite=<value>" to the cookie HAProxy inserts, as OpenShift's router has it. A
	// Route's policy or cookie-same-site annotation then changes at runtime with a map entry.
	MapCookieSameSite = "haroute_cookie.map"
	// MapCookieNames maps every backend with a sticky-session cookie to the cookie's name (the
	// Route's cookie_name annotation, ROUTER_COOKIE_NAME, or DefaultCookieName of the Route's own
	// backend). HAProxy's cookie engine runs under the fixed name CookieEngineName and the backend
	// renames the cookie both ways, so that a spare serves a new Route under that Route's cookie name
	// from its first request, and a Route's cookie name changes at runtime with a map entry.
	MapCookieNames = "haroute_cookie_names.map"
	// MapHeaderValues holds the literal values of the Routes' header actions (HeaderRule.Key →
	// the value, URL-encoded: MappedHeaderValue), so that a Route's header value changes at runtime
	// with a map entry.
	MapHeaderValues = "haroute_header_values.map"
	// MapTimeoutServer and MapTimeoutTunnel map the backend of an HTTP Route with a timeout or
	// timeout-tunnel annotation to that timeout in milliseconds (TimeoutMillis): the HTTP profiles
	// set the request's timeout from them (http-request set-timeout), so that the annotations change
	// at runtime with a map entry, and a backend with them is added at runtime on HAProxy 3.4. A
	// passthrough Route's timeouts stay lines of its backend (set-timeout is HTTP only).
	MapTimeoutServer = "haroute_timeout_server.map"
	MapTimeoutTunnel = "haroute_timeout_tunnel.map"
	// MapHSTS maps the backend of a Route with an hsts_header annotation to the header's value,
	// encoded as MappedHeaderValue: the HTTP profiles set Strict-Transport-Security from it on
	// responses to TLS requests, so that the annotation changes at runtime.
	MapHSTS = "haroute_hsts.map"
	// CertList is the crt-list of the TLS-terminating frontends.
	CertList = "cert_config.map"
)

// MapFile is one HAProxy map file with its entries in rendering order (sorted by Key).
//
// Keys follow haroute's order-independent scheme (see docs/matching.md): for host+path maps an exact
// key is "=" + host + path and a prefix key is host + path ending in "/"; wildcard Routes use "*." +
// domain in place of the host. Lookups are exact (map_str) then longest-prefix (map_beg), so the result
// never depends on entry order.
type MapFile struct {
	Name    string     `json:"name" yaml:"name"`
	Entries []MapEntry `json:"entries" yaml:"entries"`
}

// MapEntry is one line of a map file. Neither field may contain whitespace.
type MapEntry struct {
	Key   string `json:"key" yaml:"key"`
	Value string `json:"value" yaml:"value"`
}

// Certificate is a PEM bundle (certificate, chain, private key) served for the given SNI host names.
type Certificate struct {
	// Name is the file base name under certs/, e.g. "ns:route.pem".
	Name string `json:"name" yaml:"name"`
	// PEM holds certificate, intermediates and key, without blank lines.
	PEM string `json:"pem" yaml:"pem"`
	// SNI are the host names (or "*.domain") the certificate is served for, sorted.
	SNI []string `json:"sni" yaml:"sni"`
	// ALPN is the ALPN list advertised with this certificate, e.g. "h2,http/1.1"; empty for the default.
	ALPN string `json:"alpn,omitempty" yaml:"alpn,omitempty"`
}

// CAFile is a PEM bundle of CA certificates, stored under cacerts/.
type CAFile struct {
	Name string `json:"name" yaml:"name"`
	PEM  string `json:"pem" yaml:"pem"`
}

// RouteInfo records what one admitted Route produced.
type RouteInfo struct {
	// Namespace and Name identify the Route.
	Namespace string `json:"namespace" yaml:"namespace"`
	Name      string `json:"name" yaml:"name"`
	// Host is the effective host ("*.domain" for a wildcard Route); Path may be empty.
	Host string `json:"host" yaml:"host"`
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Termination is "", edge, passthrough or reencrypt; InsecurePolicy is "", None, Allow or Redirect.
	Termination    string `json:"termination,omitempty" yaml:"termination,omitempty"`
	InsecurePolicy string `json:"insecurePolicy,omitempty" yaml:"insecurePolicy,omitempty"`
	// Backend is the backend serving the Route.
	Backend string `json:"backend" yaml:"backend"`
	// Certificate names the Route's own certificate, if any.
	Certificate string `json:"certificate,omitempty" yaml:"certificate,omitempty"`
}
