// Package layout names every file, folder and socket of the HAProxy directory: the volume haroute
// and HAProxy share (haroute writes conf/ and router/, HAProxy binds the sockets of run/, haroute
// serves its state there). Every path into that directory, in haroute, its tests and harnesses, and
// (through manifests' tests) the deployment manifests, comes from here, so that moving a file is one
// change.
//
// The constants are the names relative to the directory, slash-separated; a Layout gives the
// absolute paths under one directory. The package is pure (no I/O), under mapping/ so that
// mapping/render (whose templates read the paths as Data.Paths) and every layer above it can import
// it; it depends on nothing.
package layout

import "path/filepath"

// Folders, relative to the HAProxy directory.
const (
	// ConfDir holds the configuration, the map files, the crt-list, the default certificate, the
	// client CA and CRL files and the error pages.
	ConfDir = "conf"
	// BackendsDir holds the backend files of the default template; HAProxy loads it as a second
	// configuration after Config (`-f Config -f BackendsDir`).
	BackendsDir = ConfDir + "/backends"
	// CertDir holds the Routes' certificates (private: mode 0600).
	CertDir = "router/certs"
	// CADir holds the CA bundles that verify reencrypt backends.
	CADir = "router/cacerts"
	// RunDir holds the sockets and the deletion lock.
	RunDir = "run"
)

// Files, relative to the HAProxy directory.
const (
	// Config is the configuration HAProxy starts from (its first -f).
	Config = ConfDir + "/haproxy.cfg"
	// DefaultCertificateName is the default certificate's file name in ConfDir (the model's
	// Settings.DefaultCertificate when it is empty).
	DefaultCertificateName = "default_pub_keys.pem"
	// DefaultCertificate is served when no crt-list entry matches.
	DefaultCertificate = ConfDir + "/" + DefaultCertificateName
	// ClientCA and ClientCRL are the client CA bundle and its CRLs for mutual TLS.
	ClientCA  = ConfDir + "/client-ca.pem"
	ClientCRL = ConfDir + "/client-crl.pem"
	// ErrorPage503 and ErrorPage404 are HAProxy's answers when no Route matches or a Route has no
	// server.
	ErrorPage503 = ConfDir + "/error-page-503.http"
	ErrorPage404 = ConfDir + "/error-page-404.http"
)

// Sockets and locks, relative to the HAProxy directory.
const (
	// AdminSocket is the worker's runtime API (the default template binds it).
	AdminSocket = RunDir + "/haproxy.sock"
	// MasterSocket is the master CLI: HAProxy's -S argument.
	MasterSocket = RunDir + "/master.sock"
	// StatsSocket serves HAProxy's read-only stats page, which haroute run publishes on the stats
	// port.
	StatsSocket = RunDir + "/stats.sock"
	// SNISocket and NoSNISocket are the unix sockets fe_sni and fe_no_sni listen on (the model's
	// binds, "unix@" and the name).
	SNISocket   = RunDir + "/haproxy-sni.sock"
	NoSNISocket = RunDir + "/haproxy-no-sni.sock"
	// StateSocket is where `haroute run` serves its state (mode 0600).
	StateSocket = RunDir + "/haroute.sock"
	// DeletionLockName is the lock file that keeps HAProxy's dumps away from backend deletions; it
	// lies next to the admin socket, wherever that is (DeletionLock with the default one).
	DeletionLockName = "haroute-deletions.lock"
	// DeletionLock is the deletion lock next to AdminSocket.
	DeletionLock = RunDir + "/" + DeletionLockName
)

// InConf returns the name, relative to the HAProxy directory, of the file name in ConfDir (a map
// file, the crt-list, a default certificate of another name).
func InConf(name string) string { return ConfDir + "/" + name }

// Layout is one HAProxy directory: the absolute paths of its files. The zero Layout gives the
// relative names.
type Layout struct {
	dir string
}

// For returns the layout of the HAProxy directory dir.
func For(dir string) Layout { return Layout{dir: dir} }

// Dir returns the HAProxy directory.
func (l Layout) Dir() string { return l.dir }

// Path returns the path of rel (a slash-separated name relative to the directory, such as the
// constants of this package) under the directory, cleaned.
func (l Layout) Path(rel string) string { return filepath.Join(l.dir, filepath.FromSlash(rel)) }

// ConfDir returns the path of ConfDir.
func (l Layout) ConfDir() string { return l.Path(ConfDir) }

// BackendsDir returns the path of BackendsDir.
func (l Layout) BackendsDir() string { return l.Path(BackendsDir) }

// CertDir returns the path of CertDir.
func (l Layout) CertDir() string { return l.Path(CertDir) }

// CADir returns the path of CADir.
func (l Layout) CADir() string { return l.Path(CADir) }

// RunDir returns the path of RunDir.
func (l Layout) RunDir() string { return l.Path(RunDir) }

// Config returns the path of Config.
func (l Layout) Config() string { return l.Path(Config) }

// InConf returns the path of the file name in ConfDir (see InConf).
func (l Layout) InConf(name string) string { return l.Path(InConf(name)) }

// DefaultCertificate returns the path of DefaultCertificate.
func (l Layout) DefaultCertificate() string { return l.Path(DefaultCertificate) }

// ClientCA returns the path of ClientCA.
func (l Layout) ClientCA() string { return l.Path(ClientCA) }

// ClientCRL returns the path of ClientCRL.
func (l Layout) ClientCRL() string { return l.Path(ClientCRL) }

// ErrorPage503 returns the path of ErrorPage503.
func (l Layout) ErrorPage503() string { return l.Path(ErrorPage503) }

// ErrorPage404 returns the path of ErrorPage404.
func (l Layout) ErrorPage404() string { return l.Path(ErrorPage404) }

// AdminSocket returns the path of AdminSocket.
func (l Layout) AdminSocket() string { return l.Path(AdminSocket) }

// MasterSocket returns the path of MasterSocket.
func (l Layout) MasterSocket() string { return l.Path(MasterSocket) }

// StatsSocket returns the path of StatsSocket.
func (l Layout) StatsSocket() string { return l.Path(StatsSocket) }

// SNISocket returns the path of SNISocket.
func (l Layout) SNISocket() string { return l.Path(SNISocket) }

// NoSNISocket returns the path of NoSNISocket.
func (l Layout) NoSNISocket() string { return l.Path(NoSNISocket) }

// StateSocket returns the path of StateSocket.
func (l Layout) StateSocket() string { return l.Path(StateSocket) }

// DeletionLock returns the path of DeletionLock.
func (l Layout) DeletionLock() string { return l.Path(DeletionLock) }
