package mapping

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/haroute/haroute/mapping/model"
)

// Options are the router-wide settings Translate works with. Field comments name the OpenShift
// environment variable of the same meaning; FromEnv reads them.
type Options struct {
	RouterName           string         // ROUTER_SERVICE_NAME, or haroute's ROUTER_NAME
	RouterNamespace      string         // ROUTER_SERVICE_NAMESPACE (required with ROUTER_SERVICE_NAME)
	HTTPPort             int            // ROUTER_SERVICE_HTTP_PORT
	HTTPSPort            int            // ROUTER_SERVICE_HTTPS_PORT
	BindAddress          string         // ROUTER_BIND_ADDRESS (haroute's; empty: all addresses)
	MaxConnections       int            // ROUTER_MAX_CONNECTIONS; 0 ("auto"): HAProxy sizes it from its fd limit
	Threads              int            // ROUTER_THREADS
	LoadBalanceAlgorithm string         // ROUTER_LOAD_BALANCE_ALGORITHM
	TCPBalanceScheme     string         // ROUTER_TCP_BALANCE_SCHEME
	Timeouts             model.Timeouts // ROUTER_DEFAULT_*_TIMEOUT, ROUTER_*_FIN_TIMEOUT, ROUTER_SLOWLORIS_*, ROUTER_INSPECT_DELAY
	CheckInterval        string         // ROUTER_BACKEND_CHECK_INTERVAL
	ForwardedHeaders     string         // ROUTER_SET_FORWARDED_HEADERS
	BufSize              int            // ROUTER_BUF_SIZE
	HardStopAfter        string         // ROUTER_HARD_STOP_AFTER
	MaxWorkerReloads     int            // HAROUTE_MAX_WORKER_RELOADS: mworker-max-reloads
	SparePoolSize        int            // HAROUTE_SPARE_BACKENDS: spare backends per kind and balance variant
	CookieName           string         // ROUTER_COOKIE_NAME: the sticky cookie of Routes without cookie_name; empty: per Route

	// AccessLog is the syslog access log (ROUTER_SYSLOG_ADDRESS, ROUTER_LOG_MAX_LENGTH,
	// ROUTER_LOG_FACILITY, ROUTER_LOG_LEVEL, ROUTER_SYSLOG_FORMAT, ROUTER_DONT_LOG_NULL,
	// ROUTER_CAPTURE_HTTP_REQUEST_HEADERS, ROUTER_CAPTURE_HTTP_RESPONSE_HEADERS,
	// ROUTER_CAPTURE_HTTP_COOKIE). The zero value, OpenShift's default, logs nothing; DefaultAccessLog
	// gives the defaults for an address.
	AccessLog model.AccessLog

	// TLS is the TLS profile of the terminating listeners (SSL_MIN_VERSION, SSL_MAX_VERSION,
	// ROUTER_CIPHERS, ROUTER_CIPHERSUITES, ROUTER_CURVES); see routerOptionsFromEnv.
	TLS model.TLSProfile

	// HTTP holds the router-wide HTTP and listener options of the IngressController (compression,
	// header actions, unique IDs, PROXY protocol, address family, ...); see routerOptionsFromEnv.
	HTTP model.HTTPOptions

	// ClientTLS is mutual TLS on the terminating listeners (ROUTER_MUTUAL_TLS_AUTH,
	// ROUTER_MUTUAL_TLS_AUTH_FILTER); the CA bundle and CRLs come with the input (Input.Listener).
	ClientTLS model.ClientTLS

	// RouteLabels and NamespaceLabels shard Routes (ROUTE_LABELS, NAMESPACE_LABELS); nil selects all.
	// ProjectLabels (PROJECT_LABELS) selects namespaces too: OpenShift's projects are namespaces with
	// the same labels. RouteFields (ROUTE_FIELDS) selects Routes by RouteFieldNames.
	RouteLabels     labels.Selector
	NamespaceLabels labels.Selector
	ProjectLabels   labels.Selector
	RouteFields     fields.Selector

	// ExternalCertificates: spec.tls.externalCertificate names the Secret of a Route's certificate
	// (ROUTER_ENABLE_EXTERNAL_CERTIFICATE, default true). Without, the field is ignored and such a
	// Route is served with the default certificate, as OpenShift does.
	ExternalCertificates bool

	AllowWildcardRoutes            bool     // ROUTER_ALLOW_WILDCARD_ROUTES
	DisableNamespaceOwnershipCheck bool     // ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK
	Subdomain                      string   // ROUTER_SUBDOMAIN, e.g. "${name}-${namespace}.apps.example.com"
	OverrideHostname               bool     // ROUTER_OVERRIDE_HOSTNAME: ROUTER_SUBDOMAIN replaces every spec.host
	OverrideDomains                []string // ROUTER_OVERRIDE_DOMAINS: ROUTER_SUBDOMAIN replaces the hosts under these
	Domain                         string   // ROUTER_DOMAIN: spec.subdomain's parent, e.g. "apps.example.com"
	AllowedDomains                 []string // ROUTER_ALLOWED_DOMAINS (comma-separated)
	DeniedDomains                  []string // ROUTER_DENIED_DOMAINS (comma-separated)

	// DefaultDestinationCAFile is the absolute path of the CA bundle that verifies reencrypt backends
	// of Routes without spec.tls.destinationCACertificate (DEFAULT_DESTINATION_CA_PATH). When empty,
	// such Routes are rejected rather than served unverified.
	DefaultDestinationCAFile string

	// AllowLoopbackEndpoints admits endpoint addresses on loopback (folder mode and the demo only; in a
	// cluster a hand-made EndpointSlice could otherwise expose the router's own sockets).
	AllowLoopbackEndpoints bool

	// RouterAddresses are the router pod's own addresses and its node's (HAROUTE_POD_IPS,
	// HAROUTE_HOST_IPS: comma-separated, from the downward API's status.podIPs and status.hostIP). An
	// endpoint on one of them is refused: it would publish the router's own listeners (stats,
	// metrics, the probes) or the node's through a Route.
	RouterAddresses []netip.Addr

	// TrustCrossNamespaceEndpoints admits endpoints of a hand-made EndpointSlice (one the
	// EndpointSlice controller does not manage) whose targetRef names a pod of another namespace
	// (HAROUTE_TRUST_CROSS_NAMESPACE_ENDPOINTS). By default they are refused: a tenant could route its
	// hostname to another tenant's pods.
	TrustCrossNamespaceEndpoints bool
}

