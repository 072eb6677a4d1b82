package model

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// HTTPOptions are the router-wide HTTP and listener options of OpenShift's IngressController that the
// ingress operator passes to the router as environment variables. The zero value is HAProxy's
// behaviour; mapping.DefaultOptions gives OpenShift's defaults. Lists are kept as text (see
// AccessLog), so that Settings stay a plain comparable value.
type HTTPOptions struct {
	// MaxRewrite is tune.maxrewrite, the part of a buffer kept for header rewrites
	// (ROUTER_MAX_REWRITE_SIZE); 0 leaves HAProxy's default.
	MaxRewrite int `json:"maxRewrite,omitempty" yaml:"maxRewrite,omitempty"`
	// IgnoreProbes: connections that send nothing are neither answered nor logged
	// (ROUTER_HTTP_IGNORE_PROBES: option http-ignore-probes).
	IgnoreProbes bool `json:"ignoreProbes,omitempty" yaml:"ignoreProbes,omitempty"`
	// IdleCloseOnResponse: at a soft stop, idle client connections are closed only after the next
	// response (ROUTER_IDLE_CLOSE_ON_RESPONSE: option idle-close-on-response).
	IdleCloseOnResponse bool `json:"idleCloseOnResponse,omitempty" yaml:"idleCloseOnResponse,omitempty"`
	// AbortOnClose: a request whose client has gone is dropped from the queues
	// (ROUTER_ABORT_ON_CLOSE: option abortonclose).
	AbortOnClose bool `json:"abortOnClose,omitempty" yaml:"abortOnClose,omitempty"`
	// ContStats: traffic counters are updated while transfers run (ROUTER_HAPROXY_CONTSTATS).
	ContStats bool `json:"contStats,omitempty" yaml:"contStats,omitempty"`
	// StrictSNI: a TLS client whose SNI matches no certificate is refused instead of getting the
	// default certificate (ROUTER_STRICT_SNI).
	StrictSNI bool `json:"strictSNI,omitempty" yaml:"strictSNI,omitempty"`
	// DisableHTTP2: no certificate advertises h2 and reencrypt backends are spoken to in HTTP/1.1
	// (ROUTER_DISABLE_HTTP2).
	DisableHTTP2 bool `json:"disableHTTP2,omitempty" yaml:"disableHTTP2,omitempty"`
	// ProxyProtocol: the public listeners expect a PROXY protocol header (v1 or v2) before anything
	// else (ROUTER_USE_PROXY_PROTOCOL).
	ProxyProtocol bool `json:"proxyProtocol,omitempty" yaml:"proxyProtocol,omitempty"`
	// IPMode is the address family of the public listeners (ROUTER_IP_V4_V6_MODE): IPModeV4 (also
	// ""), IPModeV6 or IPModeV4V6.
	IPMode string `json:"ipMode,omitempty" yaml:"ipMode,omitempty"`
	// CompressionTypes are the MIME types HAProxy compresses with gzip (ROUTER_ENABLE_COMPRESSION,
	// ROUTER_COMPRESSION_MIME), space-separated, a type that holds a space Go-quoted (see
	// ParseMIMETypes); empty: no compression.
	CompressionTypes string `json:"compressionTypes,omitempty" yaml:"compressionTypes,omitempty"`
	// UniqueIDFormat (a log format, unquoted) and UniqueIDHeader name the request ID HAProxy adds to
	// every request (ROUTER_UNIQUE_ID_FORMAT, ROUTER_UNIQUE_ID_HEADER_NAME); both or neither.
	UniqueIDFormat string `json:"uniqueIDFormat,omitempty" yaml:"uniqueIDFormat,omitempty"`
	UniqueIDHeader string `json:"uniqueIDHeader,omitempty" yaml:"uniqueIDHeader,omitempty"`
	// CaseAdjust lists, comma-separated, the header names HTTP/1 clients (and the servers of Routes
	// annotated haproxy.router.openshift.io/h1-adjust-case) receive with this exact case
	// (ROUTER_H1_CASE_ADJUST).
	CaseAdjust string `json:"caseAdjust,omitempty" yaml:"caseAdjust,omitempty"`
	// RequestHeaders and ResponseHeaders are the header actions every HTTP request and response gets
	// (ROUTER_HTTP_REQUEST_HEADERS, ROUTER_HTTP_RESPONSE_HEADERS), in the operator's encoding (see
	// ParseHeaderActions).
	RequestHeaders  string `json:"requestHeaders,omitempty" yaml:"requestHeaders,omitempty"`
	ResponseHeaders string `json:"responseHeaders,omitempty" yaml:"responseHeaders,omitempty"`
	// StripClientSSLHeaders removes the X-SSL* headers a client sends, so that nobody can pose as
	// a client certificate (ROUTER_MUTUAL_TLS_HEADER_FILTER).
	StripClientSSLHeaders bool `json:"stripClientSSLHeaders,omitempty" yaml:"stripClientSSLHeaders,omitempty"`
	// NotFound answers requests that match no Route with 404 and its page instead of 503
	// (ROUTER_ERRORFILE_404 set).
	NotFound bool `json:"notFound,omitempty" yaml:"notFound,omitempty"`
}

