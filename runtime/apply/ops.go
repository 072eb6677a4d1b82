package apply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// applier turns one op into its commands.
type applier struct {
	r          socket.Runner
	next       *model.Config
	paths      render.RuntimePaths
	dir        string
	maxPayload int
	// caps are HAProxy's capabilities, asked (show info) the first time an op depends on them.
	caps *socket.Capabilities
}

// capabilities returns HAProxy's capabilities, asking once per Apply: a sidecar's HAProxy may be
// replaced by another version while haroute runs.
func (a *applier) capabilities(ctx context.Context) (socket.Capabilities, error) {
	if a.caps == nil {
		c, err := socket.DetectCapabilities(ctx, a.r)
		if err != nil {
			return socket.Capabilities{}, fmt.Errorf("haproxy version: %w", err)
		}
		a.caps = &c
	}
	return *a.caps, nil
}

// OpName returns the metric name of an operation's type, e.g. "add_server".
func OpName(op plan.Op) string {
	switch op.(type) {
	case plan.AddServer:
		return "add_server"
	case plan.DelServer:
		return "del_server"
	case plan.SetServerWeight:
		return "set_server_weight"
	case plan.SetServerState:
		return "set_server_state"
	case plan.EnableHealth:
		return "enable_health"
	case plan.DisableHealth:
		return "disable_health"
	case plan.AddMapEntry:
		return "add_map_entry"
	case plan.SetMapEntry:
		return "set_map_entry"
	case plan.DelMapEntry:
		return "del_map_entry"
	case plan.ReplaceMap:
		return "replace_map"
	case plan.SetCertificate:
		return "set_certificate"
	case plan.AddCrtListEntry:
		return "add_crt_list_entry"
	case plan.DelCrtListEntry:
		return "del_crt_list_entry"
	case plan.DelCertificate:
		return "del_certificate"
	case plan.SetCAFile:
		return "set_ca_file"
	case plan.DelCAFile:
		return "del_ca_file"
	case plan.SetListenerFile:
		return "set_listener_file"
	case plan.AddBackend:
		return "add_backend"
	case plan.PublishBackend:
		return "publish_backend"
	case plan.UnpublishBackend:
		return "unpublish_backend"
	case plan.DelBackend:
		return "del_backend"
	}
	return "unknown"
}