// DefaultOptions returns OpenShift's defaults.
func DefaultOptions() Options {
	return Options{
		RouterName:           "default",
		HTTPPort:             80,
		HTTPSPort:            443,
		MaxConnections:       50000,
		LoadBalanceAlgorithm: "random",
		TCPBalanceScheme:     "source",
		Timeouts: model.Timeouts{
			Connect:       "5s",
			Client:        "30s",
			ClientFin:     "1s",
			Server:        "30s",
			ServerFin:     "1s",
			HTTPRequest:   "10s",
			HTTPKeepAlive: "300s",
			Tunnel:        "1h",
			InspectDelay:  "5s",
		},
		CheckInterval:        "5000ms",
		ForwardedHeaders:     "append",
		BufSize:              32768,
		SparePoolSize:        10,
		MaxWorkerReloads:     model.DefaultMaxWorkerReloads,
		ExternalCertificates: true,
		TLS:                  DefaultTLSProfile(),
		HTTP:                 model.HTTPOptions{MaxRewrite: 8192, StripClientSSLHeaders: true, IPMode: model.IPModeV4},
	}
}

// FromEnv returns DefaultOptions overridden by the OpenShift environment variables that getenv reports
// (pass os.Getenv, or a map lookup in tests). Every malformed value is reported; none is ignored.
func FromEnv(getenv func(string) string) (Options, error) {
	o := DefaultOptions()
	var errs []error
	str := func(name string, dst *string) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			*dst = v
		}
	}
	integer := func(name string, dst *int, lo, hi int) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer in %d-%d", name, v, lo, hi))
			return
		}
		*dst = n
	}
	boolean := func(name string, dst *bool) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", name, v))
			return
		}
		*dst = b
	}
	duration := func(name string, dst *string) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		d, ok := ParseTimeout(v)
		if !ok {
			errs = append(errs, fmt.Errorf("%s=%q: want a duration such as 5000ms, 30s, 1h", name, v))
			return
		}
		*dst = d
	}
	selector := func(name string, dst *labels.Selector) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		s, err := labels.Parse(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, v, err))
			return
		}
		*dst = s
	}
	list := func(name string, dst *[]string) {
		for _, d := range strings.Split(getenv(name), ",") {
			if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
				*dst = append(*dst, d)
			}
		}
	}

	str("ROUTER_NAME", &o.RouterName)
	// OpenShift's name for the router's name in Route status; it needs the router's namespace, as in
	// OpenShift. haroute's older ROUTER_NAME means the same: both set must agree.
	if name := strings.TrimSpace(getenv("ROUTER_SERVICE_NAME")); name != "" {
		ns := strings.TrimSpace(getenv("ROUTER_SERVICE_NAMESPACE"))
		legacy := strings.TrimSpace(getenv("ROUTER_NAME"))
		switch {
		case ns == "":
			errs = append(errs, fmt.Errorf("ROUTER_SERVICE_NAME=%q: ROUTER_SERVICE_NAMESPACE is required with it", name))
		case len(validation.IsDNS1123Label(ns)) > 0:
			errs = append(errs, fmt.Errorf("ROUTER_SERVICE_NAMESPACE=%q: want a namespace name", ns))
		case legacy != "" && legacy != name:
			errs = append(errs, fmt.Errorf("ROUTER_SERVICE_NAME=%q and ROUTER_NAME=%q: both name the router in Route status; set one", name, legacy))
		}
		o.RouterName, o.RouterNamespace = name, ns
	}
	integer("ROUTER_SERVICE_HTTP_PORT", &o.HTTPPort, 1, 65535)
	integer("ROUTER_SERVICE_HTTPS_PORT", &o.HTTPSPort, 1, 65535)
	str("ROUTER_BIND_ADDRESS", &o.BindAddress)
	if v := strings.TrimSpace(getenv("ROUTER_MAX_CONNECTIONS")); strings.EqualFold(v, "auto") {
		o.MaxConnections = 0
	} else {
		integer("ROUTER_MAX_CONNECTIONS", &o.MaxConnections, 1, 10000000)
	}
	integer("ROUTER_THREADS", &o.Threads, 1, 4096)
	str("ROUTER_LOAD_BALANCE_ALGORITHM", &o.LoadBalanceAlgorithm)
	str("ROUTER_TCP_BALANCE_SCHEME", &o.TCPBalanceScheme)
	duration("ROUTER_DEFAULT_CONNECT_TIMEOUT", &o.Timeouts.Connect)
	duration("ROUTER_DEFAULT_CLIENT_TIMEOUT", &o.Timeouts.Client)
	duration("ROUTER_CLIENT_FIN_TIMEOUT", &o.Timeouts.ClientFin)
	duration("ROUTER_DEFAULT_SERVER_TIMEOUT", &o.Timeouts.Server)
	duration("ROUTER_DEFAULT_SERVER_FIN_TIMEOUT", &o.Timeouts.ServerFin)
	duration("ROUTER_SLOWLORIS_TIMEOUT", &o.Timeouts.HTTPRequest)
	duration("ROUTER_SLOWLORIS_HTTP_KEEPALIVE", &o.Timeouts.HTTPKeepAlive)
	duration("ROUTER_DEFAULT_TUNNEL_TIMEOUT", &o.Timeouts.Tunnel)
	duration("ROUTER_INSPECT_DELAY", &o.Timeouts.InspectDelay)
	duration("ROUTER_BACKEND_CHECK_INTERVAL", &o.CheckInterval)
	str("ROUTER_SET_FORWARDED_HEADERS", &o.ForwardedHeaders)
	integer("ROUTER_BUF_SIZE", &o.BufSize, 16384, 1<<20)
	duration("ROUTER_HARD_STOP_AFTER", &o.HardStopAfter)
	integer("HAROUTE_SPARE_BACKENDS", &o.SparePoolSize, 0, 1000)
	integer("HAROUTE_MAX_WORKER_RELOADS", &o.MaxWorkerReloads, 1, model.DefaultMaxWorkerReloads)
	str("ROUTER_COOKIE_NAME", &o.CookieName)
	selector("ROUTE_LABELS", &o.RouteLabels)
	selector("NAMESPACE_LABELS", &o.NamespaceLabels)
	selector("PROJECT_LABELS", &o.ProjectLabels)
	if v := strings.TrimSpace(getenv("ROUTE_FIELDS")); v != "" {
		if fs, err := ParseRouteFields(v); err != nil {
			errs = append(errs, fmt.Errorf("ROUTE_FIELDS=%q: %w", v, err))
		} else {
			o.RouteFields = fs
		}
	}
	boolean("ROUTER_ENABLE_EXTERNAL_CERTIFICATE", &o.ExternalCertificates)
	boolean("ROUTER_ALLOW_WILDCARD_ROUTES", &o.AllowWildcardRoutes)
	boolean("ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK", &o.DisableNamespaceOwnershipCheck)
	str("ROUTER_SUBDOMAIN", &o.Subdomain)
	boolean("ROUTER_OVERRIDE_HOSTNAME", &o.OverrideHostname)
	list("ROUTER_OVERRIDE_DOMAINS", &o.OverrideDomains)
	if v := strings.ToLower(strings.TrimSpace(getenv("ROUTER_DOMAIN"))); v != "" {
		if msg := hostError(v); msg != "" || !strings.Contains(v, ".") {
			errs = append(errs, fmt.Errorf("ROUTER_DOMAIN=%q: want a DNS domain of at least two labels, e.g. apps.example.com", v))
		} else {
			o.Domain = v
		}
	}
	list("ROUTER_ALLOWED_DOMAINS", &o.AllowedDomains)
	list("ROUTER_DENIED_DOMAINS", &o.DeniedDomains)
	str("DEFAULT_DESTINATION_CA_PATH", &o.DefaultDestinationCAFile)
	boolean("HAROUTE_TRUST_CROSS_NAMESPACE_ENDPOINTS", &o.TrustCrossNamespaceEndpoints)
	for _, name := range []string{"HAROUTE_POD_IPS", "HAROUTE_HOST_IPS"} {
		for _, v := range strings.Split(getenv(name), ",") {
			if v = strings.TrimSpace(v); v == "" {
				continue
			}
			a, err := netip.ParseAddr(v)
			if err != nil || a.Zone() != "" {
				errs = append(errs, fmt.Errorf("%s: %q: want IP addresses, comma-separated", name, v))
				continue
			}
			o.RouterAddresses = append(o.RouterAddresses, a.Unmap())
		}
	}
	o.AccessLog = accessLogFromEnv(getenv, func(err error) { errs = append(errs, err) })
	routerOptionsFromEnv(getenv, &o, func(err error) { errs = append(errs, err) })

	if err := o.Validate(); err != nil {
		errs = append(errs, err)
	}
	return o, errors.Join(errs...)
}

