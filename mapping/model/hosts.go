package model

import "strings"

// ParentDomain returns host without its first label ("a.example.com" gives "example.com"), or "" for
// a single-label host. It is the domain a wildcard Route of the host covers.
func ParentDomain(host string) string {
	if i := strings.IndexByte(host, '.'); i >= 0 {
		return host[i+1:]
	}
	return ""
}
