package dataplane

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/haproxytech/client-native/v6/models"

	"github.com/haroute/haroute/runtime/socket"
)

// Every function here sends `show …` commands through a socket.Runner and converts the checked
// reply into client-native models. Errors wrap runtime/socket's: socket.ErrNotFound for a backend,
// server, map or certificate HAProxy does not have, socket.ErrInvalid for a name refused before
// sending, socket.ErrUnavailable when the socket cannot be reached, socket.ErrUnexpectedReply for a
// reply that does not parse.

// Servers returns the servers of backend as HAProxy runs them (`show servers state <backend>`), in
// HAProxy's order; an empty list for a backend without servers.
func Servers(ctx context.Context, r socket.Runner, backend string) (models.RuntimeServers, error) {
	if backend == "" {
		return nil, fmt.Errorf("servers: %w: empty backend name", socket.ErrInvalid)
	}
	states, err := socket.ShowServersState(ctx, r, backend)
	if err != nil {
		return nil, fmt.Errorf("servers of backend %s: %w", backend, err)
	}
	out := models.RuntimeServers{}
	for _, s := range states {
		if s.Backend == backend {
			out = append(out, RuntimeServer(s))
		}
	}
	return out, nil
}

// Server returns server name of backend; an error wrapping socket.ErrNotFound when the backend
// has no server of that name.
func Server(ctx context.Context, r socket.Runner, backend, name string) (*models.RuntimeServer, error) {
	servers, err := Servers(ctx, r, backend)
	if err != nil {
		return nil, err
	}
	for _, s := range servers {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("server %s/%s: %w", backend, name, socket.ErrNotFound)
}

// Bits of srv_admin_state (`show servers state`): the server is in maintenance when any bit but the
// two drain bits is set, draining when only drain bits are set.
const (
	adminDrainBits = 0x08 | 0x10 // FDRAIN (forced), IDRAIN (inherited from a tracked server)
)

// Values of srv_op_state.
const (
	opStopped  = 0
	opStarting = 1
	opRunning  = 2
	opStopping = 3
)

// RuntimeServer converts one row of `show servers state` into the Data Plane API's runtime server:
// admin_state is maint when a maintenance bit is set (forced, inherited, from the configuration, or
// from a failed resolution), else drain when a drain bit is set, else ready; operational_state is
// down for a stopped server, up for a starting or running one, stopping for a stopping one, and
// empty for a value HAProxy does not document. weight is the current (user) weight. An address of
// "-" (a server without one) is left empty and a port of 0 unset.
func RuntimeServer(s socket.ServerState) *models.RuntimeServer {
	rs := &models.RuntimeServer{
		ID:               strconv.Itoa(s.ServerID),
		Name:             s.Server,
		BackendName:      s.Backend,
		BackendID:        int64Ptr(s.BackendID),
		AdminState:       adminState(s.AdminState),
		OperationalState: operationalState(s.OpState),
		Weight:           int64Ptr(s.UserWeight),
		Uweight:          int64Ptr(s.UserWeight),
		Iweight:          int64Ptr(s.InitWeight),
		CheckStatus:      int64Ptr(s.CheckStatus),
		CheckState:       int64Ptr(s.CheckState),
		UseSsl:           &s.UseSSL,
	}
	if s.Addr != "-" {
		rs.Address = s.Addr
	}
	if s.Port != 0 {
		rs.Port = int64Ptr(s.Port)
	}
	return rs
}

func adminState(bits int) string {
	switch {
	case bits&^adminDrainBits != 0:
		return "maint"
	case bits&adminDrainBits != 0:
		return "drain"
	default:
		return "ready"
	}
}

func operationalState(op int) string {
	switch op {
	case opStopped:
		return "down"
	case opStarting, opRunning:
		return "up"
	case opStopping:
		return "stopping"
	default:
		return ""
	}
}

// MapEntries returns the live entries of the map file at mapPath (`show map <mapPath>`), in HAProxy's
// order; an empty list for an empty map. The entries' id (HAProxy's address of the entry) is not
// read: the view does not address single entries.
func MapEntries(ctx context.Context, r socket.Runner, mapPath string) (models.MapEntries, error) {
	entries, err := socket.ShowMap(ctx, r, mapPath)
	if err != nil {
		return nil, fmt.Errorf("entries of map %s: %w", mapPath, err)
	}
	out := make(models.MapEntries, 0, len(entries))
	for _, e := range entries {
		out = append(out, &models.MapEntry{Key: e.Key, Value: e.Value})
	}
	return out, nil
}

// sessionOpener is a Runner that can open one connection for many commands (a *socket.Admin).
type sessionOpener interface {
	Session(ctx context.Context) (*socket.Session, error)
}

// Certificates returns every certificate HAProxy holds (`show ssl cert`), each with what `show ssl
// cert <path>` tells about it (see Certificate), in HAProxy's order. A listed certificate HAProxy
// then does not show (deleted in between) is returned with its names only.
//
// That is one command per certificate: when r can open a session (a *socket.Admin can), they are
// sent on one connection, which takes half the time of a connection per command (see
// BenchmarkRead1000: about 55 ms instead of 110 ms for 1,000 certificates on 2 cores).
func Certificates(ctx context.Context, r socket.Runner) (models.SslCertificates, error) {
	paths, err := socket.ShowCertPaths(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	each := r
	if o, ok := r.(sessionOpener); ok && len(paths) > 1 {
		// Without a session (it could not be opened) each read goes through r, which reports its
		// own error if the socket is gone.
		if s, err := o.Session(ctx); err == nil {
			defer s.Close()
			each = s
		}
	}
	out := make(models.SslCertificates, 0, len(paths))
	for _, p := range paths {
		c, err := Certificate(ctx, each, p)
		if errors.Is(err, socket.ErrNotFound) {
			c = &models.SslCertificate{File: p, StorageName: p, Description: path.Base(p)}
		} else if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Certificate returns what `show ssl cert <certPath>` tells about a loaded certificate:
// storage_name and file are HAProxy's name for it (the path it was loaded from), description its
// base name; status (Used or Unused), serial, not_before and not_after (unset when HAProxy's date
// does not parse), algorithm, the SHA-1 fingerprint, subject, issuers (the leaf's issuer),
// subject_alternative_names as HAProxy prints them ("DNS:a.example.com, DNS:b.example.com"), domains
// and ip_addresses (the DNS and IP names of the SAN, comma-separated), and chain_subject and
// chain_issuer of the first further certificate of the file, when there is one.
func Certificate(ctx context.Context, r socket.Runner, certPath string) (*models.SslCertificate, error) {
	d, err := socket.ShowCertDetails(ctx, r, certPath)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", certPath, err)
	}
	name := d.Filename
	c := &models.SslCertificate{
		File:                    name,
		StorageName:             name,
		Description:             path.Base(name),
		Status:                  d.Status,
		Serial:                  d.Serial,
		NotBefore:               certTime(d.NotBefore),
		NotAfter:                certTime(d.NotAfter),
		Algorithm:               d.Algorithm,
		Sha1FingerPrint:         d.Fingerprint,
		Subject:                 d.Subject,
		Issuers:                 d.Issuer,
		SubjectAlternativeNames: d.SAN,
	}
	c.Domains, c.IPAddresses = sanNames(d.SAN)
	if len(d.ChainSubjects) > 0 {
		c.ChainSubject = d.ChainSubjects[0]
	}
	if len(d.ChainIssuers) > 0 {
		c.ChainIssuer = d.ChainIssuers[0]
	}
	return c, nil
}

// certTimeLayout is how HAProxy prints notBefore and notAfter (OpenSSL's format, the day padded with
// a space): "Nov  2 05:44:05 2026 GMT".
const certTimeLayout = "Jan _2 15:04:05 2006 MST"

// certTime parses a certificate date of HAProxy's; nil when it does not parse.
func certTime(s string) *strfmt.DateTime {
	t, err := time.Parse(certTimeLayout, s)
	if err != nil {
		return nil
	}
	dt := strfmt.DateTime(t.UTC())
	return &dt
}

// sanNames splits a subject alternative name list as HAProxy prints it ("DNS:a, IP Address:1.2.3.4")
// into its DNS names and its IP addresses, each comma-separated.
func sanNames(san string) (domains, ips string) {
	var d, ip []string
	for part := range strings.SplitSeq(san, ",") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, "DNS:"); ok {
			d = append(d, v)
		} else if v, ok := strings.CutPrefix(part, "IP Address:"); ok {
			ip = append(ip, v)
		}
	}
	return strings.Join(d, ","), strings.Join(ip, ",")
}

func int64Ptr(v int) *int64 {
	n := int64(v)
	return &n
}
