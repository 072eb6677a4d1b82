package socket

import (
	"context"
	"errors"
)

// errNotImplemented marks the API skeleton; the implementation replaces every use.
var errNotImplemented = errors.New("not implemented")

// MapEntry is one map entry as HAProxy shows it.
type MapEntry struct{ Key, Value string }

// ServerState is one row of `show servers state` (the fields haroute uses).
type ServerState struct {
	BackendID   int
	Backend     string
	ServerID    int
	Server      string
	Addr        string
	OpState     int // 0 stopped, 1 starting, 2 running, 3 stopping
	AdminState  int // bitmask: 0x01 FMAINT, 0x02 IMAINT, 0x04 CMAINT, 0x08 FDRAIN, 0x10 IDRAIN, 0x20 RMAINT
	UserWeight  int
	InitWeight  int
	CheckStatus int
	CheckState  int
	Port        int
	UseSSL      bool
}

// Proc is one process of `show proc` on the master CLI.
type Proc struct {
	PID     int
	Type    string // master or worker
	Reloads int
	// Old is true for a worker of an earlier generation (still serving old connections).
	Old bool
}

// ProcState is the master's `show proc`.
type ProcState struct {
	Master Proc
	// Workers are the current workers first, then the old ones.
	Workers []Proc
	// Failed is the number of failed reloads HAProxy reports ("[failed: N]"), 0 when absent.
	Failed int
}

// Runner runs commands on an admin socket: an *Admin (one connection per command) or a *Session (one
// connection for many). All typed helpers are built on it.
type Runner interface {
	// Command sends one command line and returns the reply without its trailing empty line. Its only
	// error is ErrUnavailable (wrapped): replies are not interpreted.
	Command(ctx context.Context, cmd string) (string, error)
	// Payload sends `cmd <<` followed by payload lines and an empty line. A payload containing an empty
	// line is refused before anything is sent (it would end the payload early).
	Payload(ctx context.Context, cmd, payload string) (string, error)
}

// Admin is a client of a worker's admin (stats) socket.
type Admin struct {
	path string
	opts Options
}

// NewAdmin returns a client of the admin socket at path.
func NewAdmin(path string, opts Options) *Admin { return &Admin{path: path, opts: opts} }

// Command implements Runner with one connection per command.
func (a *Admin) Command(ctx context.Context, cmd string) (string, error) {
	return "", errNotImplemented
}

// Payload implements Runner.
func (a *Admin) Payload(ctx context.Context, cmd, payload string) (string, error) {
	return "", errNotImplemented
}

// Session opens one connection in interactive (prompt) mode for a batch of commands.
func (a *Admin) Session(ctx context.Context) (*Session, error) { return nil, errNotImplemented }

// Session is an interactive admin connection; not safe for concurrent use.
type Session struct{}

// Command implements Runner on the session's connection.
func (s *Session) Command(ctx context.Context, cmd string) (string, error) {
	return "", errNotImplemented
}

// Payload implements Runner on the session's connection.
func (s *Session) Payload(ctx context.Context, cmd, payload string) (string, error) {
	return "", errNotImplemented
}

// Close ends the session.
func (s *Session) Close() error { return errNotImplemented }

// Typed helpers. Each sends one command through r, checks the reply against HAProxy's success answer
// and returns a *CommandError wrapping ErrNotFound, ErrExists, ErrBusy or ErrUnexpectedReply otherwise.

// AddServer sends `add server <backend>/<server> <spec>`; spec is "<addr>:<port> [keywords]".
func AddServer(ctx context.Context, r Runner, backend, server, spec string) error {
	return errNotImplemented
}

// DelServer sends `del server`; ErrBusy when connections are still attached.
func DelServer(ctx context.Context, r Runner, backend, server string) error { return errNotImplemented }

// SetServerWeight sends `set server <b>/<s> weight <w>`.
func SetServerWeight(ctx context.Context, r Runner, backend, server string, weight int) error {
	return errNotImplemented
}

// SetServerState sends `set server <b>/<s> state ready|drain|maint`.
func SetServerState(ctx context.Context, r Runner, backend, server, state string) error {
	return errNotImplemented
}

// EnableHealth sends `enable health <b>/<s>`.
func EnableHealth(ctx context.Context, r Runner, backend, server string) error {
	return errNotImplemented
}

// EnableDynamicCookie sends `enable dynamic-cookie backend <b>`.
func EnableDynamicCookie(ctx context.Context, r Runner, backend string) error {
	return errNotImplemented
}

// AddMap, SetMap and DelMap edit one entry of the map file at mapPath (as the config names it).
func AddMap(ctx context.Context, r Runner, mapPath, key, value string) error {
	return errNotImplemented
}

