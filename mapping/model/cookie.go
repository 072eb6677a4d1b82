package model

import (
	"crypto/md5" //nolint:gosec // OpenShift's cookie names and values are MD5 hex; not a security use.
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// DefaultCookieName is the sticky-session cookie name of a backend when neither the Route's
// cookie_name annotation nor ROUTER_COOKIE_NAME gives one. It is the name OpenShift's router gives
// the Route: the MD5 hex of its routing key, which is " <namespace>:<name>" (the router builds the
// key as "<termination> <namespace>:<name>" before it has set the termination, so the termination
// part is always empty). A backend's name is "<kind prefix>:<namespace>:<name>", so the key is what
// follows the first ':' of it; a spare backend's name gives a name of its own the same way.
func DefaultCookieName(backend string) string {
	_, key, _ := strings.Cut(backend, ":")
	sum := md5.Sum([]byte(" " + key)) //nolint:gosec // see the import
	return hex.EncodeToString(sum[:])
}

// ServerCookie is the sticky-session cookie value of a server: the MD5 hex of its name, which is
// OpenShift's endpoint id ("pod:<pod>:<service>:<port name>:<ip>:<port>"), as OpenShift's router
// writes it on the server line. Two routers, stock or haroute, fed the same objects give a pod the
// same value. HAProxy 3.0 and later accept it in `add server` too; before 3.0 haroute uses HAProxy's
// dynamic cookies (Cookie.Key), whose values differ from OpenShift's.
func ServerCookie(server string) string {
	sum := md5.Sum([]byte(server)) //nolint:gosec // see the import
	return hex.EncodeToString(sum[:])
}

// DefaultCookieKey is a backend's dynamic-cookie-key (HAProxy before 3.0): hex SHA-256 of
// "haroute:" + backend name.
func DefaultCookieKey(backend string) string {
	sum := sha256.Sum256([]byte("haroute:" + backend))
	return hex.EncodeToString(sum[:])
}
