package views

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/haroute/haroute/runtime/socket"
)

// Route statuses of a RouteRow.
const (
	StatusServing  = "Serving"
	StatusNoServer = "NoUsableServer"
	StatusRejected = "Rejected"
	StatusUnknown  = "Unknown"
)

// RouteRow is one Route as `haroute state routes` shows it.
type RouteRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Host      string `json:"host,omitempty"`
	Path      string `json:"path,omitempty"`
	// TLS is the termination and insecure policy ("edge/Redirect"), "" for plain HTTP.
	TLS string `json:"tls,omitempty"`
	// Backend is HAProxy's name of the Route's backend (a spare's name until the next reload).
	Backend string `json:"backend,omitempty"`
	// Servers is the number of servers HAProxy has in the backend, Usable those that take new
	// traffic (not in maintenance or drain, and up); -1 when HAProxy could not be asked.
	Servers int `json:"servers"`
	Usable  int `json:"usable"`
	// Status is one of the Status constants; Reason and Message explain a rejection or a warning.
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Changed is when the Route's last change reached HAProxy, and Via how: runtime or reload.
	Changed *time.Time `json:"changed,omitempty"`
	Via     string     `json:"via,omitempty"`
}

// Summary is the overview of `haroute state`.
type Summary struct {
	HAProxyVersion string `json:"haproxyVersion,omitempty"`
	// Workers are HAProxy's current workers and OldWorkers those of earlier generations still
	// serving connections (-1 when the master could not be asked); MasterReloads the master's
	// reload counter and FailedReloads its failed-reload counter.
	Workers    int `json:"workers"`
	OldWorkers int `json:"oldWorkers"`
	// Conns and OldConns are the current connections of the current and the old workers (-1 when
	// not asked).
	Conns         int `json:"conns"`
	OldConns      int `json:"oldConns"`
	MasterReloads int `json:"masterReloads"`
	FailedReloads int `json:"failedReloads"`
	// MaxWorkerReloads is the mworker-max-reloads of the applied configuration (0 when haroute's
	// state is unknown) and OldestWorkerReloads the most reloads an old worker has seen (-1 without
	// old workers or without the master): at more than MaxWorkerReloads the master stops it.
	MaxWorkerReloads    int `json:"maxWorkerReloads,omitempty"`
	OldestWorkerReloads int `json:"oldestWorkerReloads"`
	// Ready is haroute's readiness; Reloads its reloads since start and LastReload the newest.
	Ready      bool        `json:"ready"`
	Reloads    int         `json:"reloads"`
	LastReload *LastReload `json:"lastReload,omitempty"`
	RuntimeOps int         `json:"runtimeOps"`
	// Drift is what the last drift check found; Held the servers an operator holds.
	Drift int `json:"drift"`
	Held  int `json:"held"`
	// FreeSpares is the number of spare backends new Routes can still claim without a reload.
	FreeSpares int `json:"freeSpares"`
	// Routes counts the Routes by status.
	Admitted int `json:"admitted"`
	Rejected int `json:"rejected"`
	NoServer int `json:"noUsableServer"`
	// CertsExpiring counts the certificates that end within 30 days, CertsExpired those that ended.
	CertsExpiring int `json:"certsExpiring"`
	CertsExpired  int `json:"certsExpired"`
	// Notes say which source could not be read.
	Notes []string `json:"notes,omitempty"`
}

