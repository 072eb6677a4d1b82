package plan

import (
	"fmt"

	"github.com/haroute/haroute/mapping/model"
)

// Op is one runtime operation. The concrete types below are the only ones; runtime/apply turns each
// into HAProxy CLI commands and checks every reply.
type Op interface {
	// String describes the operation for logs.
	String() string
	isOp()
}

// AddServer adds a server to a backend, in maintenance, with the options the backend renders for its
// servers (Backend is a copy of the backend as in Next, for its check interval, maxconn, TLS and
// cookie). A new server is then enabled by EnableHealth and SetServerState ready, as separate ops.
// When the backend has a cookie, the server must have its dynamic cookie computed by the time it
// leaves maintenance (runtime/apply does it while adding, for that server alone).
type AddServer struct {
	Backend model.Backend
	Server  model.Server
}

// DelServer removes a server. The plan always puts it in maint first (SetServerState); HAProxy refuses
// while connections are attached, and the caller keeps it in maint and retries later.
type DelServer struct{ Backend, Server string }

// SetServerWeight changes a server's weight (0-256).
type SetServerWeight struct {
	Backend, Server string
	Weight          int32
}

// SetServerState changes a server's administrative state (ready, drain, maint).
type SetServerState struct {
	Backend, Server string
	State           model.ServerState
}

// EnableHealth starts the health checks of a server (model.Server.HealthCheck): one added at
// runtime, or one whose backend gains a second active endpoint.
type EnableHealth struct{ Backend, Server string }

// DisableHealth stops the health checks of a server whose backend is left with one active endpoint,
// or that HAProxy started with its configured check running (DormantChecks), and marks it up: a
// server without checks takes traffic whatever the last check said, as after a fresh start.
type DisableHealth struct{ Backend, Server string }

// AddMapEntry adds a key that is not in the map.
type AddMapEntry struct{ Map, Key, Value string }

// SetMapEntry changes the value of a key that is in the map (atomic for that key).
type SetMapEntry struct{ Map, Key, Value string }

// DelMapEntry removes a key from the map.
type DelMapEntry struct{ Map, Key string }

// ReplaceMap replaces a map's whole content atomically (prepare map, add map @ver in chunks, commit
// map): for large changes where many single edits would cost more.
type ReplaceMap struct {
	Map     string
	Entries []model.MapEntry
}

// SetCertificate stores a certificate: new ssl cert when New, then set ssl cert + commit ssl cert.
type SetCertificate struct {
	Cert model.Certificate
	New  bool
}

// AddCrtListEntry adds the certificate's line (ALPN, SNI filter) to the crt-list.
type AddCrtListEntry struct{ Cert model.Certificate }

// DelCrtListEntry removes the certificate's line from the crt-list.
type DelCrtListEntry struct{ Cert string }

// DelCertificate removes a certificate no crt-list line uses any more.
type DelCertificate struct{ Cert string }

// SetCAFile stores a CA bundle: new ssl ca-file when New, then set ssl ca-file + commit ssl ca-file.
type SetCAFile struct {
	CA  model.CAFile
	New bool
}

// DelCAFile removes a CA bundle no server uses any more.
type DelCAFile struct{ CA string }

// AddBackend adds a backend from its profile (HAProxy 3.4+: `add backend <name> from <profile>`),
// unpublished and without servers; Backend is a copy of the backend as in Next, without servers.
// Its servers follow as AddServer ops, then PublishBackend.
type AddBackend struct{ Backend model.Backend }

// PublishBackend makes a backend selectable by the frontends' use_backend rules (3.4+): one added
// at runtime once it has its servers, or one being removed whose Route came back.
type PublishBackend struct{ Backend string }

// UnpublishBackend makes the frontends skip a backend (3.4+), the first step of its deletion.
type UnpublishBackend struct{ Backend string }

// DelBackend deletes an unpublished backend without servers (3.4+). HAProxy refuses while
// connections are attached (or a server's deletion was deferred); the caller keeps the backend,
// Removing, and retries later.
type DelBackend struct{ Backend string }

func (AddBackend) isOp()       {}
func (PublishBackend) isOp()   {}
func (UnpublishBackend) isOp() {}
func (DelBackend) isOp()       {}
func (AddServer) isOp()        {}
func (DelServer) isOp()        {}
func (SetServerWeight) isOp()  {}
func (SetServerState) isOp()   {}
func (EnableHealth) isOp()     {}
func (DisableHealth) isOp()    {}
func (AddMapEntry) isOp()      {}
func (SetMapEntry) isOp()      {}
func (DelMapEntry) isOp()      {}
func (ReplaceMap) isOp()       {}
func (SetCertificate) isOp()   {}
func (AddCrtListEntry) isOp()  {}
func (DelCrtListEntry) isOp()  {}
func (DelCertificate) isOp()   {}
func (SetCAFile) isOp()        {}
func (DelCAFile) isOp()        {}

func (o AddServer) String() string {
	return fmt.Sprintf("add server %s/%s %s:%d weight %d", o.Backend.Name, o.Server.Name, o.Server.Addr, o.Server.Port, o.Server.Weight)
}
func (o AddBackend) String() string {
	return "add backend " + o.Backend.Name + " from " + o.Backend.Profile()
}
func (o PublishBackend) String() string   { return "publish backend " + o.Backend }
func (o UnpublishBackend) String() string { return "unpublish backend " + o.Backend }
func (o DelBackend) String() string       { return "del backend " + o.Backend }
func (o DelServer) String() string        { return fmt.Sprintf("del server %s/%s", o.Backend, o.Server) }
func (o SetServerWeight) String() string {
	return fmt.Sprintf("set server %s/%s weight %d", o.Backend, o.Server, o.Weight)
}
func (o SetServerState) String() string {
	return fmt.Sprintf("set server %s/%s state %s", o.Backend, o.Server, o.State)
}
func (o EnableHealth) String() string { return fmt.Sprintf("enable health %s/%s", o.Backend, o.Server) }
func (o DisableHealth) String() string {
	return fmt.Sprintf("disable health %s/%s", o.Backend, o.Server)
}
func (o AddMapEntry) String() string { return fmt.Sprintf("add map %s %s %s", o.Map, o.Key, o.Value) }
func (o SetMapEntry) String() string { return fmt.Sprintf("set map %s %s %s", o.Map, o.Key, o.Value) }
func (o DelMapEntry) String() string { return fmt.Sprintf("del map %s %s", o.Map, o.Key) }
func (o ReplaceMap) String() string {
	return fmt.Sprintf("replace map %s (%d entries)", o.Map, len(o.Entries))
}
func (o SetCertificate) String() string {
	if o.New {
		return "new+set ssl cert " + o.Cert.Name
	}
	return "set ssl cert " + o.Cert.Name
}
func (o AddCrtListEntry) String() string { return "add ssl crt-list entry " + o.Cert.Name }
func (o DelCrtListEntry) String() string { return "del ssl crt-list entry " + o.Cert }
func (o DelCertificate) String() string  { return "del ssl cert " + o.Cert }
func (o SetCAFile) String() string {
	if o.New {
		return "new+set ssl ca-file " + o.CA.Name
	}
	return "set ssl ca-file " + o.CA.Name
}
func (o DelCAFile) String() string { return "del ssl ca-file " + o.CA }
