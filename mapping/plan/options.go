package plan

import (
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// optionDiff returns the names of the backend options in which a and b differ: every Backend field
// except Name, Route, Spare, Retired, Servers and ForwardedHeaders (a map entry carries the policy:
// model.MapForwardedHeaders), and the timeouts of HTTP backends (model.MapTimeoutServer and
// model.MapTimeoutTunnel carry them), and HSTS (model.MapHSTS). The header rules count as "requestHeaders" and "responseHeaders"; the
// literal values the map carries (model.MapHeaderValues) are not part of them. A cookie name or key that equals the default of its
// own backend's name (model.DefaultCookieName / DefaultCookieKey) counts as "default", so a default
// cookie matches a default cookie under another backend name. TLS settings compare by value (the CA
// file name). The result is empty when the options are the same.
func optionDiff(a, b *model.Backend) []string {
	if sameOptions(a, b) {
		return nil
	}
	return optionNames(a, b)
}

// optionNames is optionDiff without the fast check.
func optionNames(a, b *model.Backend) []string {
	var out []string
	diff := func(name string, differs bool) {
		if differs {
			out = append(out, name)
		}
	}
	diff("kind", a.Kind != b.Kind)
	diff("mode", a.Mode != b.Mode)
	diff("balance", a.Balance != b.Balance)
	diff("cookie", !sameCookie(a, b))
	diff("timeoutServer", !sameTimeouts(a, b) && a.TimeoutServer != b.TimeoutServer)
	diff("timeoutTunnel", !sameTimeouts(a, b) && a.TimeoutTunnel != b.TimeoutTunnel)
	diff("checkInterval", a.CheckInterval != b.CheckInterval)
	diff("allowlist", !slices.Equal(a.Allowlist, b.Allowlist))
	diff("rateLimit", !equalPtr(a.RateLimit, b.RateLimit))
	diff("rewrite", !equalPtr(a.Rewrite, b.Rewrite))
	diff("serverMaxConn", a.ServerMaxConn != b.ServerMaxConn)
	diff("caseAdjustServer", a.CaseAdjustServer != b.CaseAdjustServer)
	diff("tls", !equalPtr(a.TLS, b.TLS))
	diff(optRequestHeaders, !slices.Equal(a.RequestHeaders, b.RequestHeaders))
	diff(optResponseHeaders, !slices.Equal(a.ResponseHeaders, b.ResponseHeaders))
	return out
}

// The option names of the header rules: a difference in them alone is HeaderActionsChanged.
const (
	optRequestHeaders  = "requestHeaders"
	optResponseHeaders = "responseHeaders"
)

// optionsChanged is the structural reason of a backend whose options differ (diffs, optionDiff's
// names): HeaderActionsChanged when only its header rules do, else BackendOptionsChanged.
func optionsChanged(subject string, diffs []string) Reason {
	kind := HeaderActionsChanged
	for _, d := range diffs {
		if d != optRequestHeaders && d != optResponseHeaders {
			kind = BackendOptionsChanged
			break
		}
	}
	return Reason{Kind: kind, Subject: subject, Detail: strings.Join(diffs, ", ")}
}

// sameOptions reports whether optionDiff(a, b) is empty, without naming the differences: the check
// every matched backend goes through, so it allocates nothing.
func sameOptions(a, b *model.Backend) bool {
	return a.Kind == b.Kind && a.Mode == b.Mode && a.Balance == b.Balance &&
		sameTimeouts(a, b) &&
		a.CheckInterval == b.CheckInterval && a.ServerMaxConn == b.ServerMaxConn &&
		a.CaseAdjustServer == b.CaseAdjustServer &&
		slices.Equal(a.Allowlist, b.Allowlist) && equalPtr(a.RateLimit, b.RateLimit) &&
		equalPtr(a.Rewrite, b.Rewrite) && equalPtr(a.TLS, b.TLS) &&
		slices.Equal(a.RequestHeaders, b.RequestHeaders) && slices.Equal(a.ResponseHeaders, b.ResponseHeaders) &&
		(a.Cookie == b.Cookie || sameCookie(a, b))
}

// sameTimeouts compares the timeouts of two backends as options: those of HTTP backends are not,
// model.MapTimeoutServer and model.MapTimeoutTunnel carry them.
func sameTimeouts(a, b *model.Backend) bool {
	if a.Mode == model.ModeHTTP && b.Mode == model.ModeHTTP {
		return true
	}
	return a.TimeoutServer == b.TimeoutServer && a.TimeoutTunnel == b.TimeoutTunnel
}

// equalPtr reports whether two pointers to comparable values are both nil or point to equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameCookie compares the cookies of two backends (their presence and dynamic-cookie keys, a
// default key matching a default one).
func sameCookie(a, b *model.Backend) bool {
	ca, cb := a.Cookie, b.Cookie
	if ca == nil || cb == nil {
		return ca == cb
	}
	if a.Name == b.Name {
		// The same defaults apply to both sides: compare as they are (and skip the hashing).
		return ca.Key == cb.Key
	}
	// The name is not an option: model.MapCookieNames carries it.
	return cookieWord(ca.Key, model.DefaultCookieKey(a.Name)) == cookieWord(cb.Key, model.DefaultCookieKey(b.Name))
}

// cookieWord returns v, or a marker no cookie name or key can hold when v is the backend's default.
func cookieWord(v, def string) string {
	if v == def {
		return "\x00default"
	}
	return v
}

// spareFit says whether a new desired backend d can be served by a spare: nil when it can, else the
// options that keep it from doing so. appliedCA reports whether an absolute (default) CA path is
// already in use by an applied backend; modelCA whether a CA file name is one of desired's CA files.
func spareFit(s *model.Settings, d *model.Backend, appliedCA, modelCA func(string) bool) []string {
	if d.Kind.Prefix() == "" {
		return []string{"kind"}
	}
	if !isVariant(s, d.Kind, d.Balance) {
		return []string{"balance"}
	}
	tmpl := spareTemplate(s, d.Kind, d.Balance, d.Name)
	tmpl.TLS = d.TLS // checked below
	return append(optionDiff(&tmpl, d), tlsFit(d, appliedCA, modelCA)...)
}

// idleFits reports whether an idle backend a (retired: its Route was deleted or rejected; without
// servers, and a reencrypt one without TLS settings) can serve desired backend d again: the same
// options, the CA file aside, which the match sets as a spare claim does when HAProxy can load it.
func idleFits(a, d *model.Backend, appliedCA, modelCA func(string) bool) bool {
	t := *a
	t.TLS = d.TLS
	return len(optionDiff(&t, d)) == 0 && len(tlsFit(d, appliedCA, modelCA)) == 0
}

// tlsFit says whether the TLS settings of a new desired backend d can go onto a backend HAProxy
// runs without any (a spare, an idle backend): only a reencrypt backend has them, and its CA file
// must be one HAProxy can load at runtime (in the model) or the default destination CA that an
// applied backend uses already. nil when they can; else what keeps them from it.
func tlsFit(d *model.Backend, appliedCA, modelCA func(string) bool) []string {
	switch {
	case d.Kind != model.KindReencrypt:
		if d.TLS != nil {
			return []string{"tls"}
		}
	case d.TLS == nil:
		return []string{"tls"}
	case strings.HasPrefix(d.TLS.CAFile, "/"):
		if !appliedCA(d.TLS.CAFile) {
			return []string{"tls (default destination CA " + d.TLS.CAFile + " is not loaded)"}
		}
	case !modelCA(d.TLS.CAFile):
		return []string{"tls (CA file " + d.TLS.CAFile + " is not in the model)"}
	}
	return nil
}
