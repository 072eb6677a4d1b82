package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// HeaderRule is one action of a Route's spec.httpHeaders.actions, rendered in the Route's backend in
// list order: "http-request set-header|del-header" for the request list, "http-response ..." for the
// response list. The backend's rules run after the frontends' (ROUTER_HTTP_REQUEST_HEADERS, the
// forwarded headers) on a request and before them on a response, as in OpenShift's template, so a
// Route's request action wins over the router's and the router's response action over the Route's.
//
// A Set whose value is literal (no dynamic part) and short enough (MappedHeaderValue) takes its value
// from MapHeaderValues under Key, so that changing the value is a map entry, not a reload; Value is
// then empty. Any other Set writes Value into the rule.
type HeaderRule struct {
	// Action is HeaderSet or HeaderDelete.
	Action string `json:"action" yaml:"action"`
	// Name is the header name (CheckRouteHeaderName).
	Name string `json:"name" yaml:"name"`
	// Value is the log-format value a Set writes (CheckRouteHeaderValue); empty for a Delete and for
	// a Set whose value the map carries.
	Value string `json:"value,omitempty" yaml:"value,omitempty"`
	// Key is the MapHeaderValues key of a Set whose value the map carries (HeaderValueKey); empty
	// otherwise.
	Key string `json:"key,omitempty" yaml:"key,omitempty"`
}

// Limits of a Route's header actions (OpenShift's Route API and its validation in library-go).
const (
	// MaxRouteHeaderActions bounds each of the request and response lists.
	MaxRouteHeaderActions = 20
	// MaxRouteHeaderNameLength bounds a header name.
	MaxRouteHeaderNameLength = 255
	// MaxRouteHeaderValueLength bounds a Set value, in bytes.
	MaxRouteHeaderValueLength = 16384
	// MaxMappedHeaderValue bounds a value MapHeaderValues carries, encoded: a map file line and an
	// `add map` / `set map` command must fit HAProxy's buffer (tune.bufsize, at least 16384 here)
	// with room to spare. A longer literal value is written into its rule.
	MaxMappedHeaderValue = 4096
)

// ReservedRouteHeaders are the header names a Route's actions may not touch, in lower case (the
// Route API's rule; Strict-Transport-Security has its own annotation).
func ReservedRouteHeaders() []string {
	return []string{"strict-transport-security", "proxy", "cookie", "set-cookie"}
}

// CheckRouteHeaderName returns an error unless name is a header name the Route API accepts: 1-255
// characters of an HTTP token (letters, digits and "!#$%&'*+-.^_`|~"), not a reserved one
// (ReservedRouteHeaders, in any case). Written in single quotes (QuoteHeaderValue), such a name is
// one word of haproxy.cfg whatever it holds.
func CheckRouteHeaderName(name string) error {
	if name == "" || len(name) > MaxRouteHeaderNameLength {
		return fmt.Errorf("header name of %d bytes: want 1-%d", len(name), MaxRouteHeaderNameLength)
	}
	if !onlyChars(name, "!#$%&'*+-.^_`|~") {
		return fmt.Errorf("header name %s: want an HTTP token (letters, digits and \"!#$%%&'*+-.^_`|~\")", quoteValue(name))
	}
	lower := strings.ToLower(name)
	for _, r := range ReservedRouteHeaders() {
		if lower == r {
			return fmt.Errorf("header name %s: reserved, header actions may not modify %s", quoteValue(name),
				"Strict-Transport-Security, Proxy, Cookie or Set-Cookie")
		}
	}
	for _, r := range FramingHeaders() {
		if lower == r {
			return fmt.Errorf("header name %s: header actions may not modify the message framing (Content-Length, Transfer-Encoding): "+
				"HAProxy forwards the rewritten header without fixing the body, which desynchronises the connections it reuses", quoteValue(name))
		}
	}
	return nil
}

// FramingHeaders are the header names that frame an HTTP/1 message, in lower case. OpenShift's API
// lets a Route's actions set or delete them, but HAProxy does not fix the message to match: 2.6 sends
// both Content-Length and Transfer-Encoding to the server, 3.4 a Content-Length the body does not
// have, so a server or client reads the next message from the middle of this one, on a connection
// HAProxy may reuse for other clients of the Route. haroute refuses them (a deliberate difference).
func FramingHeaders() []string { return []string{"content-length", "transfer-encoding"} }

// CheckRouteHeaderValue returns an error unless v is a Set value the Route API accepts for the request
// (response false) or the response list: 1-MaxRouteHeaderValueLength bytes without control character,
// '%' only in "%%" or a dynamic value %[fetch(,converter)*] (optionally %{flags}[...]) whose fetch is
// req.hdr(<name>) on a request, res.hdr(<name>) on a response, or ssl_c_der, and whose converters are
// lower and base64.
func CheckRouteHeaderValue(v string, response bool) error {
	fetch := fetchReqHdr
	if response {
		fetch = fetchResHdr
	}
	return checkHeaderValue(v, MaxRouteHeaderValueLength, fetch)
}