// Address families of the public listeners (HTTPOptions.IPMode).
const (
	IPModeV4   = "v4"
	IPModeV6   = "v6"
	IPModeV4V6 = "v4v6"
)

// ClientSSLHeaders are the request headers through which a TLS-terminating router tells a backend
// about the client's certificate; StripClientSSLHeaders removes them as a client sends them.
func ClientSSLHeaders() []string {
	return []string{"X-SSL", "X-SSL-Client-CN", "X-SSL-Client-DER", "X-SSL-Client-DN", "X-SSL-Client-NotAfter",
		"X-SSL-Client-NotBefore", "X-SSL-Client-SHA1", "X-SSL-Client-Serial", "X-SSL-Client-Subject",
		"X-SSL-Client-Verify", "X-SSL-Client-Version", "X-SSL-Issuer"}
}

// HeaderAction is one header set or deleted on every request or response.
type HeaderAction struct {
	// Action is HeaderSet or HeaderDelete.
	Action string
	// Name is the header name, an HTTP token.
	Name string
	// Value is the value of a HeaderSet (see CheckHeaderValue); empty for HeaderDelete.
	Value string
}

// Header actions.
const (
	HeaderSet    = "Set"
	HeaderDelete = "Delete"
)

// Limits of the header options.
const (
	// MaxHeaderValueLength bounds a header action's value: one line of haproxy.cfg must hold it.
	MaxHeaderValueLength = 4096
	// MaxHeaderActions bounds the actions per direction (the IngressController API allows 20).
	MaxHeaderActions = 64
)

// ParseHeaderActions parses the ingress operator's encoding of header actions: comma-separated
// items "name:value:Set" or "name:Delete", each part query-escaped (so that ':' and ',' in a value
// survive). Names must be HTTP tokens other than those the IngressController API reserves
// (ReservedRouterHeaders) and values pass CheckHeaderValue, which lets them read request and
// response headers alike: ParseRequestHeaderActions and ParseResponseHeaderActions check a list as the
// API does.
func ParseHeaderActions(s string) ([]HeaderAction, error) {
	return parseHeaderActions(s, fetchReqHdr, fetchResHdr)
}

// ParseRequestHeaderActions parses ROUTER_HTTP_REQUEST_HEADERS: ParseHeaderActions whose dynamic
// values may read the request's headers only (req.hdr), as the IngressController API allows.
func ParseRequestHeaderActions(s string) ([]HeaderAction, error) {
	return parseHeaderActions(s, fetchReqHdr)
}

// ParseResponseHeaderActions parses ROUTER_HTTP_RESPONSE_HEADERS: dynamic values may read the
// response's headers only (res.hdr).
func ParseResponseHeaderActions(s string) ([]HeaderAction, error) {
	return parseHeaderActions(s, fetchResHdr)
}

