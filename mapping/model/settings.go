package model

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Settings are the router-wide settings, named after OpenShift's ROUTER_* environment variables.
type Settings struct {
	// RouterName is this router's name in Route status (ROUTER_NAME).
	RouterName string `json:"routerName" yaml:"routerName"`
	// HTTPPort and HTTPSPort are the public listener ports (ROUTER_SERVICE_HTTP_PORT / _HTTPS_PORT).
	HTTPPort  int `json:"httpPort" yaml:"httpPort"`
	HTTPSPort int `json:"httpsPort" yaml:"httpsPort"`
	// BindAddress is the address the public listeners bind to; empty means all.
	BindAddress string `json:"bindAddress,omitempty" yaml:"bindAddress,omitempty"`
	// MaxConnections is global and default maxconn (ROUTER_MAX_CONNECTIONS); 0 ("auto") renders no
	// maxconn, so HAProxy derives it from its file-descriptor limit.
	MaxConnections int `json:"maxConnections" yaml:"maxConnections"`
	// Threads is nbthread (ROUTER_THREADS); 0 leaves HAProxy's default.
	Threads int `json:"threads,omitempty" yaml:"threads,omitempty"`
	// LoadBalanceAlgorithm is the default balance for http backends (ROUTER_LOAD_BALANCE_ALGORITHM).
	LoadBalanceAlgorithm string `json:"loadBalanceAlgorithm" yaml:"loadBalanceAlgorithm"`
	// TCPBalanceScheme is the default balance for passthrough backends (ROUTER_TCP_BALANCE_SCHEME).
	TCPBalanceScheme string `json:"tcpBalanceScheme" yaml:"tcpBalanceScheme"`
	// Timeouts (ROUTER_DEFAULT_*_TIMEOUT and friends), with HAProxy units.
	Timeouts Timeouts `json:"timeouts" yaml:"timeouts"`
	// CheckInterval is the default server health-check interval (ROUTER_BACKEND_CHECK_INTERVAL).
	CheckInterval string `json:"checkInterval" yaml:"checkInterval"`
	// ForwardedHeaders is the default set-forwarded-headers policy (ROUTER_SET_FORWARDED_HEADERS).
	ForwardedHeaders string `json:"forwardedHeaders" yaml:"forwardedHeaders"`
	// DefaultCertificate names the certificate served when no Route certificate matches; it is
	// provided by the renderer's caller, not by Translate.
	DefaultCertificate string `json:"defaultCertificate" yaml:"defaultCertificate"`
	// BufSize is tune.bufsize; runtime map payloads are chunked below it.
	BufSize int `json:"bufSize" yaml:"bufSize"`
	// SparePoolSize is the number of spare backends kept per kind and balance variant, so that new
	// Routes are served without a reload (HAROUTE_SPARE_BACKENDS).
	SparePoolSize int `json:"sparePoolSize" yaml:"sparePoolSize"`
	// CookieName is the sticky-session cookie name of the Routes without a cookie_name annotation, and
	// of the spare backends (ROUTER_COOKIE_NAME); empty: DefaultCookieName of each backend.
	CookieName string `json:"cookieName,omitempty" yaml:"cookieName,omitempty"`
	// HardStopAfter bounds how long an old worker may live after a reload (ROUTER_HARD_STOP_AFTER).
	HardStopAfter string `json:"hardStopAfter,omitempty" yaml:"hardStopAfter,omitempty"`
	// MaxWorkerReloads is mworker-max-reloads: the reloads an old worker may see before the master
	// stops it (HAROUTE_MAX_WORKER_RELOADS); 0 is DefaultMaxWorkerReloads. Always rendered, since
	// HAProxy's own default changed from no limit to 50 in 3.3.
	MaxWorkerReloads int `json:"maxWorkerReloads,omitempty" yaml:"maxWorkerReloads,omitempty"`
	// AccessLog is the syslog access log; its zero value (no address) is none.
	AccessLog AccessLog `json:"accessLog,omitzero" yaml:"accessLog,omitempty"`
	// TLS is the TLS profile of the TLS-terminating listeners; its zero value renders HAProxy's
	// defaults.
	TLS TLSProfile `json:"tls,omitzero" yaml:"tls,omitempty"`
	// HTTP holds the router-wide HTTP and listener options; its zero value is HAProxy's behaviour.
	HTTP HTTPOptions `json:"http,omitzero" yaml:"http,omitempty"`
	// ClientTLS is mutual TLS on the terminating listeners; its zero value asks for no client
	// certificate.
	ClientTLS ClientTLS `json:"clientTLS,omitzero" yaml:"clientTLS,omitempty"`
}

