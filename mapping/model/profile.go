package model

// Backend profiles: every Route backend is rendered (and, on HAProxy 3.4+, added at runtime) from
// a named defaults section that carries what Routes share — mode, balance algorithm, the health
// check timeout and the sticky-cookie engine — so that a backend added with `add backend <name>
// from <profile>` is the very backend a reload renders. The profiles themselves inherit the main
// defaults section (MainDefaults).

// MainDefaults names the defaults section of the frontends and of the router's own backends; the
// profiles inherit it.
const MainDefaults = "haroute"

// Profile is one backend profile: a mode, a balance algorithm and whether the sticky cookie is on.
type Profile struct {
	Name    string
	Mode    Mode
	Balance string
	Cookie  bool
}

// ProfileName returns the name of the profile of a backend of the given mode and balance, with or
// without the sticky cookie, e.g. "haroute_http_random_cookie" or "haroute_tcp_source".
func ProfileName(mode Mode, balance string, cookie bool) string {
	n := MainDefaults + "_" + string(mode) + "_" + balance
	if cookie {
		n += "_cookie"
	}
	return n
}

// Profile returns the name of the backend's profile.
func (b Backend) Profile() string { return ProfileName(b.Mode, b.Balance, b.Cookie != nil) }

// Profiles lists every profile a backend can have: HTTP ones with and without the cookie, TCP
// ones without, for each balance algorithm (BalanceAlgorithms), in that order.
func Profiles() []Profile {
	var out []Profile
	for _, mode := range []Mode{ModeHTTP, ModeTCP} {
		for _, balance := range BalanceAlgorithms() {
			for _, cookie := range []bool{false, true} {
				if cookie && mode != ModeHTTP {
					continue
				}
				out = append(out, Profile{Name: ProfileName(mode, balance, cookie), Mode: mode, Balance: balance, Cookie: cookie})
			}
		}
	}
	return out
}

// OwnLines names the options of the backend that its profile cannot carry: each is rendered in the
// backend's own section, so that HAProxy 3.4 cannot add such a backend at runtime (`add backend`
// copies its profile alone). Empty when the profile and the server lines say everything: the
// backend's name, profile and servers then make the whole backend, at runtime as in a reload.
func (b *Backend) OwnLines() []string {
	var out []string
	add := func(name string, has bool) {
		if has {
			out = append(out, name)
		}
	}
	// HTTP backends' timeouts come from MapTimeoutServer and MapTimeoutTunnel.
	add("timeoutServer", b.TimeoutServer != "" && b.Mode == ModeTCP)
	add("timeoutTunnel", b.TimeoutTunnel != "" && b.Mode == ModeTCP)
	add("allowlist", len(b.Allowlist) > 0)
	add("rateLimit", b.RateLimit != nil)
	add("rewrite", b.Rewrite != nil)
	add("caseAdjustServer", b.CaseAdjustServer)
	add("requestHeaders", len(b.RequestHeaders) > 0)
	add("responseHeaders", len(b.ResponseHeaders) > 0)
	return out
}