// LastReload is the newest reload haroute made.
type LastReload struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Routes returns one row per Route the state knows (admitted ones from the applied state, rejected
// ones from the problems), sorted by namespace and name; namespace, when not empty, keeps only its
// Routes. Without haroute's state there are no rows (HAProxy alone cannot name Routes).
func (s *Snapshot) Routes(namespace string) []RouteRow {
	if s.State == nil {
		return nil
	}
	var rows []RouteRow
	seen := map[string]int{}
	if a := s.State.Applied; a != nil {
		for _, r := range a.Routes {
			row := RouteRow{Namespace: r.Namespace, Name: r.Name, Host: r.Host, Path: r.Path, Backend: r.Backend, Status: StatusUnknown}
			if r.Termination != "" {
				row.TLS = r.Termination
				if r.InsecurePolicy != "" {
					row.TLS += "/" + r.InsecurePolicy
				}
			}
			row.Servers, row.Usable = s.serverCounts(r.Backend)
			switch {
			case row.Servers < 0:
			case row.Usable == 0:
				row.Status = StatusNoServer
			default:
				row.Status = StatusServing
			}
			if ch, ok := s.State.Changes[r.Namespace+"/"+r.Name]; ok {
				at := ch.At
				row.Changed, row.Via = &at, ch.Via
			}
			seen[r.Namespace+"/"+r.Name] = len(rows)
			rows = append(rows, row)
		}
	}
	for _, p := range s.State.Problems {
		id := p.Namespace + "/" + p.Name
		if i, ok := seen[id]; ok {
			if rows[i].Reason == "" {
				rows[i].Reason, rows[i].Message = p.Reason, p.Message
			}
			continue
		}
		if p.Warning {
			continue
		}
		seen[id] = len(rows)
		rows = append(rows, RouteRow{Namespace: p.Namespace, Name: p.Name, Status: StatusRejected, Reason: p.Reason, Message: p.Message,
			Servers: -1, Usable: -1})
	}
	rows = slices.DeleteFunc(rows, func(r RouteRow) bool { return namespace != "" && r.Namespace != namespace })
	slices.SortFunc(rows, func(a, b RouteRow) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return rows
}

// serverCounts returns how many servers HAProxy has in backend and how many take new traffic, or
// -1, -1 when HAProxy's servers are unknown.
func (s *Snapshot) serverCounts(backend string) (total, usable int) {
	if s.Servers == nil {
		return -1, -1
	}
	for _, sv := range s.Servers[backend] {
		total++
		if usableServer(sv) {
			usable++
		}
	}
	return total, usable
}

// Admin state bits of `show servers state` that keep a server from new traffic: maintenance (forced,
// inherited, from configuration, or resolution) and drain (forced, inherited).
const (
	adminMaint = 0x01 | 0x02 | 0x04 | 0x20
	adminDrain = 0x08 | 0x10
	opRunning  = 2
)

func usableServer(s socket.ServerState) bool {
	return s.AdminState&(adminMaint|adminDrain) == 0 && s.OpState == opRunning
}

// Summary returns the overview of the snapshot (rows from Routes("")).
func (s *Snapshot) Summary() Summary {
	sum := Summary{Workers: -1, OldWorkers: -1, Conns: -1, OldConns: -1, OldestWorkerReloads: -1, Notes: s.Notes}
	if s.Info != nil {
		sum.HAProxyVersion = s.Info["Version"]
	}
	if p := s.Procs; p != nil {
		sum.Workers, sum.OldWorkers = 0, 0
		for _, w := range p.Workers {
			if w.Old {
				sum.OldWorkers++
				sum.OldestWorkerReloads = max(sum.OldestWorkerReloads, w.Reloads)
			} else {
				sum.Workers++
			}
		}
		sum.MasterReloads, sum.FailedReloads = p.Master.Reloads, p.Failed
		for _, w := range s.Workers()[1:] {
			switch {
			case w.Conns < 0:
			case w.Role == "current":
				sum.Conns = max(sum.Conns, 0) + w.Conns
			default:
				sum.OldConns = max(sum.OldConns, 0) + w.Conns
			}
		}
		if sum.HAProxyVersion == "" && p.Version != (socket.Version{}) {
			sum.HAProxyVersion = p.Version.String()
		}
	}
	if st := s.State; st != nil {
		sum.Ready, sum.Reloads, sum.Drift, sum.Held = st.Ready, st.ReloadsTotal, len(st.Drift), len(st.Held)
		if n := len(st.Reloads); n > 0 {
			last := st.Reloads[n-1]
			sum.LastReload = &LastReload{At: last.At, Reason: string(last.Reason.Kind)}
		}
		for _, n := range st.RuntimeOps {
			sum.RuntimeOps += n
		}
		now := time.Now()
		for _, c := range st.Certificates {
			switch certStatus(c, now) {
			case CertExpiring:
				sum.CertsExpiring++
			case CertExpired:
				sum.CertsExpired++
			}
		}
		if a := st.Applied; a != nil {
			sum.MaxWorkerReloads = a.Settings.WorkerReloads()
			for _, b := range a.Backends {
				if b.Spare && b.Route == "" && !b.Retired {
					sum.FreeSpares++
				}
			}
		}
	}
	for _, r := range s.Routes("") {
		switch r.Status {
		case StatusRejected:
			sum.Rejected++
		case StatusNoServer:
			sum.Admitted++
			sum.NoServer++
		default:
			sum.Admitted++
		}
	}
	return sum
}

// workersText formats a worker count, "?" when unknown.
func workersText(n int) string {
	if n < 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

// oneLineOf replaces line breaks, for notes in a table.
func oneLineOf(s string) string { return strings.ReplaceAll(s, "\n", " ") }