// Validate checks the option values that Translate would otherwise have to second-guess.
func (o Options) Validate() error {
	var errs []error
	if !slices.Contains(model.BalanceAlgorithms(), o.LoadBalanceAlgorithm) {
		errs = append(errs, fmt.Errorf("load balance algorithm %q: want roundrobin, leastconn, random or source", o.LoadBalanceAlgorithm))
	}
	if !slices.Contains(model.BalanceAlgorithms(), o.TCPBalanceScheme) {
		errs = append(errs, fmt.Errorf("TCP balance scheme %q: want roundrobin, leastconn, random or source", o.TCPBalanceScheme))
	}
	if !slices.Contains(model.ForwardedPolicies(), o.ForwardedHeaders) {
		errs = append(errs, fmt.Errorf("forwarded headers policy %q: want append, replace, never or if-none", o.ForwardedHeaders))
	}
	if o.CookieName != "" && !validCookieName(o.CookieName) {
		errs = append(errs, fmt.Errorf("ROUTER_COOKIE_NAME=%q: want 1-%d characters from A-Z, a-z, 0-9, '_' and '-'", o.CookieName, maxCookieNameLength))
	}
	if o.HTTPPort < 0 || o.HTTPPort > 65535 || o.HTTPSPort < 0 || o.HTTPSPort > 65535 {
		errs = append(errs, errors.New("ports must be in 0-65535"))
	}
	if o.DefaultDestinationCAFile != "" && !strings.HasPrefix(o.DefaultDestinationCAFile, "/") {
		errs = append(errs, fmt.Errorf("default destination CA %q: want an absolute path", o.DefaultDestinationCAFile))
	}
	for _, err := range []error{o.AccessLog.Validate(), o.TLS.Validate(), o.HTTP.Validate(), o.ClientTLS.Validate()} {
		if err != nil {
			errs = append(errs, err)
		}
	}

	if strings.ContainsAny(o.DefaultDestinationCAFile+o.BindAddress+o.RouterName, " \t\r\n\"'\\#$") {
		errs = append(errs, errors.New("router name, bind address and default destination CA path must not contain whitespace, quotes, '\\', '#' or '$'"))
	}
	return errors.Join(errs...)
}

