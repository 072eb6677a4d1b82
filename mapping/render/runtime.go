package render

import (
	"fmt"
	"strings"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

// RuntimePaths are the absolute paths the runtime path names in HAProxy CLI commands; they equal the
// ones the default template writes into haproxy.cfg for the same directory.
type RuntimePaths struct {
	Maps         map[string]string // map name → absolute path
	CertList     string
	CertDir      string
	CADir        string
	AdminSocket  string
	MasterSocket string
	// StatsSocket serves HAProxy's stats page (the default template's "frontend stats").
	StatsSocket string
	// DefaultCertificate, ClientCA and ClientCRL are the listener files (model.ListenerFiles).
	DefaultCertificate, ClientCA, ClientCRL string
}

// PathsFor returns the runtime paths of a config rendered into dir.
func PathsFor(cfg *model.Config, dir string) (RuntimePaths, error) {
	dir, err := checkDir(dir)
	if err != nil {
		return RuntimePaths{}, err
	}
	d, err := newData(cfg, dir)
	if err != nil {
		return RuntimePaths{}, err
	}
	return RuntimePaths{
		Maps:         d.Paths.Maps,
		CertList:     d.Paths.CertList,
		CertDir:      d.Paths.CertDir,
		CADir:        d.Paths.CADir,
		AdminSocket:  d.Paths.AdminSocket,
		MasterSocket: layout.For(dir).MasterSocket(),
		StatsSocket:  d.Paths.StatsSocket,

		DefaultCertificate: d.Paths.DefaultCertificate,
		ClientCA:           d.Paths.ClientCA,
		ClientCRL:          d.Paths.ClientCRL,
	}, nil
}

// RuntimeServerDefaults are the settings a configured server inherits from HAProxy's default-server
// and a runtime one does not get on 2.6: idle connections kept for reuse without limit, purged after
// 5 s (pool-max-conn -1, pool-purge-delay 5s). HAProxy 2.6 leaves them at 0 for a server added with
// `add server`, which then opens a new connection to the pod for every request; 3.0+ gives runtime
// servers these defaults itself, and sending them changes nothing there.
const RuntimeServerDefaults = "pool-max-conn -1 pool-purge-delay 5s"

// ServerSpec returns what follows "add server <backend>/<name>" at runtime for server s of backend b:
// the address and every option of the rendered server line ("<addr>:<port> id … weight … check inter
// … [ssl verify required ca-file … [verifyhost …]]"), without the state, since a server added
// at runtime starts in maintenance, followed by RuntimeServerDefaults. cfg supplies the CA files b may
// reference; dir is the HAProxy directory the config was rendered for. Custom templates must render
// servers with the serverLine helper and set no default-server, so that a runtime server equals a
// rendered one.
func ServerSpec(cfg *model.Config, dir string, b model.Backend, s model.Server) (string, error) {
	dir, err := checkDir(dir)
	if err != nil {
		return "", err
	}
	d, err := newData(cfg, dir)
	if err != nil {
		return "", err
	}
	s.State = model.StateReady
	line, err := newFuncs(d, nil).serverLine(b, s)
	if err != nil {
		return "", err
	}
	prefix := "server " + s.Name + " "
	if !strings.HasPrefix(line, prefix) {
		return "", fmt.Errorf("server %q: unexpected server line %q", s.Name, line)
	}
	return strings.TrimPrefix(line, prefix) + " " + RuntimeServerDefaults, nil
}