func (a *applier) apply(ctx context.Context, op plan.Op) error {
	r := a.r
	switch o := op.(type) {
	case plan.AddServer:
		spec, err := render.ServerSpec(a.next, a.dir, o.Backend, o.Server)
		if err != nil {
			return fmt.Errorf("server spec: %w", err)
		}
		if o.Backend.Cookie == nil && o.Backend.TLS == nil {
			return socket.AddServer(ctx, r, o.Backend.Name, o.Server.Name, spec)
		}
		caps, err := a.capabilities(ctx)
		if err != nil {
			return err
		}
		if o.Backend.TLS != nil && caps.SNIAuto {
			if !caps.AddServerNoSNIAuto {
				return fmt.Errorf("add server %s/%s: HAProxy %s cannot add a TLS server without automatic SNI (no-sni-auto) at runtime: %w",
					o.Backend.Name, o.Server.Name, caps.Version, ErrReloadRequired)
			}
			spec += " " + render.NoSNIAuto
		}
		if o.Backend.Cookie != nil {
			if !caps.AddServerCookie {
				return addServerWithCookie(ctx, r, o.Backend.Name, o.Server.Name, spec)
			}
			// 3.0+: the value the configuration gives the server (OpenShift's).
			spec += " cookie " + model.ServerCookie(o.Server.Name)
		}
		return socket.AddServer(ctx, r, o.Backend.Name, o.Server.Name, spec)
	case plan.AddBackend:
		return socket.AddBackend(ctx, r, o.Backend.Name, o.Backend.Profile())
	case plan.PublishBackend:
		return socket.PublishBackend(ctx, r, o.Backend)
	case plan.UnpublishBackend:
		return socket.UnpublishBackend(ctx, r, o.Backend)
	case plan.DelBackend:
		if err := socket.DelBackend(ctx, r, o.Backend); err != nil && !errors.Is(err, socket.ErrNotFound) {
			return err
		}
		return nil // deleted, or gone already
	case plan.DelServer:
		return socket.DelServer(ctx, r, o.Backend, o.Server)
	case plan.SetServerWeight:
		return socket.SetServerWeight(ctx, r, o.Backend, o.Server, int(o.Weight))
	case plan.SetServerState:
		return socket.SetServerState(ctx, r, o.Backend, o.Server, string(o.State))
	case plan.EnableHealth:
		return socket.EnableHealth(ctx, r, o.Backend, o.Server)
	case plan.DisableHealth:
		if err := socket.DisableHealth(ctx, r, o.Backend, o.Server); err != nil {
			return err
		}
		// Without checks the server takes traffic, whatever the last check said (as after a start).
		return socket.SetServerHealth(ctx, r, o.Backend, o.Server, "up")
	case plan.AddMapEntry:
		m, err := a.mapPath(o.Map)
		if err != nil {
			return err
		}
		return socket.AddMap(ctx, r, m, o.Key, o.Value)
	case plan.SetMapEntry:
		m, err := a.mapPath(o.Map)
		if err != nil {
			return err
		}
		return socket.SetMap(ctx, r, m, o.Key, o.Value)
	case plan.DelMapEntry:
		m, err := a.mapPath(o.Map)
		if err != nil {
			return err
		}
		return socket.DelMap(ctx, r, m, o.Key)
	case plan.ReplaceMap:
		m, err := a.mapPath(o.Map)
		if err != nil {
			return err
		}
		entries := make([]socket.MapEntry, len(o.Entries))
		for i, e := range o.Entries {
			entries[i] = socket.MapEntry{Key: e.Key, Value: e.Value}
		}
		return socket.ReplaceMap(ctx, r, m, entries, a.maxPayload)
	case plan.SetCertificate:
		return a.setCertificate(ctx, o)
	case plan.AddCrtListEntry:
		if a.paths.CertList == "" {
			return errors.New("no crt-list path")
		}
		line, err := a.crtListLine(o.Cert)
		if err != nil {
			return err
		}
		return socket.AddCrtListEntry(ctx, r, a.paths.CertList, line)
	case plan.DelCrtListEntry:
		if a.paths.CertList == "" {
			return errors.New("no crt-list path")
		}
		p, err := a.certPath(o.Cert)
		if err != nil {
			return err
		}
		return socket.DelCrtListEntry(ctx, r, a.paths.CertList, p)
	case plan.DelCertificate:
		p, err := a.certPath(o.Cert)
		if err != nil {
			return err
		}
		return socket.DelCert(ctx, r, p)
	case plan.SetCAFile:
		return a.setCAFile(ctx, o)
	case plan.DelCAFile:
		p, err := a.caPath(o.CA)
		if err != nil {
			return err
		}
		return socket.DelCAFile(ctx, r, p)
	case plan.SetListenerFile:
		return a.setListenerFile(ctx, o)
	}
	return fmt.Errorf("unknown operation %T", op)
}

// setCertificate: new ssl cert (when New), set ssl cert with the PEM, commit ssl cert; a failed
// commit is aborted so that no transaction stays open. HAProxy has no way to send one certificate in
// parts: a PEM longer than a payload may be (tune.bufsize on 2.6–3.3) fails before anything is sent.
func (a *applier) setCertificate(ctx context.Context, o plan.SetCertificate) error {
	p, err := a.certPath(o.Cert.Name)
	if err != nil {
		return err
	}
	if _, err := a.pemParts(ctx, o.Cert.PEM, false); err != nil {
		return fmt.Errorf("certificate %s: %w", o.Cert.Name, err)
	}
	if o.New {
		if err := socket.NewCert(ctx, a.r, p); err != nil {
			return err
		}
	}
	if err := socket.SetCert(ctx, a.r, p, o.Cert.PEM); err != nil {
		return err
	}
	if err := socket.CommitCert(ctx, a.r, p); err != nil {
		if abortErr := socket.AbortCert(ctx, a.r, p); abortErr != nil {
			return errors.Join(err, fmt.Errorf("abort: %w", abortErr))
		}
		return err
	}
	return nil
}