// HeaderValueKey returns the MapHeaderValues key of action i of a backend's request (response false)
// or response list: "<backend>/req/<i>" or "<backend>/res/<i>".
func HeaderValueKey(backend string, response bool, i int) string {
	dir := "/req/"
	if response {
		dir = "/res/"
	}
	return backend + dir + strconv.Itoa(i)
}

// MappedHeaderValue returns the map value that carries Set value v (one that passed
// CheckRouteHeaderValue), and whether the map can carry it: v must be literal (no %[...]: "%%"
// stands for '%') and its encoding at most MaxMappedHeaderValue bytes. The encoding keeps letters,
// digits and "-._~!*(),/:=@" and writes every other byte as %XX, so that the value is one word of a
// map file and of a command line; the rule decodes it with url_dec, which gives back exactly the
// bytes HAProxy would write for v in the rule itself (checked on 2.6, 3.0, 3.2 and 3.4: spaces,
// quotes, backslashes and UTF-8 alike).
func MappedHeaderValue(v string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '%' {
			if i+1 >= len(v) || v[i+1] != '%' {
				return "", false // a dynamic value (or an invalid one)
			}
			i++
		}
		if onlyChars(string(c), "-._~!*(),/:=@") {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		if b.Len() > MaxMappedHeaderValue {
			return "", false
		}
	}
	if b.Len() == 0 {
		return "", false
	}
	return b.String(), true
}

// DecodeMappedHeaderValue returns the header value a MapHeaderValues value stands for (what url_dec
// makes of it): the inverse of MappedHeaderValue.
func DecodeMappedHeaderValue(enc string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		switch {
		case c == '%':
			if i+2 >= len(enc) {
				return "", fmt.Errorf("mapped header value %s: truncated escape", quoteValue(enc))
			}
			n, err := strconv.ParseUint(enc[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("mapped header value %s: invalid escape %q", quoteValue(enc), enc[i:i+3])
			}
			b.WriteByte(byte(n))
			i += 2
		case onlyChars(string(c), "-._~!*(),/:=@"):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("mapped header value %s: byte %q must be escaped", quoteValue(enc), c)
		}
	}
	return b.String(), nil
}

// RouteHeaderRules turns one list of a Route's header actions (checked) into the rules of its
// backend named backend, and the MapHeaderValues entries of the values the map carries (in list
// order; their keys are unique to the backend).
func RouteHeaderRules(backend string, response bool, actions []HeaderAction) ([]HeaderRule, []MapEntry) {
	if len(actions) == 0 {
		return nil, nil
	}
	rules := make([]HeaderRule, len(actions))
	var entries []MapEntry
	for i, a := range actions {
		rules[i] = HeaderRule{Action: a.Action, Name: a.Name}
		if a.Action != HeaderSet {
			continue
		}
		if enc, ok := MappedHeaderValue(a.Value); ok {
			rules[i].Key = HeaderValueKey(backend, response, i)
			entries = append(entries, MapEntry{Key: rules[i].Key, Value: enc})
			continue
		}
		rules[i].Value = a.Value
	}
	return rules, entries
}

// validateHeaderRules checks one list of a backend's header rules: at most MaxRouteHeaderActions,
// names and values as the Route API accepts them, a Set with either a value or the key
// HeaderValueKey gives it, and no rule on a tcp backend.
func (b *Backend) validateHeaderRules(rules []HeaderRule, response bool) error {
	list := "request"
	if response {
		list = "response"
	}
	if len(rules) > 0 && b.Mode != ModeHTTP {
		return fmt.Errorf("%s header rules need mode http", list)
	}
	if len(rules) > MaxRouteHeaderActions {
		return fmt.Errorf("%d %s header rules: at most %d", len(rules), list, MaxRouteHeaderActions)
	}
	var errs []error
	for i, r := range rules {
		add := func(err error) {
			if err != nil {
				errs = append(errs, fmt.Errorf("%s header rule %d: %w", list, i, err))
			}
		}
		add(CheckRouteHeaderName(r.Name))
		switch r.Action {
		case HeaderDelete:
			if r.Value != "" || r.Key != "" {
				add(errors.New("a Delete has no value"))
			}
		case HeaderSet:
			switch {
			case (r.Value == "") == (r.Key == ""):
				add(errors.New("a Set needs either a value or a map key"))
			case r.Key != "" && r.Key != HeaderValueKey(b.Name, response, i):
				add(fmt.Errorf("map key %q: want %q", r.Key, HeaderValueKey(b.Name, response, i)))
			case r.Value != "":
				add(CheckRouteHeaderValue(r.Value, response))
			}
		default:
			add(fmt.Errorf("action %q: want %s or %s", r.Action, HeaderSet, HeaderDelete))
		}
	}
	return errors.Join(errs...)
}
