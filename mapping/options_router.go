package mapping

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// OpenSSL cipher lists that ROUTER_CIPHERS may name instead of a list: Mozilla's server-side TLS
// recommendations as OpenShift's router renders them (the "modern" list is Mozilla's TLS 1.2 one).
const (
	ciphersModern = "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:" +
		"ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" +
		"ECDHE-ECDSA-AES256-SHA384:ECDHE-RSA-AES256-SHA384:ECDHE-ECDSA-AES128-SHA256:ECDHE-RSA-AES128-SHA256"
	ciphersIntermediate = "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:" +
		"ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" +
		"DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-SHA256:ECDHE-RSA-AES128-SHA256:" +
		"ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES256-SHA384:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384:" +
		"ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA:DHE-RSA-AES128-SHA256:DHE-RSA-AES128-SHA:DHE-RSA-AES256-SHA256:" +
		"DHE-RSA-AES256-SHA:ECDHE-ECDSA-DES-CBC3-SHA:ECDHE-RSA-DES-CBC3-SHA:EDH-RSA-DES-CBC3-SHA:AES128-GCM-SHA256:" +
		"AES256-GCM-SHA384:AES128-SHA256:AES256-SHA256:AES128-SHA:AES256-SHA:DES-CBC3-SHA:!DSS"
	ciphersOld = "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256:" +
		"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384:" +
		"DHE-RSA-AES128-GCM-SHA256:DHE-DSS-AES128-GCM-SHA256:kEDH+AESGCM:ECDHE-RSA-AES128-SHA256:" +
		"ECDHE-ECDSA-AES128-SHA256:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES256-SHA384:" +
		"ECDHE-ECDSA-AES256-SHA384:ECDHE-RSA-AES256-SHA:ECDHE-ECDSA-AES256-SHA:DHE-RSA-AES128-SHA256:" +
		"DHE-RSA-AES128-SHA:DHE-DSS-AES128-SHA256:DHE-RSA-AES256-SHA256:DHE-DSS-AES256-SHA:DHE-RSA-AES256-SHA:" +
		"ECDHE-RSA-DES-CBC3-SHA:ECDHE-ECDSA-DES-CBC3-SHA:EDH-RSA-DES-CBC3-SHA:AES128-GCM-SHA256:AES256-GCM-SHA384:" +
		"AES128-SHA256:AES256-SHA256:AES128-SHA:AES256-SHA:AES:DES-CBC3-SHA:HIGH:SEED:!aNULL:!eNULL:!EXPORT:!DES:" +
		"!RC4:!MD5:!PSK:!RSAPSK:!aDH:!aECDH:!EDH-DSS-DES-CBC3-SHA:!KRB5-DES-CBC3-SHA:!SRP"
)

// DefaultTLSProfile is OpenShift's TLS profile when no variable says otherwise: TLS 1.2 and newer,
// the intermediate cipher list, 2048-bit DHE parameters.
func DefaultTLSProfile() model.TLSProfile {
	p, _ := cipherProfile("intermediate")
	p.MinVersion = "TLSv1.2"
	return p
}

// cipherProfile resolves a ROUTER_CIPHERS value: one of the named lists (with its DH size), or a
// list given as it is (2048-bit DH).
func cipherProfile(v string) (model.TLSProfile, error) {
	switch v {
	case "", "intermediate":
		return model.TLSProfile{Ciphers: ciphersIntermediate, DHParamBits: 2048}, nil
	case "modern":
		return model.TLSProfile{Ciphers: ciphersModern, DHParamBits: 2048}, nil
	case "old":
		return model.TLSProfile{Ciphers: ciphersOld, DHParamBits: 1024}, nil
	}
	if err := model.CheckTLSList(v, "-_:+!@=."); err != nil {
		return model.TLSProfile{}, fmt.Errorf("want modern, intermediate, old or an OpenSSL cipher list: %w", err)
	}
	return model.TLSProfile{Ciphers: v, DHParamBits: 2048}, nil
}

