package model

import (
	"crypto/sha256"
	"encoding/hex"
)

// DefaultCookieName is the sticky-session cookie name of a backend without a cookie_name annotation:
// hex of the first 16 bytes of SHA-256 of the backend name, stable and revealing nothing of the Route.
func DefaultCookieName(backend string) string {
	sum := sha256.Sum256([]byte(backend))
	return hex.EncodeToString(sum[:16])
}

// DefaultCookieKey is a backend's dynamic-cookie-key: hex SHA-256 of "haroute:" + backend name.
func DefaultCookieKey(backend string) string {
	sum := sha256.Sum256([]byte("haroute:" + backend))
	return hex.EncodeToString(sum[:])
}
