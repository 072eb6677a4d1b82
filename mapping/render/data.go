package render

import (
	"fmt"
	"path"
	"strings"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

// unixPrefix starts a bind address that is a unix socket.
const unixPrefix = "unix@"

// standardMaps are the map files the default layout always references; they are rendered (empty if
// the model has no entries for them) even when the model omits them.
var standardMaps = []string{
	model.MapHTTP, model.MapEdgeReencrypt, model.MapHTTPRedirect, model.MapTCP, model.MapWildcardDomain,
	model.MapForwardedHeaders, model.MapCookieSameSite, model.MapCookieNames, model.MapHeaderValues,
	model.MapTimeoutServer, model.MapTimeoutTunnel, model.MapHSTS,
}

// Data is the value haproxy.cfg templates are executed with. Custom templates (TEMPLATE_FILE) read the
// same fields the default template does.
//
// Every string in Config that reaches the default template has been checked before execution: names
// and values contain no whitespace, quotes, '#', '\', '$' or "%[" (see Render), so they may be written
// unquoted. Settings.AccessLog.HTTPFormat is different: a log format with spaces and '%'
// (checked by model.CheckLogFormat), which templates write with quoteLogFormat. Values a custom template
// obtains elsewhere (env) are not checked.
type Data struct {
	// Config is the desired state being rendered. Templates must treat it as read-only. Frontends
	// are in rendering order; maps, backends, servers, certificates and CA files are sorted by name.
	Config *model.Config
	// Dir is the absolute HAProxy directory (Options.Dir, cleaned).
	Dir string
	// Paths are the absolute paths of every file and socket the configuration refers to.
	Paths Paths
}

// Paths are absolute paths under Data.Dir, as mapping/layout lays the directory out.
type Paths struct {
	// Config is the rendered configuration: Dir/conf/haproxy.cfg.
	Config string
	// ConfDir is Dir/conf; the map files, the crt-list and the default certificate live there.
	ConfDir string
	// Maps holds the path of every rendered map file by name (the model's maps plus the seven
	// standard ones); the mapPath function looks names up here and fails on unknown ones.
	Maps map[string]string
	// HTTPMap, EdgeReencryptMap, RedirectMap, TCPMap and WildcardDomainMap are the standard maps
	// (model.MapHTTP, model.MapEdgeReencrypt, model.MapHTTPRedirect, model.MapTCP,
	// model.MapWildcardDomain).
	HTTPMap           string
	EdgeReencryptMap  string
	RedirectMap       string
	TCPMap            string
	WildcardDomainMap string
	// CertList is the crt-list of the TLS-terminating frontends: Dir/conf/cert_config.map.
	CertList string
	// DefaultCertificate is served when no crt-list entry matches: Dir/conf/<Settings.DefaultCertificate>
	// (default_pub_keys.pem when the setting is empty).
	DefaultCertificate string
	// ClientCA and ClientCRL are the client CA bundle and its CRLs for mutual TLS
	// (Dir/conf/client-ca.pem, Dir/conf/client-crl.pem), rendered from the model's listener files.
	ClientCA  string
	ClientCRL string
	// ErrorPage503 and ErrorPage404 are the pages HAProxy answers with when no Route matches or a
	// Route has no server (Dir/conf/error-page-503.http, Dir/conf/error-page-404.http).
	ErrorPage503 string
	ErrorPage404 string
	// CertDir (Dir/router/certs) holds the Routes' certificates, CADir (Dir/router/cacerts) the CA
	// bundles that verify reencrypt backends.
	CertDir string
	CADir   string
	// RunDir (Dir/run) holds the sockets.
	RunDir string
	// AdminSocket is the runtime API socket: Dir/run/haproxy.sock.
	AdminSocket string
	// StatsSocket serves HAProxy's read-only stats page (Dir/run/stats.sock), which haroute run
	// publishes on the stats port behind STATS_USERNAME / STATS_PASSWORD.
	StatsSocket string
	// SNISocket and NoSNISocket are the unix sockets fe_sni and fe_no_sni listen on, taken from their
	// frontends' binds when those are unix sockets (else Dir/run/haproxy-sni.sock and
	// Dir/run/haproxy-no-sni.sock). be_sni and be_no_sni connect to them.
	SNISocket   string
	NoSNISocket string
}

// Frontend returns the frontend with the given name, or nil.
func (d *Data) Frontend(name string) *model.Frontend {
	for i := range d.Config.Frontends {
		if d.Config.Frontends[i].Name == name {
			return &d.Config.Frontends[i]
		}
	}
	return nil
}

// newData builds the template data for cfg rendered under dir (absolute and clean).
func newData(cfg *model.Config, dir string) (*Data, error) {
	l := layout.For(dir)
	defCert := layout.DefaultCertificate
	if cfg.Settings.DefaultCertificate != "" {
		defCert = layout.InConf(cfg.Settings.DefaultCertificate)
	}
	p := Paths{
		Config:             l.Config(),
		ConfDir:            l.ConfDir(),
		Maps:               map[string]string{},
		HTTPMap:            l.InConf(model.MapHTTP),
		EdgeReencryptMap:   l.InConf(model.MapEdgeReencrypt),
		RedirectMap:        l.InConf(model.MapHTTPRedirect),
		TCPMap:             l.InConf(model.MapTCP),
		WildcardDomainMap:  l.InConf(model.MapWildcardDomain),
		CertList:           l.InConf(model.CertList),
		DefaultCertificate: l.Path(defCert),
		ClientCA:           l.ClientCA(),
		ClientCRL:          l.ClientCRL(),
		ErrorPage503:       l.ErrorPage503(),
		ErrorPage404:       l.ErrorPage404(),
		CertDir:            l.CertDir(),
		CADir:              l.CADir(),
		RunDir:             l.RunDir(),
		AdminSocket:        l.AdminSocket(),
		SNISocket:          l.SNISocket(),
		NoSNISocket:        l.NoSNISocket(),
		StatsSocket:        l.StatsSocket(),
	}
	for _, name := range standardMaps {
		p.Maps[name] = l.InConf(name)
	}
	for _, m := range cfg.Maps {
		p.Maps[m.Name] = l.InConf(m.Name)
	}
	for _, f := range cfg.Frontends {
		if !strings.HasPrefix(f.Bind, unixPrefix) {
			continue
		}
		sock, err := resolveBind(dir, f.Bind)
		if err != nil {
			return nil, fmt.Errorf("frontend %q: %w", f.Name, err)
		}
		switch f.Name {
		case model.FrontendSNI:
			p.SNISocket = strings.TrimPrefix(sock, unixPrefix)
		case model.FrontendNoSNI:
			p.NoSNISocket = strings.TrimPrefix(sock, unixPrefix)
		}
	}
	for _, s := range []string{p.AdminSocket, p.SNISocket, p.NoSNISocket, p.StatsSocket} {
		if len(s) > maxSocketPath {
			return nil, fmt.Errorf("socket path %q is longer than %d bytes", s, maxSocketPath)
		}
	}
	return &Data{Config: cfg, Dir: dir, Paths: p}, nil
}

// resolveBind returns a bind address with a relative unix socket path made absolute under dir
// ("unix@run/x.sock" → "unix@<dir>/run/x.sock"); other addresses are returned as they are. The result
// is checked to be one safe config word, and a relative socket path must stay under dir.
func resolveBind(dir, bind string) (string, error) {
	if err := checkWord("bind", bind); err != nil {
		return "", err
	}
	sock, ok := strings.CutPrefix(bind, unixPrefix)
	if !ok {
		return bind, nil
	}
	if sock == "" || strings.HasSuffix(sock, "/") {
		return "", fmt.Errorf("bind %q: no socket file name", bind)
	}
	if !strings.HasPrefix(sock, "/") {
		sock = path.Join(dir, sock)
		if !strings.HasPrefix(sock, dir+"/") && (dir != "/" || sock == "/") {
			return "", fmt.Errorf("bind %q: socket path leaves the HAProxy directory", bind)
		}
	}
	if len(sock) > maxSocketPath {
		return "", fmt.Errorf("bind %q: socket path %q is longer than %d bytes", bind, sock, maxSocketPath)
	}
	return unixPrefix + sock, nil
}
