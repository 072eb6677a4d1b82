// Package views builds the read-only views of the inspection commands (`haroute state`): what
// `haroute run` knows (its state socket, stateapi.State) joined with what HAProxy reports on its
// own sockets, keyed by Route. It only reads: `show` commands on HAProxy's sockets and GET on the
// state socket. A source that cannot be read leaves a note in the view instead of an error, so that
// every view shows what it can.
package views

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// readTimeout bounds each read of a source.
const readTimeout = 5 * time.Second

// Sources are the sockets the views read.
type Sources struct {
	// State is `haroute run`'s state socket; Admin and Master are HAProxy's.
	State, Admin, Master string
}

// SourcesFor returns the sockets as `haroute run --haproxy-dir dir` lays them out (mapping/layout).
func SourcesFor(dir string) Sources {
	l := layout.For(dir)
	return Sources{State: l.StateSocket(), Admin: l.AdminSocket(), Master: l.MasterSocket()}
}

// Snapshot is what the sources answered, read once.
type Snapshot struct {
	// State is haroute's state (nil when the state socket could not be read).
	State *stateapi.State
	// Servers are HAProxy's servers by backend (`show servers state`; nil when unread).
	Servers map[string][]socket.ServerState
	// Info is the worker's `show info` (nil when unread).
	Info map[string]string
	// Procs is the master's `show proc` (nil when unread) and WorkerInfo each worker's `show info`
	// (through the master, by PID; a worker that did not answer is absent).
	Procs      *socket.ProcState
	WorkerInfo map[int]map[string]string
	// Maps are HAProxy's entries of the applied maps, by map name (ReadMaps; nil when unread).
	Maps map[string][]socket.MapEntry
	// LoadedCerts are the certificate files HAProxy holds (ReadCerts; nil when unread).
	LoadedCerts []string
	// Notes say which source could not be read and why.
	Notes []string

	// index is Explain's index of indexed (the applied state it was built from).
	index   *modelIndex
	indexed *model.Config
}

// Readable reports whether any source answered.
func (s *Snapshot) Readable() bool {
	return s.State != nil || s.Servers != nil || s.Info != nil || s.Procs != nil
}

// Read asks every source once; a source that fails leaves a note.
func Read(ctx context.Context, src Sources) *Snapshot {
	snap := &Snapshot{}
	note := func(what string, err error) {
		snap.Notes = append(snap.Notes, fmt.Sprintf("%s: %v", what, err))
	}
	if st, err := stateapi.Read(ctx, src.State); err != nil {
		note("haroute's state socket "+src.State, err)
	} else {
		snap.State = &st
	}
	opts := socket.Options{Timeout: readTimeout, RetryFor: -1}
	admin := socket.NewAdmin(src.Admin, opts)
	if states, err := socket.ShowServersState(ctx, admin, ""); err != nil {
		note("HAProxy's admin socket "+src.Admin, err)
	} else {
		snap.Servers = map[string][]socket.ServerState{}
		for _, s := range states {
			snap.Servers[s.Backend] = append(snap.Servers[s.Backend], s)
		}
		if info, err := socket.ShowInfo(ctx, admin); err == nil {
			snap.Info = info
		}
	}
	master := socket.NewMaster(src.Master, opts)
	if ps, err := master.ShowProc(ctx); err != nil {
		note("HAProxy's master socket "+src.Master, err)
	} else {
		snap.Procs = &ps
		snap.WorkerInfo = workerInfo(ctx, master, ps)
	}
	return snap
}

// maxWorkersAsked bounds the workers asked for their connections (old workers can pile up).
const maxWorkersAsked = 32

// workerInfo asks each worker (through the master, `@!<pid> show info`) for its `show info`.
func workerInfo(ctx context.Context, master *socket.Master, ps socket.ProcState) map[int]map[string]string {
	out := map[int]map[string]string{}
	for i, w := range ps.Workers {
		if i == maxWorkersAsked {
			break
		}
		reply, err := master.Command(ctx, "@!"+strconv.Itoa(w.PID)+" show info")
		if err != nil {
			continue
		}
		if info, err := socket.ParseInfo(reply); err == nil && len(info) > 0 {
			out[w.PID] = info
		}
	}
	return out
}
