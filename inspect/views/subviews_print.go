package views

import (
	"io"
	"strconv"
	"strings"
	"time"
)

// PrintServers writes server lines as a table (wide adds HAProxy's backend and server names).
func PrintServers(w io.Writer, lines []ServerLine, wide, headers bool) error {
	cols := []string{"NAMESPACE", "ROUTE", "SERVICE", "POD", "ADDRESS", "WEIGHT", "STATE", "USABLE"}
	if wide {
		cols = append(cols, "BACKEND", "SERVER")
	}
	rows := make([][]string, 0, len(lines))
	for _, l := range lines {
		state := l.State
		if l.Held {
			state += " (held by an operator)"
		}
		r := []string{l.Namespace, l.Route, l.Service, l.Pod, l.Address, strconv.Itoa(int(l.Weight)), state, strconv.FormatBool(l.Usable)}
		if wide {
			r = append(r, l.Backend, l.Server)
		}
		rows = append(rows, r)
	}
	return PrintTable(w, cols, rows, headers)
}

// PrintCerts writes certificate lines as a table, expiry counted from now (wide adds the file and
// the digest).
func PrintCerts(w io.Writer, lines []CertLine, wide, headers bool, now time.Time) error {
	cols := []string{"NAMESPACE", "ROUTE", "HOSTS", "NOT-AFTER", "EXPIRES", "STATUS", "UNCOVERED"}
	if wide {
		cols = append(cols, "FILE", "DIGEST", "ERROR")
	}
	rows := make([][]string, 0, len(lines))
	for _, l := range lines {
		notAfter, expires := "", ""
		if !l.NotAfter.IsZero() {
			notAfter = l.NotAfter.Format(time.RFC3339)
			if d := l.NotAfter.Sub(now); d >= 0 {
				expires = "in " + age(d)
			} else {
				expires = age(-d) + " ago"
			}
		}
		ns := l.Namespace
		if l.Route == "" {
			ns = "(default)"
		}
		r := []string{ns, l.Route, strings.Join(l.Hosts, ","), notAfter, expires, l.Status, strings.Join(l.Uncovered, ",")}
		if wide {
			r = append(r, l.File, l.Digest, l.Error)
		}
		rows = append(rows, r)
	}
	return PrintTable(w, cols, rows, headers)
}

// PrintMaps writes map lines as a table.
func PrintMaps(w io.Writer, lines []MapLine, headers bool) error {
	cols := []string{"MAP", "KEY", "NAMESPACE", "ROUTE", "VALUE", "LIVE", "STATUS"}
	rows := make([][]string, 0, len(lines))
	for _, l := range lines {
		rows = append(rows, []string{l.Map, l.Key, l.Namespace, l.Route, l.Value, l.Live, l.Status})
	}
	return PrintTable(w, cols, rows, headers)
}

// PrintWorkers writes HAProxy's processes as a table.
func PrintWorkers(w io.Writer, lines []WorkerLine, headers bool) error {
	cols := []string{"PID", "ROLE", "RELOADS", "CONNS", "UPTIME", "VERSION"}
	rows := make([][]string, 0, len(lines))
	for _, l := range lines {
		rows = append(rows, []string{strconv.Itoa(l.PID), l.Role, strconv.Itoa(l.Reloads), workersText(l.Conns), l.Uptime, l.Version})
	}
	return PrintTable(w, cols, rows, headers)
}

// PrintDiff writes diff rows as a table (wide adds the applied value).
func PrintDiff(w io.Writer, rows []DiffRow, wide, headers bool) error {
	cols := []string{"KIND", "NAMESPACE", "ROUTE", "OBJECT", "DESIRED", "LIVE", "FILES"}
	if wide {
		cols = []string{"KIND", "NAMESPACE", "ROUTE", "OBJECT", "DESIRED", "APPLIED", "LIVE", "FILES"}
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		cells := []string{strings.Join(r.Kinds, ","), r.Namespace, r.Route, r.Object, absent(r.Desired)}
		if wide {
			cells = append(cells, absent(r.Applied))
		}
		out = append(out, append(cells, absent(r.Live), absent(r.Files)))
	}
	return PrintTable(w, cols, out, headers)
}

// absent shows a value a source lacks as "(none)" ("-" stays: the source does not describe it).
func absent(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