// setCAFile: new ssl ca-file (when New), set ssl ca-file with the first part of the bundle, add ssl
// ca-file with each further part (a bundle longer than one payload, 2.7+), commit ssl ca-file; once a
// transaction is open, a failure aborts it.
func (a *applier) setCAFile(ctx context.Context, o plan.SetCAFile) error {
	p, err := a.caPath(o.CA.Name)
	if err != nil {
		return err
	}
	if err := a.setCAFileAt(ctx, p, o.CA.PEM, o.New); err != nil {
		return fmt.Errorf("CA file %s: %w", o.CA.Name, err)
	}
	return nil
}

// setCAFileAt stores pem as the CA file p: new ssl ca-file when isNew, set ssl ca-file with the first
// part, add ssl ca-file with each further part, commit ssl ca-file; a failure aborts the transaction.
func (a *applier) setCAFileAt(ctx context.Context, p, pem string, isNew bool) error {
	parts, err := a.pemParts(ctx, pem, true)
	if err != nil {
		return err
	}
	if isNew {
		if err := socket.NewCAFile(ctx, a.r, p); err != nil {
			return err
		}
	}
	if err := socket.SetCAFile(ctx, a.r, p, parts[0]); err != nil {
		return err
	}
	for _, part := range parts[1:] {
		if err = socket.AddCAFile(ctx, a.r, p, part); err != nil {
			break
		}
	}
	if err == nil {
		err = socket.CommitCAFile(ctx, a.r, p)
	}
	if err != nil {
		if abortErr := socket.AbortCAFile(ctx, a.r, p); abortErr != nil {
			return errors.Join(err, fmt.Errorf("abort: %w", abortErr))
		}
		return err
	}
	return nil
}

// setListenerFile replaces a listener file HAProxy uses (model.ListenerFiles): the default
// certificate with set + commit ssl cert, the client CRLs with set + commit ssl crl-file; once a
// transaction is open, a failure aborts it. (A changed client CA bundle is a reload: see
// plan.ListenerChanged.)
func (a *applier) setListenerFile(ctx context.Context, o plan.SetListenerFile) error {
	switch o.File {
	case plan.DefaultCertificateFile:
		if a.paths.DefaultCertificate == "" {
			return errors.New("no default certificate path")
		}
		if _, err := a.pemParts(ctx, o.PEM, false); err != nil {
			return fmt.Errorf("default certificate: %w", err)
		}
		return setAndCommit(ctx, a.r, a.paths.DefaultCertificate, o.PEM, socket.SetCert, socket.CommitCert, socket.AbortCert)
	case plan.ClientCRLFile:
		if a.paths.ClientCRL == "" {
			return errors.New("no client CRL path")
		}
		if _, err := a.pemParts(ctx, o.PEM, false); err != nil {
			return fmt.Errorf("client CRL: %w", err)
		}
		return setAndCommit(ctx, a.r, a.paths.ClientCRL, o.PEM, socket.SetCRLFile, socket.CommitCRLFile, socket.AbortCRLFile)
	}
	return fmt.Errorf("unknown listener file %q", o.File)
}

// setAndCommit runs a set + commit transaction on path, aborting it when the commit fails.
func setAndCommit(ctx context.Context, r socket.Runner, path, pem string,
	set func(context.Context, socket.Runner, string, string) error,
	commit, abort func(context.Context, socket.Runner, string) error,
) error {
	if err := set(ctx, r, path, pem); err != nil {
		return err
	}
	if err := commit(ctx, r, path); err != nil {
		if abortErr := abort(ctx, r, path); abortErr != nil {
			return errors.Join(err, fmt.Errorf("abort: %w", abortErr))
		}
		return err
	}
	return nil
}

