package model

import "slices"

// Equal reports whether b and o hold the same backend: every field equal, pointed-to values compared
// by value, and a nil slice equal to an empty one (they render the same). It is the cheap comparison
// of the update path, which compares every backend of a large state on every change; reflect.DeepEqual
// does the same work several times slower.
func (b *Backend) Equal(o *Backend) bool {
	if b == o {
		return true
	}
	if b == nil || o == nil {
		return false
	}
	return b.Name == o.Name && b.Kind == o.Kind && b.Mode == o.Mode && b.Route == o.Route &&
		b.Spare == o.Spare && b.Retired == o.Retired && b.Removing == o.Removing && b.Balance == o.Balance &&
		b.TimeoutServer == o.TimeoutServer && b.TimeoutTunnel == o.TimeoutTunnel &&
		b.CheckInterval == o.CheckInterval && b.ForwardedHeaders == o.ForwardedHeaders &&
		b.HSTS == o.HSTS && b.ServerMaxConn == o.ServerMaxConn && b.CaseAdjustServer == o.CaseAdjustServer &&
		equalPtr(b.Cookie, o.Cookie) && equalPtr(b.RateLimit, o.RateLimit) &&
		equalPtr(b.Rewrite, o.Rewrite) && equalPtr(b.TLS, o.TLS) &&
		slices.Equal(b.Allowlist, o.Allowlist) && slices.Equal(b.RequestHeaders, o.RequestHeaders) &&
		slices.Equal(b.ResponseHeaders, o.ResponseHeaders) && slices.Equal(b.Servers, o.Servers)
}

// equalPtr reports whether two pointers to comparable values are both nil or point to equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || *a == *b
}