// routerOptionsFromEnv reads the TLS profile and the HTTP and listener options of OpenShift's
// IngressController into o, reporting each malformed value through fail (name, value and what is
// accepted). Unset variables keep o's values.
func routerOptionsFromEnv(getenv func(string) string, o *Options, fail func(error)) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	failf := func(name, v, format string, args ...any) {
		fail(fmt.Errorf("%s=%q: "+format, append([]any{name, v}, args...)...))
	}
	boolean := func(name string, dst *bool) {
		if v := get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				failf(name, v, "want true or false")
				return
			}
			*dst = b
		}
	}

	// The TLS profile. An empty ROUTER_CIPHERS is the intermediate list, as the ingress operator
	// writes an empty one for a profile with TLS 1.3 ciphers only.
	if v := get("ROUTER_CIPHERS"); v != "" {
		p, err := cipherProfile(v)
		if err != nil {
			failf("ROUTER_CIPHERS", v, "%v", err)
		} else {
			o.TLS.Ciphers, o.TLS.DHParamBits = p.Ciphers, p.DHParamBits
		}
	}
	if v := get("ROUTER_CIPHERSUITES"); v != "" {
		if err := model.CheckTLSList(v, "-_:"); err != nil {
			failf("ROUTER_CIPHERSUITES", v, "want TLS 1.3 cipher suites separated by ':', e.g. TLS_AES_128_GCM_SHA256: %v", err)
		} else {
			o.TLS.CipherSuites = v
		}
	}
	if v := get("ROUTER_CURVES"); v != "" {
		// HAProxy wants ':' between groups; the metrics listener of OpenShift's router also takes ','.
		list := strings.ReplaceAll(v, ",", ":")
		if err := model.CheckTLSList(list, "-_:?"); err != nil {
			failf("ROUTER_CURVES", v, "want key-exchange groups separated by ':', e.g. X25519:secp256r1: %v", err)
		} else {
			o.TLS.Curves = list
		}
	}
	for _, tv := range []struct {
		name string
		dst  *string
	}{{"SSL_MIN_VERSION", &o.TLS.MinVersion}, {"SSL_MAX_VERSION", &o.TLS.MaxVersion}} {
		if v := get(tv.name); v != "" {
			if !slices.Contains(model.TLSVersions(), v) {
				failf(tv.name, v, "want one of %s", strings.Join(model.TLSVersions(), ", "))
				continue
			}
			*tv.dst = v
		}
	}

	h := &o.HTTP
	if v := get("ROUTER_MAX_REWRITE_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<20 {
			failf("ROUTER_MAX_REWRITE_SIZE", v, "want a number of bytes in 1-%d", 1<<20)
		} else {
			h.MaxRewrite = n
		}
	}
	boolean("ROUTER_HTTP_IGNORE_PROBES", &h.IgnoreProbes)
	boolean("ROUTER_IDLE_CLOSE_ON_RESPONSE", &h.IdleCloseOnResponse)
	boolean("ROUTER_ABORT_ON_CLOSE", &h.AbortOnClose)
	boolean("ROUTER_HAPROXY_CONTSTATS", &h.ContStats)
	boolean("ROUTER_STRICT_SNI", &h.StrictSNI)
	boolean("ROUTER_DISABLE_HTTP2", &h.DisableHTTP2)
	boolean("ROUTER_USE_PROXY_PROTOCOL", &h.ProxyProtocol)
	boolean("ROUTER_MUTUAL_TLS_HEADER_FILTER", &h.StripClientSSLHeaders)
	if v := get("ROUTER_IP_V4_V6_MODE"); v != "" {
		switch v {
		case model.IPModeV4, model.IPModeV6, model.IPModeV4V6:
			h.IPMode = v
		default:
			failf("ROUTER_IP_V4_V6_MODE", v, "want %s, %s or %s", model.IPModeV4, model.IPModeV6, model.IPModeV4V6)
		}
	}

	compress := false
	boolean("ROUTER_ENABLE_COMPRESSION", &compress)
	types := "text/html text/plain text/css"
	if v := get("ROUTER_COMPRESSION_MIME"); v != "" {
		types = v
	}
	if ts, err := model.ParseMIMETypes(types); err != nil {
		failf("ROUTER_COMPRESSION_MIME", types, "want MIME types separated by spaces: %v", err)
	} else if compress {
		if len(ts) == 0 {
			failf("ROUTER_COMPRESSION_MIME", types, "ROUTER_ENABLE_COMPRESSION is true: want at least one MIME type")
		}
		h.CompressionTypes = model.FormatMIMETypes(ts)
	}

	name, format := get("ROUTER_UNIQUE_ID_HEADER_NAME"), get("ROUTER_UNIQUE_ID_FORMAT")
	switch {
	case name == "" && format == "":
	case name == "" || format == "":
		// OpenShift renders a unique ID only when both are set; one without the other is a mistake.
		fail(fmt.Errorf("ROUTER_UNIQUE_ID_HEADER_NAME=%q and ROUTER_UNIQUE_ID_FORMAT=%q: set both or neither", name, format))
	default:
		f, err := ParseLogFormat(format)
		if err != nil {
			failf("ROUTER_UNIQUE_ID_FORMAT", format, "%v", err)
		}
		if _, err := model.ParseCaptureHeaders(name + ":1"); err != nil {
			failf("ROUTER_UNIQUE_ID_HEADER_NAME", name, "want an HTTP header name")
		}
		h.UniqueIDFormat, h.UniqueIDHeader = f, name
	}

	if v := get("ROUTER_H1_CASE_ADJUST"); v != "" {
		var names []string
		for _, n := range strings.Split(v, ",") {
			if _, err := model.ParseCaptureHeaders(n + ":1"); err != nil {
				failf("ROUTER_H1_CASE_ADJUST", v, "want HTTP header names separated by ',', each with the case to send: %q is not one", n)
				names = nil
				break
			}
			names = append(names, n)
		}
		h.CaseAdjust = strings.Join(names, ",")
	}
	for _, hv := range []struct {
		name  string
		dst   *string
		parse func(string) ([]model.HeaderAction, error)
	}{
		{"ROUTER_HTTP_REQUEST_HEADERS", &h.RequestHeaders, model.ParseRequestHeaderActions},
		{"ROUTER_HTTP_RESPONSE_HEADERS", &h.ResponseHeaders, model.ParseResponseHeaderActions},
	} {
		if v := get(hv.name); v != "" {
			as, err := hv.parse(v)
			if err != nil {
				failf(hv.name, v, "%v", err)
				continue
			}
			*hv.dst = model.FormatHeaderActions(as)
		}
	}
	h.NotFound = get("ROUTER_ERRORFILE_404") != ""

	// Mutual TLS. "none" (OpenShift's default) asks for no certificate; the subject filter only means
	// something with one, and is ignored without, as OpenShift does.
	switch v := strings.ToLower(get("ROUTER_MUTUAL_TLS_AUTH")); v {
	case "", "none":
	case model.ClientVerifyOptional, model.ClientVerifyRequired:
		o.ClientTLS.Verify = v
		if f := get("ROUTER_MUTUAL_TLS_AUTH_FILTER"); f != "" {
			if err := model.CheckClientFilter(f); err != nil {
				failf("ROUTER_MUTUAL_TLS_AUTH_FILTER", f, "%v", err)
			} else {
				o.ClientTLS.Filter = f
			}
		}
	default:
		failf("ROUTER_MUTUAL_TLS_AUTH", v, "want none, %s or %s", model.ClientVerifyOptional, model.ClientVerifyRequired)
	}
}