// DefaultAccessLog returns OpenShift's access-log defaults for a syslog address: lines of at most 1024
// bytes, facility local1, level warning (at which HAProxy sends no access lines: OpenShift's ingress
// operator sets info), HAProxy's httplog and tcplog formats, no captures.
func DefaultAccessLog(address string) model.AccessLog {
	return model.AccessLog{Address: address, MaxLength: 1024, Facility: "local1", Level: "warning"}
}

// accessLogFromEnv reads the access-log variables, reporting each malformed one through fail. Without
// ROUTER_SYSLOG_ADDRESS it returns the zero value, as OpenShift then logs nothing, but the other
// variables are still checked.
func accessLogFromEnv(getenv func(string) string, fail func(error)) model.AccessLog {
	a := DefaultAccessLog(strings.TrimSpace(getenv("ROUTER_SYSLOG_ADDRESS")))
	if v := strings.TrimSpace(getenv("ROUTER_LOG_MAX_LENGTH")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < model.MinLogLength || n > model.MaxLogLength {
			fail(fmt.Errorf("ROUTER_LOG_MAX_LENGTH=%q: want an integer in %d-%d", v, model.MinLogLength, model.MaxLogLength))
		} else {
			a.MaxLength = n
		}
	}
	oneOf := func(name string, dst *string, values []string) {
		v := strings.ToLower(strings.TrimSpace(getenv(name)))
		switch {
		case v == "":
		case slices.Contains(values, v):
			*dst = v
		default:
			fail(fmt.Errorf("%s=%q: want one of %s", name, v, strings.Join(values, ", ")))
		}
	}
	oneOf("ROUTER_LOG_FACILITY", &a.Facility, model.LogFacilities())
	oneOf("ROUTER_LOG_LEVEL", &a.Level, model.LogLevels())
	if v := strings.TrimSpace(getenv("ROUTER_SYSLOG_FORMAT")); v != "" {
		f, err := ParseLogFormat(v)
		if err != nil {
			fail(fmt.Errorf("ROUTER_SYSLOG_FORMAT: %w", err))
		}
		a.HTTPFormat = f
	}
	if v := strings.TrimSpace(getenv("ROUTER_DONT_LOG_NULL")); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail(fmt.Errorf("ROUTER_DONT_LOG_NULL=%q: want true or false", v))
		}
		a.DontLogNull = b
	}
	captures := func(name string, dst *string) {
		v := strings.TrimSpace(getenv(name))
		hs, err := model.ParseCaptureHeaders(v)
		if err != nil {
			fail(fmt.Errorf("%s=%q: %w", name, v, err))
			return
		}
		*dst = model.FormatCaptureHeaders(hs)
	}
	captures("ROUTER_CAPTURE_HTTP_REQUEST_HEADERS", &a.CaptureRequestHeaders)
	captures("ROUTER_CAPTURE_HTTP_RESPONSE_HEADERS", &a.CaptureResponseHeaders)
	if v := strings.TrimSpace(getenv("ROUTER_CAPTURE_HTTP_COOKIE")); v != "" {
		c, err := ParseCaptureCookie(v)
		if err != nil {
			fail(fmt.Errorf("ROUTER_CAPTURE_HTTP_COOKIE=%q: %w", v, err))
		}
		a.CaptureCookie = c
	}
	if a.Address == "" {
		return model.AccessLog{}
	}
	if err := model.CheckSyslogAddress(a.Address); err != nil {
		fail(fmt.Errorf("ROUTER_SYSLOG_ADDRESS: %w", err))
		return model.AccessLog{}
	}
	return a
}