// DefaultMaxWorkerReloads is the mworker-max-reloads haroute renders unless told otherwise: so many
// that an old worker keeps its connections until they end or hard-stop-after, as the stock router's
// old processes do. HAProxy 3.3 and later stop old workers after 50 reloads by default, and before
// 3.3 never; a reload every 5 seconds takes 58 days to reach this.
const DefaultMaxWorkerReloads = 1_000_000

// WorkerReloads returns the mworker-max-reloads to render: MaxWorkerReloads, or its default.
func (s Settings) WorkerReloads() int {
	if s.MaxWorkerReloads > 0 {
		return s.MaxWorkerReloads
	}
	return DefaultMaxWorkerReloads
}

// Timeouts are HAProxy durations with units, e.g. "5s".
type Timeouts struct {
	Connect       string `json:"connect" yaml:"connect"`
	Client        string `json:"client" yaml:"client"`
	ClientFin     string `json:"clientFin" yaml:"clientFin"`
	Server        string `json:"server" yaml:"server"`
	ServerFin     string `json:"serverFin" yaml:"serverFin"`
	HTTPRequest   string `json:"httpRequest" yaml:"httpRequest"`
	HTTPKeepAlive string `json:"httpKeepAlive" yaml:"httpKeepAlive"`
	Tunnel        string `json:"tunnel" yaml:"tunnel"`
	InspectDelay  string `json:"inspectDelay" yaml:"inspectDelay"`
}

// AccessLog is HAProxy's access log, sent to a syslog server as OpenShift's router sends it. The zero
// value is no access log, and then nothing of it is rendered; with an Address, every field but
// HTTPFormat and the captures must be set (mapping.DefaultAccessLog gives OpenShift's defaults).
//
// The captured headers are kept as text, not as slices, so that Settings stay a plain value that
// Config.Clone copies whole.
type AccessLog struct {
	// Address is the syslog server (ROUTER_SYSLOG_ADDRESS): "host", "host:port", "[ipv6]" or
	// "[ipv6]:port" over UDP (port 514 when omitted), or the absolute path of a unix datagram socket.
	Address string `json:"address" yaml:"address"`
	// MaxLength is the longest line sent, in bytes: 80-65535 (ROUTER_LOG_MAX_LENGTH).
	MaxLength int `json:"maxLength" yaml:"maxLength"`
	// Facility is the syslog facility, one of LogFacilities (ROUTER_LOG_FACILITY).
	Facility string `json:"facility" yaml:"facility"`
	// Level is the least severe level sent, one of LogLevels (ROUTER_LOG_LEVEL). HAProxy logs
	// requests and connections at "info", so access lines need info or debug.
	Level string `json:"level" yaml:"level"`
	// HTTPFormat is the log-format of the HTTP frontends, unquoted (ROUTER_SYSLOG_FORMAT); empty
	// means HAProxy's "option httplog". public_ssl always logs with "option tcplog".
	HTTPFormat string `json:"httpFormat,omitempty" yaml:"httpFormat,omitempty"`
	// DontLogNull leaves out connections on which the client sent nothing (ROUTER_DONT_LOG_NULL).
	DontLogNull bool `json:"dontLogNull,omitempty" yaml:"dontLogNull,omitempty"`
	// CaptureRequestHeaders and CaptureResponseHeaders list the header values logged with each HTTP
	// request, in capture order, as "name:maxLength" items separated by commas
	// (ROUTER_CAPTURE_HTTP_REQUEST_HEADERS, ROUTER_CAPTURE_HTTP_RESPONSE_HEADERS); see
	// ParseCaptureHeaders.
	CaptureRequestHeaders  string `json:"captureRequestHeaders,omitempty" yaml:"captureRequestHeaders,omitempty"`
	CaptureResponseHeaders string `json:"captureResponseHeaders,omitempty" yaml:"captureResponseHeaders,omitempty"`
	// CaptureCookie is the request cookie logged with each HTTP request (ROUTER_CAPTURE_HTTP_COOKIE);
	// the zero value captures none.
	CaptureCookie CaptureCookie `json:"captureCookie,omitzero" yaml:"captureCookie,omitempty"`
}

// CaptureHeader is one HTTP header whose value is logged, cut at MaxLength bytes.
type CaptureHeader struct {
	Name      string
	MaxLength int
}

