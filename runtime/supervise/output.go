package supervise

import (
	"log/slog"
	"strings"
)

// routine lists the messages HAProxy writes on every reload in master-worker mode: the master
// re-executing, each proxy of the old worker stopping, the old worker leaving, the new one forking.
// With one proxy per Route and spare backends, a reload writes one such line per backend.
var routine = []string{
	"Reexecuting Master process",
	"Former worker",
	"Stopping proxy",
	"Stopping frontend",
	"Stopping backend",
	"New worker",
	"Loading success",
	"haproxy version is",
	"path to executable is",
	"Current worker",
	"All workers exited",
}

// adminChanges are HAProxy's messages about a server whose administrative state the CLI set
// ("forced": haroute's own `set server … state maint|drain|ready` as it adds, drains and removes
// servers, or an operator's hold): the expected consequence of an operation someone asked for,
// one per server change, so a rolling deploy writes hundreds. Health-check changes ("is DOWN",
// "is UP") are not among them: nobody asked for those.
var adminChanges = []string{
	"is going DOWN for maintenance",
	"was DOWN and now enters maintenance",
	"(leaving forced maintenance)",
	"is leaving forced maintenance but remains in maintenance",
	"remains in forced maintenance",
	"enters drain state",
	"(leaving forced drain)",
	"remains in forced drain mode",
}

// stoppedProxy tells "Proxy <name> stopped (cumulated conns: ...)", routine at reloads too.
func stoppedProxy(line string) bool {
	i := strings.Index(line, "Proxy ")
	return i >= 0 && strings.Contains(line[i:], " stopped (")
}

// noServer returns the backend of HAProxy's alert "backend '<name>' has no server available!" (ok
// false for other lines).
func noServer(line string) (string, bool) {
	const head, tail = "backend '", "' has no server available"
	i := strings.Index(line, head)
	if i < 0 {
		return "", false
	}
	name, rest, ok := strings.Cut(line[i+len(head):], "'")
	if !ok || !strings.HasPrefix("'"+rest, tail) {
		return "", false
	}
	return name, true
}

// lowFDLimit tells HAProxy's alert that its file-descriptor limit is below what it reserves ("FD
// limit (N) too low for maxconn=…/maxsock=…"). It is expected under the template's no strict-limits:
// every server configures a check that reserves a descriptor, and most of them never run.
func lowFDLimit(line string) bool {
	return strings.Contains(line, "FD limit (") && strings.Contains(line, "too low for maxconn")
}

// classify returns the level of one line of HAProxy's output and attributes that name what it is
// about: [ALERT] lines are errors and [WARNING] lines warnings, except the routine messages of a
// reload and the messages of administrative server changes (adminChanges), which are debug; [NOTICE]
// lines are debug; an alert that a backend has no server left is a warning
// naming the Route the backend serves (OpenShift's backend names carry namespace and name), since
// it is about one Route answering 503, not about HAProxy.
func classify(line string) (slog.Level, []any) {
	if backend, ok := noServer(line); ok {
		attrs := []any{"backend", backend}
		if route := routeOf(backend); route != "" {
			attrs = append(attrs, "route", route)
		}
		return slog.LevelWarn, attrs
	}
	for _, r := range routine {
		if strings.Contains(line, r) {
			return slog.LevelDebug, nil
		}
	}
	for _, c := range adminChanges {
		if strings.Contains(line, "Server ") && strings.Contains(line, c) {
			return slog.LevelDebug, nil
		}
	}
	switch {
	case stoppedProxy(line):
		return slog.LevelDebug, nil
	case lowFDLimit(line):
		return slog.LevelWarn, nil
	case strings.Contains(line, "[ALERT]"):
		return slog.LevelError, nil
	case strings.Contains(line, "[WARNING]"):
		return slog.LevelWarn, nil
	case strings.Contains(line, "[NOTICE]"):
		return slog.LevelDebug, nil
	}
	return slog.LevelInfo, nil
}

// routeOf returns "<namespace>/<name>" for a backend named like OpenShift's ("be_<kind>:<ns>:<name>"),
// or "" for other names (spare backends: "_spare" is no namespace).
func routeOf(backend string) string {
	parts := strings.Split(backend, ":")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "be_") || parts[1] == "" || parts[2] == "" || strings.HasPrefix(parts[1], "_") {
		return ""
	}
	return parts[1] + "/" + parts[2]
}