// SetMap changes the value of an existing key.
func SetMap(ctx context.Context, r Runner, mapPath, key, value string) error {
	return errNotImplemented
}

// DelMap deletes a key (ErrNotFound when absent).
func DelMap(ctx context.Context, r Runner, mapPath, key string) error { return errNotImplemented }

// ReplaceMap replaces the map's content atomically: prepare map, add map @ver with payloads of at most
// maxPayload bytes, commit map; on any error it leaves the live version untouched.
func ReplaceMap(ctx context.Context, r Runner, mapPath string, entries []MapEntry, maxPayload int) error {
	return errNotImplemented
}

// ShowMap returns the live entries of a map in HAProxy's order.
func ShowMap(ctx context.Context, r Runner, mapPath string) ([]MapEntry, error) {
	return nil, errNotImplemented
}

// ShowServersState returns `show servers state` for one backend, or all when backend is "".
func ShowServersState(ctx context.Context, r Runner, backend string) ([]ServerState, error) {
	return nil, errNotImplemented
}

// NewCert, SetCert (payload: PEM), CommitCert, AbortCert and DelCert manage an ssl cert by path.
func NewCert(ctx context.Context, r Runner, certPath string) error { return errNotImplemented }

// SetCert starts or updates the transaction of certPath with the PEM payload.
func SetCert(ctx context.Context, r Runner, certPath, pem string) error { return errNotImplemented }

// CommitCert commits the transaction of certPath.
func CommitCert(ctx context.Context, r Runner, certPath string) error { return errNotImplemented }

// AbortCert aborts the transaction of certPath.
func AbortCert(ctx context.Context, r Runner, certPath string) error { return errNotImplemented }

// DelCert deletes an unused certificate.
func DelCert(ctx context.Context, r Runner, certPath string) error { return errNotImplemented }

// AddCrtListEntry adds one line ("<certPath> [alpn ...] <sni>...") to the crt-list.
func AddCrtListEntry(ctx context.Context, r Runner, crtList, line string) error {
	return errNotImplemented
}

// DelCrtListEntry removes the crt-list line of certPath.
func DelCrtListEntry(ctx context.Context, r Runner, crtList, certPath string) error {
	return errNotImplemented
}

// ShowCrtList returns the crt-list's lines (without comments).
func ShowCrtList(ctx context.Context, r Runner, crtList string) ([]string, error) {
	return nil, errNotImplemented
}

// ShowCerts returns the paths of the certificates HAProxy holds (`show ssl cert`).
func ShowCerts(ctx context.Context, r Runner) ([]string, error) { return nil, errNotImplemented }

// ShowCert returns the SHA-1 fingerprint and the subject of a loaded certificate, to detect drift.
func ShowCert(ctx context.Context, r Runner, certPath string) (fingerprint, subject string, err error) {
	return "", "", errNotImplemented
}

// NewCAFile, SetCAFile, CommitCAFile and DelCAFile manage an ssl ca-file by path.
func NewCAFile(ctx context.Context, r Runner, caPath string) error { return errNotImplemented }

// SetCAFile starts or updates the transaction of caPath.
func SetCAFile(ctx context.Context, r Runner, caPath, pem string) error { return errNotImplemented }

// CommitCAFile commits the transaction of caPath.
func CommitCAFile(ctx context.Context, r Runner, caPath string) error { return errNotImplemented }

// DelCAFile deletes an unused CA file.
func DelCAFile(ctx context.Context, r Runner, caPath string) error { return errNotImplemented }

// ShowInfo returns `show info` as name → value.
func ShowInfo(ctx context.Context, r Runner) (map[string]string, error) {
	return nil, errNotImplemented
}

// Master is a client of the master CLI (`haproxy -W -S <path>`).
type Master struct {
	path string
	opts Options
}

// NewMaster returns a client of the master socket at path.
func NewMaster(path string, opts Options) *Master { return &Master{path: path, opts: opts} }

// Command sends one command to the master and returns its reply (only ErrUnavailable as error).
func (m *Master) Command(ctx context.Context, cmd string) (string, error) {
	return "", errNotImplemented
}

// ShowProc parses `show proc`.
func (m *Master) ShowProc(ctx context.Context) (ProcState, error) {
	return ProcState{}, errNotImplemented
}

// ReloadReply is what the master answered to `reload`: HAProxy 2.6 answers nothing (Sync false: the
// caller polls ShowProc); 2.7+ answers "Success=1|0" (Sync true) and the new worker's start-up log.
type ReloadReply struct {
	Sync    bool
	Success bool
	Log     string
}

// Reload sends `reload` and parses the reply.
func (m *Master) Reload(ctx context.Context) (ReloadReply, error) {
	return ReloadReply{}, errNotImplemented
}