// ParseLogFormat returns the log format a ROUTER_SYSLOG_FORMAT value stands for. OpenShift writes the
// value after "log-format" as it is, and its ingress operator sets it Go-quoted, so a value that
// starts with a double quote must be exactly one double-quoted string, in which only the escapes \"
// and \\ are accepted and '$' (HAProxy would expand an environment variable there) is refused. A value
// in single quotes is taken literally. Any other value is the format itself, spaces included (HAProxy
// would want them escaped). The result must pass model.CheckLogFormat.
func ParseLogFormat(v string) (string, error) {
	var f string
	switch {
	case strings.HasPrefix(v, `"`):
		var b strings.Builder
		closed := false
		for i := 1; i < len(v) && !closed; i++ {
			switch c := v[i]; c {
			case '"':
				if i != len(v)-1 {
					return "", fmt.Errorf("%q: text after the closing double quote", v)
				}
				closed = true
			case '\\':
				if i+1 >= len(v) || (v[i+1] != '"' && v[i+1] != '\\') {
					return "", fmt.Errorf("%q: only the escapes \\\" and \\\\ are supported", v)
				}
				i++
				b.WriteByte(v[i])
			case '$':
				return "", fmt.Errorf("%q: '$' in double quotes (environment variables are not expanded)", v)
			default:
				b.WriteByte(c)
			}
		}
		if !closed {
			return "", fmt.Errorf("%q: unbalanced double quote", v)
		}
		f = b.String()
	case strings.HasPrefix(v, "'"):
		inner, ok := strings.CutSuffix(v[1:], "'")
		if !ok || strings.Contains(inner, "'") {
			return "", fmt.Errorf("%q: want exactly one single-quoted string", v)
		}
		f = inner
	default:
		f = v
	}
	if err := model.CheckLogFormat(f); err != nil {
		return "", err
	}
	return f, nil
}