// ReservedRouterHeaders are the header names the IngressController API's header actions may not
// touch, in lower case: the Route API's (ReservedRouteHeaders) and Host.
func ReservedRouterHeaders() []string { return append(ReservedRouteHeaders(), "host") }

func parseHeaderActions(s string, fetches ...string) ([]HeaderAction, error) {
	if s == "" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > MaxHeaderActions {
		return nil, fmt.Errorf("%d header actions: at most %d", len(items), MaxHeaderActions)
	}
	out := make([]HeaderAction, 0, len(items))
	for _, item := range items {
		parts := strings.Split(item, ":")
		for i, p := range parts {
			u, err := queryUnescape(p)
			if err != nil {
				return nil, fmt.Errorf("header action %q: part %q: %w", item, p, err)
			}
			parts[i] = u
		}
		var a HeaderAction
		switch {
		case len(parts) == 3 && parts[2] == HeaderSet:
			a = HeaderAction{Action: HeaderSet, Name: parts[0], Value: parts[1]}
		case len(parts) == 2 && parts[1] == HeaderDelete:
			a = HeaderAction{Action: HeaderDelete, Name: parts[0]}
		default:
			return nil, fmt.Errorf("header action %q: want name:value:Set or name:Delete", item)
		}
		if err := checkCaptureName("header", a.Name); err != nil {
			return nil, fmt.Errorf("header action %q: %w", item, err)
		}
		if slices.Contains(ReservedRouterHeaders(), strings.ToLower(a.Name)) {
			return nil, fmt.Errorf("header action %q: header actions may not modify Strict-Transport-Security, Proxy, Host, Cookie or Set-Cookie", item)
		}
		if a.Action == HeaderSet {
			if err := checkHeaderValue(a.Value, MaxHeaderValueLength, fetches...); err != nil {
				return nil, fmt.Errorf("header action %q: %w", item, err)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// FormatHeaderActions is the inverse of ParseHeaderActions.
func FormatHeaderActions(as []HeaderAction) string {
	items := make([]string, len(as))
	for i, a := range as {
		if a.Action == HeaderDelete {
			items[i] = queryEscape(a.Name) + ":" + HeaderDelete
			continue
		}
		items[i] = queryEscape(a.Name) + ":" + queryEscape(a.Value) + ":" + HeaderSet
	}
	return strings.Join(items, ",")
}

// CheckHeaderValue returns an error unless v is a header value the IngressController API accepts
// for ROUTER_HTTP_REQUEST_HEADERS and ROUTER_HTTP_RESPONSE_HEADERS: 1-MaxHeaderValueLength printable
// characters (no control character) in which '%' only starts "%%" or a dynamic value
// %[fetch(,converter)*], optionally with log-format flags %{+Q,...}[...], whose fetch is
// req.hdr(<name>), res.hdr(<name>) or ssl_c_der and whose converters are lower and base64. Written in
// single quotes (QuoteHeaderValue), such a value cannot reach anything else of haproxy.cfg.
// CheckRouteHeaderValue is the Route API's stricter rule.
func CheckHeaderValue(v string) error {
	return checkHeaderValue(v, MaxHeaderValueLength, fetchReqHdr, fetchResHdr)
}

// The header fetches a dynamic header value may use.
const (
	fetchReqHdr = "req.hdr"
	fetchResHdr = "res.hdr"
)

// checkHeaderValue checks a header value of at most maxLen bytes whose dynamic values may use the
// given header fetches (and ssl_c_der).
func checkHeaderValue(v string, maxLen int, fetches ...string) error {
	if v == "" || len(v) > maxLen {
		return fmt.Errorf("header value of %d bytes: want 1-%d", len(v), maxLen)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c == 0x7f {
			return fmt.Errorf("header value %s: contains a control character", quoteValue(v))
		}
	}
	for rest := v; ; {
		i := strings.IndexByte(rest, '%')
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
		if strings.HasPrefix(rest, "%") {
			rest = rest[1:]
			continue
		}
		n, err := dynamicValueLength(rest, fetches)
		if err != nil {
			return fmt.Errorf("header value %s: %w", quoteValue(v), err)
		}
		rest = rest[n:]
	}
}

// quoteValue quotes a value for an error message, cut after 64 bytes.
func quoteValue(v string) string {
	if len(v) > 64 {
		return strconv.Quote(v[:64]) + "..."
	}
	return strconv.Quote(v)
}

// dynamicValueLength returns the length of the "[{flags}][fetch,conv...]" that follows a '%'.
func dynamicValueLength(s string, fetches []string) (int, error) {
	n := 0
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return 0, errors.New("unterminated %{...} flags")
		}
		for _, f := range strings.Split(s[1:end], ",") {
			if !slices.Contains([]string{"Q", "+Q", "-Q", "X", "+X", "-X", "E", "+E", "-E"}, f) {
				return 0, fmt.Errorf("unknown log-format flag %q", f)
			}
		}
		n = end + 1
	}
	if !strings.HasPrefix(s[n:], "[") {
		return 0, errors.New("'%' must start %% or a dynamic value %[...]")
	}
	end := strings.IndexByte(s[n:], ']')
	if end < 0 {
		return 0, errors.New("unterminated %[...]")
	}
	expr := s[n+1 : n+end]
	parts := strings.Split(expr, ",")
	allowed := make([]string, 0, len(fetches)+1)
	for _, f := range fetches {
		allowed = append(allowed, f+"(<name>)")
	}
	allowed = append(allowed, "ssl_c_der")
	fetch, known := parts[0], false
	if fetch == "ssl_c_der" {
		known = true
	}
	for _, f := range fetches {
		arg, ok := strings.CutPrefix(fetch, f+"(")
		if !ok {
			continue
		}
		name, ok := strings.CutSuffix(arg, ")")
		if !ok || name == "" || !onlyChars(name, "-") {
			return 0, fmt.Errorf("dynamic value %%[%s]: want %s(<name>) with a header name of letters, digits and '-'", expr, f)
		}
		known = true
	}
	if !known {
		return 0, fmt.Errorf("dynamic value %%[%s]: only the fetches %s are allowed here", expr, strings.Join(allowed, ", "))
	}
	for _, c := range parts[1:] {
		if c != "lower" && c != "base64" {
			return 0, fmt.Errorf("dynamic value %%[%s]: only the converters lower and base64 are allowed", expr)
		}
	}
	return n + end + 1, nil
}

// QuoteHeaderValue writes a value that passed CheckHeaderValue as one word of haproxy.cfg: in single
// quotes (no expansion inside), each single quote of the value written as a closing quote, an escaped
// quote and an opening quote.
func QuoteHeaderValue(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// CaseAdjustments returns the CaseAdjust header names.
func (o HTTPOptions) CaseAdjustments() []string {
	if o.CaseAdjust == "" {
		return nil
	}
	return strings.Split(o.CaseAdjust, ",")
}

// RequestHeaderActions and ResponseHeaderActions return the parsed header actions.
func (o HTTPOptions) RequestHeaderActions() ([]HeaderAction, error) {
	return ParseRequestHeaderActions(o.RequestHeaders)
}

// ResponseHeaderActions returns the parsed ResponseHeaders.
func (o HTTPOptions) ResponseHeaderActions() ([]HeaderAction, error) {
	return ParseResponseHeaderActions(o.ResponseHeaders)
}

// CompressionTypeList returns the parsed CompressionTypes.
func (o HTTPOptions) CompressionTypeList() ([]string, error) {
	return ParseMIMETypes(o.CompressionTypes)
}

// ParseMIMETypes parses the ingress operator's encoding of a MIME type list: types separated by
// spaces, a type that holds a space or a double quote written Go-quoted (with a single quote escaped
// as \'). Each type must pass CheckMIMEType.
func ParseMIMETypes(s string) ([]string, error) {
	var out []string
	for rest := strings.TrimSpace(s); rest != ""; rest = strings.TrimLeft(rest, " ") {
		var t string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(strings.ReplaceAll(rest, `\'`, "'"))
			if err != nil {
				return nil, fmt.Errorf("MIME types %q: unbalanced or malformed quoted type", s)
			}
			unq, _ := strconv.Unquote(q)
			t = unq
			rest = rest[len(q)+strings.Count(q, "'"):]
		} else {
			t, rest, _ = strings.Cut(rest, " ")
		}
		if err := CheckMIMEType(t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// FormatMIMETypes is the inverse of ParseMIMETypes; a type with a space is double-quoted, which is
// also how haproxy.cfg takes it (CheckMIMEType leaves nothing inside that HAProxy would interpret).
func FormatMIMETypes(types []string) string {
	out := make([]string, len(types))
	for i, t := range types {
		if strings.Contains(t, " ") {
			t = `"` + t + `"`
		}
		out[i] = t
	}
	return strings.Join(out, " ")
}

// Validate checks that every option can be written into haproxy.cfg as it is.
func (o HTTPOptions) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("HTTP options: %w", err))
		}
	}
	if o.MaxRewrite < 0 || o.MaxRewrite > 1<<20 {
		add(fmt.Errorf("max rewrite %d: want 0-%d", o.MaxRewrite, 1<<20))
	}
	switch o.IPMode {
	case "", IPModeV4, IPModeV6, IPModeV4V6:
	default:
		add(fmt.Errorf("IP mode %q: want %s, %s or %s", o.IPMode, IPModeV4, IPModeV6, IPModeV4V6))
	}
	_, err := o.CompressionTypeList()
	add(err)
	if (o.UniqueIDFormat == "") != (o.UniqueIDHeader == "") {
		add(errors.New("unique ID: set both the format and the header name, or neither"))
	}
	if o.UniqueIDFormat != "" {
		add(CheckLogFormat(o.UniqueIDFormat))
		add(checkCaptureName("unique ID header", o.UniqueIDHeader))
	}
	for _, h := range o.CaseAdjustments() {
		add(checkCaptureName("case-adjusted header", h))
	}
	_, err = o.RequestHeaderActions()
	add(err)
	_, err = o.ResponseHeaderActions()
	add(err)
	return errors.Join(errs...)
}

// CheckMIMEType returns an error unless t is a MIME type "type/subtype" of HTTP token characters,
// optionally with parameters after ';' ("text/css; charset=utf-8"), at most 256 bytes. Quotes,
// backslashes and '$' are refused: nothing in it means anything to haproxy.cfg inside double quotes.
func CheckMIMEType(t string) error {
	typ, sub, ok := strings.Cut(t, "/")
	params := ""
	if i := strings.IndexByte(sub, ';'); i >= 0 {
		sub, params = sub[:i], sub[i:]
	}
	if !ok || typ == "" || sub == "" || len(t) > 256 || !onlyChars(typ, "-!#&^_.+*") || !onlyChars(sub, "-!#&^_.+*") ||
		!onlyChars(params, "-!#&^_.+;= ") {
		return fmt.Errorf("MIME type %q: want type/subtype of letters, digits and \"-!#&^_.+*\", parameters after ';'", t)
	}
	return nil
}

// queryUnescape decodes a query-escaped string as the ingress operator writes header actions: '+' is
// a space and %XX a byte.
func queryUnescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b.WriteByte(' ')
		case '%':
			if i+2 >= len(s) {
				return "", fmt.Errorf("%q: truncated escape", s)
			}
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("%q: invalid escape %q", s, s[i:i+3])
			}
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// queryEscape is the inverse of queryUnescape: letters, digits and "-_.~" stay, a space becomes '+'
// and every other byte %XX.
func queryEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case onlyChars(s[i:i+1], "-_.~"):
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