// CaptureCookie is the cookie whose value is logged, cut at MaxLength bytes: the first cookie whose
// name starts with Name, or is Name when Exact.
type CaptureCookie struct {
	Name      string `json:"name" yaml:"name"`
	Exact     bool   `json:"exact,omitempty" yaml:"exact,omitempty"`
	MaxLength int    `json:"maxLength" yaml:"maxLength"`
}

// Access-log limits: HAProxy's bounds for a log line's length, the longest log format haroute writes
// on one configuration line, and at most MaxCaptures captured headers per direction.
const (
	MinLogLength       = 80
	MaxLogLength       = 65535
	MaxLogFormatLength = 8192
	MaxCaptures        = 64
)

// LogLevels returns the syslog levels HAProxy accepts, most severe first.
func LogLevels() []string {
	return []string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}
}

// LogFacilities returns the syslog facilities HAProxy accepts.
func LogFacilities() []string {
	return []string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "auth2",
		"ftp", "ntp", "audit", "alert", "cron2", "local0", "local1", "local2", "local3", "local4", "local5",
		"local6", "local7"}
}

// Enabled reports whether an access log is configured.
func (a AccessLog) Enabled() bool { return a.Address != "" }

// RequestHeaderCaptures returns the parsed CaptureRequestHeaders.
func (a AccessLog) RequestHeaderCaptures() ([]CaptureHeader, error) {
	return ParseCaptureHeaders(a.CaptureRequestHeaders)
}

// ResponseHeaderCaptures returns the parsed CaptureResponseHeaders.
func (a AccessLog) ResponseHeaderCaptures() ([]CaptureHeader, error) {
	return ParseCaptureHeaders(a.CaptureResponseHeaders)
}

// Validate checks that a can be written into haproxy.cfg as it is: the zero value, or an address with
// a known facility and level, lengths in range, a log format CheckLogFormat accepts and well-formed
// captures.
func (a AccessLog) Validate() error {
	if a == (AccessLog{}) {
		return nil
	}
	if a.Address == "" {
		return errors.New("access log: settings without a syslog address")
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("access log: %w", err))
		}
	}
	add(CheckSyslogAddress(a.Address))
	if a.MaxLength < MinLogLength || a.MaxLength > MaxLogLength {
		add(fmt.Errorf("max length %d: want %d-%d", a.MaxLength, MinLogLength, MaxLogLength))
	}
	if !slices.Contains(LogFacilities(), a.Facility) {
		add(fmt.Errorf("facility %q: want one of %s", a.Facility, strings.Join(LogFacilities(), ", ")))
	}
	if !slices.Contains(LogLevels(), a.Level) {
		add(fmt.Errorf("level %q: want one of %s", a.Level, strings.Join(LogLevels(), ", ")))
	}
	if a.HTTPFormat != "" {
		add(CheckLogFormat(a.HTTPFormat))
	}
	_, err := a.RequestHeaderCaptures()
	add(err)
	_, err = a.ResponseHeaderCaptures()
	add(err)
	if a.CaptureCookie != (CaptureCookie{}) {
		add(a.CaptureCookie.Validate())
	}
	return errors.Join(errs...)
}

// CheckSyslogAddress returns an error unless addr is a syslog target HAProxy reads the same way
// whatever the version: an absolute unix socket path (clean, at most 107 bytes, letters, digits and
// "/._-+~@"), or a host name, an IPv4 address or a bracketed IPv6 address, each with an optional port.
// A bare IPv6 address is refused: HAProxy would take its last group for a port.
func CheckSyslogAddress(addr string) error {
	if strings.HasPrefix(addr, "/") {
		if path.Clean(addr) != addr || len(addr) > 107 || !onlyChars(addr, "/._-+~@") {
			return fmt.Errorf("syslog socket %q: want a clean absolute path of at most 107 letters, digits and \"/._-+~@\"", addr)
		}
		return nil
	}
	var port string
	var hasPort bool
	if rest, ok := strings.CutPrefix(addr, "["); ok {
		inner, after, found := strings.Cut(rest, "]")
		ip, err := netip.ParseAddr(inner)
		if !found || err != nil || !ip.Is6() || ip.Zone() != "" {
			return fmt.Errorf("syslog address %q: want [IPv6 address] without zone, with an optional :port", addr)
		}
		if after != "" {
			if port, hasPort = strings.CutPrefix(after, ":"); !hasPort {
				return fmt.Errorf("syslog address %q: unexpected %q after the IPv6 address", addr, after)
			}
		}
	} else {
		if strings.Count(addr, ":") > 1 {
			return fmt.Errorf("syslog address %q: put an IPv6 address in brackets, e.g. [%s]:514", addr, addr)
		}
		var host string
		host, port, hasPort = strings.Cut(addr, ":")
		if !validHostName(host) {
			return fmt.Errorf("syslog address %q: %q is neither an IPv4 address nor a host name", addr, host)
		}
	}
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strings.Trim(port, "0123456789") != "" {
			return fmt.Errorf("syslog address %q: port %q: want 1-65535", addr, port)
		}
	}
	return nil
}

