package socket

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Version is an HAProxy version as `show info` (Version:) and `show proc` print it, e.g.
// "2.6.12-1+deb12u4" (Debian bookworm), "3.2.26-1", "3.5-dev3".
type Version struct {
	Major, Minor, Patch int
	// Text is the version as HAProxy printed it.
	Text string
}

// ParseVersion reads the "<major>.<minor>[.<patch>]" head of an HAProxy version string; whatever
// follows it (a Debian revision, "-dev3") is kept in Text only.
func ParseVersion(s string) (Version, error) {
	text := strings.TrimSpace(s)
	head := text
	if i := strings.IndexFunc(head, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		head = head[:i]
	}
	parts := strings.Split(strings.TrimSuffix(head, "."), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("haproxy version %q: want <major>.<minor>[.<patch>]", s)
	}
	nums := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return Version{}, fmt.Errorf("haproxy version %q: %q is not a number", s, p)
		}
		nums[i] = n
	}
	return Version{Major: nums[0], Minor: nums[1], Patch: nums[2], Text: text}, nil
}

// AtLeast reports whether v is major.minor or newer.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// AtLeastPatch reports whether v is major.minor.patch or later.
func (v Version) AtLeastPatch(major, minor, patch int) bool {
	if v.Major != major || v.Minor != minor {
		return v.AtLeast(major, minor)
	}
	return v.Patch >= patch
}

func (v Version) String() string {
	if v.Text != "" {
		return v.Text
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// Capabilities are the behaviours of the HAProxy CLI that haroute relies on and that change with the
// version. They are derived from the version HAProxy reports (CapabilitiesOf), never guessed from the
// wording of a reply. Each was checked on Debian's 2.6.12 (bookworm), 3.0.11 (trixie), 3.2.26 (sid)
// and 3.4.7 (experimental).
type Capabilities struct {
	Version Version
	// SyncReload (2.7+): the master answers `reload` with "Success=1|0" and the new worker's start-up
	// log; 2.6 answers nothing and the outcome is read from `show proc`.
	SyncReload bool
	// ReadyGatedReload (3.1+): "Success=1" only once the new worker is ready, and a `reload` sent
	// while another is in flight is refused ("Another reload is still in progress.").
	ReadyGatedReload bool
	// FailedReloadKeepsOldList (3.1+): after a failed reload the worker that keeps serving is listed
	// under "# old workers" and "# workers" is empty; the "[failed: N]" counter stops at 1. There
	// is no "# programs" section either.
	FailedReloadKeepsOldList bool
	// AddServerCookie (3.0+): `add server` accepts the `cookie` keyword, so a server added at runtime
	// gets the cookie value its configuration line has from 3.0 (model.ServerCookie, OpenShift's).
	// 2.6 refuses `cookie`, and computes a runtime server's dynamic cookie only when the server's
	// address or port changes.
	AddServerCookie bool
	// AddServerRefusesEnabled (3.0+): `add server … enabled` is refused (2.6 accepts it and starts the
	// server outside maintenance).
	AddServerRefusesEnabled bool
	// NothingChangedReply (3.0+): `set server … addr A port P` with nothing to change answers
	// "nothing changed" (2.6: "no need to change the addr, no need to change the port …").
	NothingChangedReply bool
	// DelMapDeletesOne (3.4+): `del map <map> <key>` deletes one entry of the key; earlier versions
	// delete every entry of it. haroute's maps never hold a key twice, so both do the same for it.
	DelMapDeletesOne bool
	// AddCAFile (2.7+): `add ssl ca-file` appends certificates to a CA file transaction, so a bundle
	// larger than one payload goes in parts. 2.6 has only `set ssl ca-file`, one payload.
	AddCAFile bool
	// LargePayloads (3.4+): a `<<` payload may exceed tune.bufsize; on 2.6–3.3 a payload longer than
	// tune.bufsize together with its command line makes HAProxy close the connection.
	LargePayloads bool
	// RuntimeCRLFile (3.2+): `commit ssl crl-file` leaves the certificates of the binds that use the
	// CRL file updatable at runtime. On 2.6 and 3.0 a later `commit ssl cert` of such a bind's
	// certificate answers Success but rebuilds nothing: the old certificate stays served until a
	// reload (seen by the oracle; TestListenerFilesRotateWithoutReload).
	RuntimeCRLFile bool
	// SNIAuto (3.3+): HAProxy sends the request's Host as SNI to a TLS server unless the server says
	// `no-sni-auto`, which haroute's configuration does (render.NoSNIAuto) and `add server` must too.
	SNIAuto bool
	// AddServerNoSNIAuto (3.4+): `add server` takes `no-sni-auto`; 3.3 refuses it, so a TLS server
	// cannot be added at runtime with the configuration's behaviour there.
	AddServerNoSNIAuto bool
	// DynamicBackends (3.4+): `add backend <name> from <named defaults>`, `publish backend`,
	// `unpublish backend` and `del backend` (AddBackend and friends).
	DynamicBackends bool
	// SafeBackendDeletion (3.4.4+): HAProxy's dumps of servers and backends (`show servers state|conn`,
	// `show backend`, `show errors`) are protected against a `del backend` running meanwhile (3.4.3,
	// changelog of 2026/07/29), and deleting the first backend no longer crashes (3.4.4, 2026/08/27).
	// haroute adds and deletes backends at runtime only from there (Instance).
	SafeBackendDeletion bool
}

// CapabilitiesOf returns the capabilities of HAProxy version v.
func CapabilitiesOf(v Version) Capabilities {
	return Capabilities{
		Version:                  v,
		SyncReload:               v.AtLeast(2, 7),
		ReadyGatedReload:         v.AtLeast(3, 1),
		FailedReloadKeepsOldList: v.AtLeast(3, 1),
		AddServerCookie:          v.AtLeast(3, 0),
		AddServerRefusesEnabled:  v.AtLeast(3, 0),
		NothingChangedReply:      v.AtLeast(3, 0),
		DelMapDeletesOne:         v.AtLeast(3, 4),
		SNIAuto:                  v.AtLeast(3, 3),
		AddServerNoSNIAuto:       v.AtLeast(3, 4),
		DynamicBackends:          v.AtLeast(3, 4),
		SafeBackendDeletion:      v.AtLeastPatch(3, 4, 4),
		AddCAFile:                v.AtLeast(2, 7),
		LargePayloads:            v.AtLeast(3, 4),
		RuntimeCRLFile:           v.AtLeast(3, 2),
	}
}

// DetectCapabilities asks HAProxy for its version (`show info` on an admin socket) and returns its
// capabilities.
func DetectCapabilities(ctx context.Context, r Runner) (Capabilities, error) {
	info, err := ShowInfo(ctx, r)
	if err != nil {
		return Capabilities{}, err
	}
	v, err := ParseVersion(info["Version"])
	if err != nil {
		return Capabilities{}, fmt.Errorf("show info: %w", err)
	}
	return CapabilitiesOf(v), nil
}
