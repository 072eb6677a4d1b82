package socket

import "context"

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
	CheckState  int // bitmask: 0x02 configured, 0x04 enabled (CheckEnabled), 0x08 paused by maintenance
	Port        int
	UseSSL      bool
}

// CheckEnabled is the bit of ServerState.CheckState that says the server's health checks run
// (HAProxy's CHK_ST_ENABLED: set for a configured check at start and by enable health, cleared by
// disable health).
const CheckEnabled = 0x04

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
	// Version is the master's version (the last column of its line); zero when it does not parse.
	Version Version
	// Workers are the current workers first, then the old ones.
	Workers []Proc
	// Failed is the number of failed reloads HAProxy reports ("[failed: N]"), 0 when absent. It counts
	// the reloads that failed since the last successful one (a successful reload resets it to 0) on
	// every version; from 3.1 it stops at 1. The master's reload counter rises on failed reloads too.
	Failed int
}

// Current returns the first worker listed under "# workers", false when there is none. After a
// failed reload on 3.1+ that list is empty although a worker still serves: use Serving.
func (p ProcState) Current() (Proc, bool) {
	for _, w := range p.Workers {
		if !w.Old {
			return w, true
		}
	}
	return Proc{}, false
}

// Serving returns the worker that serves new connections: the current one, or — on HAProxy 3.1+,
// whose master lists the serving worker under "# old workers" after a failed reload, with "# workers"
// empty — the youngest old worker (the fewest reloads seen). False when no worker serves.
func (p ProcState) Serving() (Proc, bool) {
	if w, ok := p.Current(); ok {
		return w, true
	}
	if !CapabilitiesOf(p.Version).FailedReloadKeepsOldList {
		return Proc{}, false
	}
	var best Proc
	found := false
	for _, w := range p.Workers {
		if w.Old && (!found || w.Reloads < best.Reloads) {
			best, found = w, true
		}
	}
	return best, found
}

// Draining returns the workers of earlier generations that still run (serving long-lived
// connections): every old worker but the one Serving returns.
func (p ProcState) Draining() []Proc {
	serving, ok := p.Serving()
	var out []Proc
	for _, w := range p.Workers {
		if w.Old && (!ok || w.PID != serving.PID) {
			out = append(out, w)
		}
	}
	return out
}

// Runner runs commands on an admin socket: an *Admin (one connection per command) or a *Session (one
// connection for many). All typed helpers are built on it.
type Runner interface {
	// Command sends one command line and returns the reply without its trailing empty line. Its
	// errors wrap ErrUnavailable (socket unreachable, connection lost), ErrInvalid (refused before
	// sending) or, in a *CommandError, ErrUnexpectedReply when the connection closed without any
	// reply: replies are not interpreted.
	Command(ctx context.Context, cmd string) (string, error)
	// Payload sends `cmd <<` followed by payload lines and an empty line. A payload containing an empty
	// line is refused before anything is sent (it would end the payload early).
	Payload(ctx context.Context, cmd, payload string) (string, error)
}

// ReloadReply is what the master answered to `reload`: HAProxy 2.6 answers nothing (Sync false: the
// caller polls ShowProc); 2.7+ answers "Success=1|0" (Sync true) and the new worker's start-up log.
type ReloadReply struct {
	Sync    bool
	Success bool
	// InProgress (3.1+): the master refused the reload because a new worker is still starting
	// ("Success=0" with the log "Another reload is still in progress."); nothing was reloaded and
	// the command may be sent again.
	InProgress bool
	Log        string
}
