package parity

import (
	"net"
	"strings"
)

// Request is one request of the corpus, sent the same way to every router.
type Request struct {
	// ID names the request in answers, reports and known differences: "<group>/<name>", stable.
	ID string
	// HTTPS sends the request over TLS to the router's HTTPS port; otherwise to its HTTP port.
	HTTPS bool
	// Host is the Host header, exactly as sent (case, port and trailing dot included).
	Host string
	// SNI is the TLS server name; empty means Host without its port and trailing dot, NoSNI none.
	SNI string
	// Path is the request target (default "/"), sent as it is, query included.
	Path string
	// Header are more request headers, in order ("Name", "value" pairs).
	Header [][2]string
	// Session names a cookie jar: the request sends the cookies that earlier answers of the same
	// session set on the same router, and keeps the ones its answer sets.
	Session string
	// StockCookie sends the sticky-session cookie the stock router issues for a pod (see
	// StockCookie), as a client coming from a stock router replica would.
	StockCookie *StockCookie
	// Source is the client's address (default 127.0.0.1), for allowlists.
	Source string
	// Repeat sends the request that many times; the answer then holds the statuses and the pods seen.
	Repeat int
	// Hold keeps that many slow requests to the same host open while the request is sent (they
	// count as concurrent connections of the client).
	Hold int
	// ALPN are the protocols offered in the TLS handshake (default http/1.1 only).
	ALPN []string
	// HandshakeOnly stops after the TLS handshake: the answer holds the certificate and protocol.
	HandshakeOnly bool
	// AnyPodOf names the Service among whose pods the router picks one at random for this request
	// (no cookie yet, and the stock router's default balance is random): a pod of that Service is
	// compared as "any of <service>".
	AnyPodOf string
	// SamePodAs names an earlier request of the same session: a pod equal to the one that answered
	// it is written "=<that request's ID>", so that stickiness compares whatever pod was picked.
	SamePodAs string
	// Note says what the request checks.
	Note string
}

// NoSNI as Request.SNI sends no server name.
const NoSNI = "-"

// StockCookie is the sticky-session cookie the stock router would have set for Pod of Service,
// served by Route in Namespace: the cookie name is Name when set (router.openshift.io/cookie_name),
// otherwise the stock default derived from the Route; the value is the stock router's hash of the
// pod's endpoint (see Endpoints.StockValue).
type StockCookie struct {
	Namespace, Route, Service, Pod string
	// Name replaces the stock default name; Value, the value (one that names no pod).
	Name, Value string
}

// sni returns the server name the request's TLS handshake sends ("" for none).
func (r Request) sni() string {
	switch r.SNI {
	case NoSNI:
		return ""
	case "":
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		return strings.TrimSuffix(host, ".")
	}
	return r.SNI
}

// path returns the request target.
func (r Request) path() string {
	if r.Path == "" {
		return "/"
	}
	return r.Path
}

// scheme returns "https" or "http".
func (r Request) scheme() string {
	if r.HTTPS {
		return "https"
	}
	return "http"
}

// hostOnly returns host without port and trailing dot.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(host, ".")
}