// validHostName reports whether h is an IPv4 address or a DNS name: dot-separated labels of letters,
// digits and '-', not starting or ending with '-', at most 253 bytes.
func validHostName(h string) bool {
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Is4()
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' || !onlyChars(label, "-") {
			return false
		}
	}
	return true
}

// CheckLogFormat returns an error unless f can be written between single quotes in haproxy.cfg and
// mean there exactly what it says: at most MaxLogFormatLength printable ASCII characters, no single
// quote (it would end the word), no backslash (its meaning depends on the quoting), no "${"
// (environment expansion) and double quotes in pairs. HAProxy itself checks the "%" variables.
func CheckLogFormat(f string) error {
	switch {
	case f == "":
		return errors.New("log format is empty")
	case len(f) > MaxLogFormatLength:
		return fmt.Errorf("log format of %d bytes: at most %d", len(f), MaxLogFormatLength)
	case strings.ContainsAny(f, "'\\"):
		return fmt.Errorf("log format %q: contains a single quote or a backslash", f)
	case strings.Contains(f, "${"):
		return fmt.Errorf("log format %q: contains \"${\" (environment expansion)", f)
	case strings.Count(f, `"`)%2 != 0:
		return fmt.Errorf("log format %q: unbalanced double quotes", f)
	}
	for i := 0; i < len(f); i++ {
		if f[i] < ' ' || f[i] > '~' {
			return fmt.Errorf("log format %q: contains a control or non-ASCII character at byte %d", f, i)
		}
	}
	return nil
}

// ParseCaptureHeaders parses a comma-separated list of "name:maxLength" items (OpenShift's
// ROUTER_CAPTURE_HTTP_*_HEADERS), in order; "" is none. Names are HTTP tokens without '#', '$', '%'
// or a single quote (characters haproxy.cfg would interpret), lengths 1-65535, at most MaxCaptures
// items.
func ParseCaptureHeaders(s string) ([]CaptureHeader, error) {
	if s == "" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > MaxCaptures {
		return nil, fmt.Errorf("%d header captures: at most %d", len(items), MaxCaptures)
	}
	out := make([]CaptureHeader, 0, len(items))
	for _, item := range items {
		name, length, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("header capture %q: want name:maxLength", item)
		}
		if err := checkCaptureName("header", name); err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(length)
		if err != nil {
			return nil, fmt.Errorf("header capture %q: max length %q is not a number", item, length)
		}
		if err := checkCaptureLength("header "+name, n); err != nil {
			return nil, err
		}
		out = append(out, CaptureHeader{Name: name, MaxLength: n})
	}
	return out, nil
}

// FormatCaptureHeaders is the inverse of ParseCaptureHeaders.
func FormatCaptureHeaders(hs []CaptureHeader) string {
	items := make([]string, len(hs))
	for i, h := range hs {
		items[i] = h.Name + ":" + strconv.Itoa(h.MaxLength)
	}
	return strings.Join(items, ",")
}

// Validate returns an error unless the cookie's name is an HTTP token haproxy.cfg takes as it is (see
// ParseCaptureHeaders) and its length is 1-65535.
func (c CaptureCookie) Validate() error {
	if err := checkCaptureName("cookie", c.Name); err != nil {
		return err
	}
	return checkCaptureLength("cookie "+c.Name, c.MaxLength)
}

func checkCaptureName(what, name string) error {
	if name == "" || !onlyChars(name, "-!&*+.^_`|~") {
		return fmt.Errorf("%s name %q: want an HTTP token of letters, digits and \"-!&*+.^_`|~\"", what, name)
	}
	return nil
}

func checkCaptureLength(what string, n int) error {
	if n < 1 || n > MaxLogLength {
		return fmt.Errorf("%s: max length %d: want 1-%d", what, n, MaxLogLength)
	}
	return nil
}

// onlyChars reports whether every byte of s is an ASCII letter or digit or one of extra.
func onlyChars(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strings.IndexByte(extra, c) >= 0 {
			continue
		}
		return false
	}
	return true
}