// pemParts returns pem as the payloads that carry it: one, unless it is longer than a payload may
// be on this HAProxy (tune.bufsize less the margin, 2.6–3.3) and it can go in parts (a CA bundle,
// 2.7+). The capabilities are asked only for such a long PEM. The error wraps socket.ErrUnsupported
// when HAProxy cannot take it at runtime; the caller's fallback reload then loads it from its file.
func (a *applier) pemParts(ctx context.Context, pem string, splittable bool) ([]string, error) {
	if len(pem) <= a.maxPayload {
		return []string{pem}, nil
	}
	caps, err := a.capabilities(ctx)
	if err != nil {
		return nil, err
	}
	if caps.LargePayloads {
		return []string{pem}, nil
	}
	parts, err := socket.SplitPEM(pem, a.maxPayload)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return parts, nil
	}
	if !splittable || !caps.AddCAFile {
		return nil, fmt.Errorf("%w: %d bytes of PEM are over the %d a payload may hold on HAProxy %s, and it cannot be sent in parts",
			socket.ErrUnsupported, len(pem), a.maxPayload, caps.Version)
	}
	return parts, nil
}

// crtListLine returns the crt-list line of c exactly as render writes it into cert_config.map:
// "<certdir>/<name> [alpn <ALPN>] <sni>...".
func (a *applier) crtListLine(c model.Certificate) (string, error) {
	if _, err := a.certPath(c.Name); err != nil {
		return "", err
	}
	return render.CrtListLine(a.paths.CertDir, c), nil
}

func (a *applier) mapPath(name string) (string, error) {
	p, ok := a.paths.Maps[name]
	if !ok || p == "" {
		return "", fmt.Errorf("no path for map %q", name)
	}
	return p, nil
}

func (a *applier) certPath(name string) (string, error) {
	return fileIn(a.paths.CertDir, "certificate", name)
}

func (a *applier) caPath(name string) (string, error) {
	return fileIn(a.paths.CADir, "CA file", name)
}

// fileIn returns dir/name for a base name.
func fileIn(dir, what, name string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no directory for %s %q", what, name)
	}
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return "", fmt.Errorf("%s name %q is not a file name", what, name)
	}
	return path.Join(dir, name), nil
}

// addServerWithCookie adds a server (in maintenance) to a backend with a dynamic cookie so that it
// has its cookie before it takes traffic, on HAProxy 2.6 (3.0+ is given its cookie value in add
// server, see socket.Capabilities.AddServerCookie). HAProxy 2.6 computes a runtime server's dynamic cookie only
// when its address or port changes, or for every server of the backend on `enable dynamic-cookie
// backend`; the latter replaces the cookies of servers in use while other threads read them (seen
// on 2.6.12 as garbage Set-Cookie bytes under load). So the server is added with a placeholder port
// and then moved to its own, which computes its cookie alone, while nothing uses it yet.
func addServerWithCookie(ctx context.Context, r socket.Runner, backend, server, spec string) error {
	first, rest, _ := strings.Cut(spec, " ")
	host, portText, err := net.SplitHostPort(first)
	if err != nil {
		return fmt.Errorf("server spec %q: %w", spec, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return fmt.Errorf("server spec %q: bad port %q", spec, portText)
	}
	placeholder := port + 1
	if placeholder > 65535 {
		placeholder = port - 1
	}
	tmp := net.JoinHostPort(host, strconv.Itoa(placeholder))
	if rest != "" {
		tmp += " " + rest
	}
	if err := socket.AddServer(ctx, r, backend, server, tmp); err != nil {
		return err
	}
	return socket.SetServerPort(ctx, r, backend, server, host, port)
}