// ParseCaptureCookie parses OpenShift's ROUTER_CAPTURE_HTTP_COOKIE, "name:maxLength": the first
// cookie whose name starts with name is captured, or whose name is name when it ends in '='.
func ParseCaptureCookie(v string) (model.CaptureCookie, error) {
	name, length, ok := strings.Cut(v, ":")
	if !ok {
		return model.CaptureCookie{}, errors.New("want name:maxLength")
	}
	c := model.CaptureCookie{Name: name}
	c.Name, c.Exact = strings.CutSuffix(name, "=")
	n, err := strconv.Atoi(length)
	if err != nil {
		return model.CaptureCookie{}, fmt.Errorf("max length %q is not a number", length)
	}
	c.MaxLength = n
	if err := c.Validate(); err != nil {
		return model.CaptureCookie{}, err
	}
	return c, nil
}

// ParseTimeout validates an HAProxy duration as OpenShift's timeout annotations accept it: digits with
// an optional unit (us, ms, s, m, h, d; none means ms), at most HAProxy's limit of 2^31-1 ms. It returns
// the value with an explicit unit.
func ParseTimeout(v string) (string, bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 || i > 12 {
		return "", false
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil {
		return "", false
	}
	unit := v[i:]
	perMS := map[string]float64{"us": 0.001, "ms": 1, "": 1, "s": 1e3, "m": 60e3, "h": 3600e3, "d": 86400e3}
	f, ok := perMS[unit]
	if !ok || float64(n)*f > float64(1<<31-1) {
		return "", false
	}
	if unit == "" {
		unit = "ms"
	}
	return strconv.FormatInt(n, 10) + unit, true
}

// RouteFieldNames are the Route fields ROUTE_FIELDS may select on: those the API server offers for
// Routes.
func RouteFieldNames() []string {
	return []string{"metadata.name", "metadata.namespace", "spec.host", "spec.path", "spec.to.name"}
}

// ParseRouteFields parses a field selector on Routes (ROUTE_FIELDS), over RouteFieldNames only.
func ParseRouteFields(v string) (fields.Selector, error) {
	fs, err := fields.ParseSelector(v)
	if err != nil {
		return nil, err
	}
	for _, r := range fs.Requirements() {
		if !slices.Contains(RouteFieldNames(), r.Field) {
			return nil, fmt.Errorf("field %q: want one of %s", r.Field, strings.Join(RouteFieldNames(), ", "))
		}
	}
	return fs, nil
}
