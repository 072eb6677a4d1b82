package socket

import (
	"fmt"
	"strconv"
	"strings"
)

// Parsers of HAProxy 2.6 `show` replies (as Runner.Command returns them). They are exported for
// callers that hold a reply already, and for tests with captured replies.

// serversStateVersion is the format version `show servers state` prints first.
const serversStateVersion = "1"

// serversStateFields are the columns ParseServersState needs from the header.
var serversStateFields = []string{
	"be_id", "be_name", "srv_id", "srv_name", "srv_addr", "srv_op_state", "srv_admin_state",
	"srv_uweight", "srv_iweight", "srv_check_status", "srv_check_state", "srv_port", "srv_use_ssl",
}

// ParseServersState parses `show servers state`: the format version line ("1"), the "# be_id
// be_name …" header, then one row per server. Columns are found by the header's names.
func ParseServersState(reply string) ([]ServerState, error) {
	lines := splitLines(reply)
	if len(lines) < 2 || lines[0] != serversStateVersion {
		return nil, fmt.Errorf("show servers state: no format version %q line", serversStateVersion)
	}
	header, ok := strings.CutPrefix(lines[1], "# ")
	if !ok {
		return nil, fmt.Errorf("show servers state: no header line")
	}
	col := map[string]int{}
	for i, name := range strings.Fields(header) {
		if _, dup := col[name]; dup {
			// HAProxy names each column once; a repeated one would send a row's lookups past its end.
			return nil, fmt.Errorf("show servers state: header names %q twice", name)
		}
		col[name] = i
	}
	for _, name := range serversStateFields {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("show servers state: header lacks %q", name)
		}
	}
	var out []ServerState
	for n, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != len(col) {
			return nil, fmt.Errorf("show servers state: row %d has %d fields, the header %d", n+1, len(f), len(col))
		}
		var s ServerState
		var err error
		num := func(name string, dst *int) {
			if err != nil {
				return
			}
			v, e := strconv.Atoi(f[col[name]])
			if e != nil {
				err = fmt.Errorf("show servers state: row %d: %s %q is not a number", n+1, name, f[col[name]])
			}
			*dst = v
		}
		num("be_id", &s.BackendID)
		num("srv_id", &s.ServerID)
		num("srv_op_state", &s.OpState)
		num("srv_admin_state", &s.AdminState)
		num("srv_uweight", &s.UserWeight)
		num("srv_iweight", &s.InitWeight)
		num("srv_check_status", &s.CheckStatus)
		num("srv_check_state", &s.CheckState)
		num("srv_port", &s.Port)
		var ssl int
		num("srv_use_ssl", &ssl)
		if err != nil {
			return nil, err
		}
		s.Backend, s.Server, s.Addr = f[col["be_name"]], f[col["srv_name"]], f[col["srv_addr"]]
		s.UseSSL = ssl != 0
		out = append(out, s)
	}
	return out, nil
}

// ParseMap parses `show map <map>`: one "0x<entry address> <key> <value>" line per entry.
func ParseMap(reply string) ([]MapEntry, error) {
	var out []MapEntry
	for n, l := range splitLines(reply) {
		ptr, rest, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(ptr, "0x") {
			return nil, fmt.Errorf("show map: line %d %q is not \"0x<addr> <key> <value>\"", n+1, l)
		}
		key, value, _ := strings.Cut(rest, " ")
		if key == "" {
			return nil, fmt.Errorf("show map: line %d %q has no key", n+1, l)
		}
		out = append(out, MapEntry{Key: key, Value: value})
	}
	return out, nil
}

// ParseCrtList parses `show ssl crt-list <list>`: a "# <list>" comment, then the lines. NUL bytes
// (2.6 prints one at the end of an ALPN list) are removed.
func ParseCrtList(reply string) ([]string, error) {
	lines := splitLines(strings.ReplaceAll(reply, "\x00", ""))
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "# ") {
		return nil, fmt.Errorf("show ssl crt-list: no \"# <crt-list>\" line")
	}
	var out []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// CertInfo is what `show ssl cert <path>` tells about a loaded certificate.
type CertInfo struct {
	Filename    string
	Status      string // Used or Unused
	Serial      string
	NotBefore   string
	NotAfter    string
	SAN         string // "DNS:a.example.com, …"
	Fingerprint string // SHA-1, upper-case hex without separators
	Subject     string // "/CN=…"
	Issuer      string
}

// ParseCert parses `show ssl cert <path>` ("Name: value" lines).
func ParseCert(reply string) (CertInfo, error) {
	var c CertInfo
	fields := map[string]*string{
		"Filename": &c.Filename, "Status": &c.Status, "Serial": &c.Serial, "notBefore": &c.NotBefore,
		"notAfter": &c.NotAfter, "Subject Alternative Name": &c.SAN, "SHA1 FingerPrint": &c.Fingerprint,
		"Subject": &c.Subject, "Issuer": &c.Issuer,
	}
	for _, l := range splitLines(reply) {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		if dst, known := fields[name]; known && *dst == "" {
			*dst = strings.TrimSpace(value)
		}
	}
	if c.Filename == "" || c.Fingerprint == "" {
		return CertInfo{}, fmt.Errorf("show ssl cert: no Filename or SHA1 FingerPrint line")
	}
	return c, nil
}

// ParseInfo parses `show info` ("Name: value" lines).
func ParseInfo(reply string) (map[string]string, error) {
	out := map[string]string{}
	for n, l := range splitLines(reply) {
		name, value, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("show info: line %d %q is not \"Name: value\"", n+1, l)
		}
		out[name] = strings.TrimSpace(value)
	}
	if out["Name"] == "" || out["Pid"] == "" {
		return nil, fmt.Errorf("show info: no Name or Pid")
	}
	return out, nil
}

// ParseShowProc parses the master's `show proc` (2.6 format; 3.1+ has no "# programs" line, and after
// a failed reload lists the serving worker under "# old workers", see ProcState.Serving):
//
//	#<PID>          <type>          <reloads>       <uptime>        <version>
//	11497           master          5 [failed: 2]   0d00h00m39s     2.6.12-1+deb12u4
//	# workers
//	12387           worker          2               0d00h00m13s     2.6.12-1+deb12u4
//	# old workers
//	12340           worker          2               0d00h00m05s     2.6.12-1+deb12u4
//	# programs
//
// The "[failed: N]" of the master line is optional (absent before 2.6).
func ParseShowProc(reply string) (ProcState, error) {
	var ps ProcState
	section, seenMaster := "master", false
	for n, l := range splitLines(reply) {
		if strings.HasPrefix(l, "#<PID>") {
			continue
		}
		if name, ok := strings.CutPrefix(l, "#"); ok {
			section = strings.TrimSpace(name)
			continue
		}
		if section == "programs" {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			return ProcState{}, fmt.Errorf("show proc: line %d %q has too few fields", n+1, l)
		}
		pid, err1 := strconv.Atoi(f[0])
		reloads, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return ProcState{}, fmt.Errorf("show proc: line %d %q: PID or reloads is not a number", n+1, l)
		}
		p := Proc{PID: pid, Type: f[1], Reloads: reloads}
		switch {
		case section == "master" && p.Type == "master":
			ps.Master, seenMaster = p, true
			if v, err := ParseVersion(f[len(f)-1]); err == nil {
				ps.Version = v
			}
			if len(f) >= 5 && f[3] == "[failed:" {
				failed, err := strconv.Atoi(strings.TrimSuffix(f[4], "]"))
				if err != nil {
					return ProcState{}, fmt.Errorf("show proc: line %d %q: failed count is not a number", n+1, l)
				}
				ps.Failed = failed
			}
		case section == "workers" && p.Type == "worker":
			ps.Workers = append(ps.Workers, p)
		case section == "old workers" && p.Type == "worker":
			p.Old = true
			ps.Workers = append(ps.Workers, p)
		default:
			return ProcState{}, fmt.Errorf("show proc: line %d %q: a %s in section %q", n+1, l, p.Type, section)
		}
	}
	if !seenMaster {
		return ProcState{}, fmt.Errorf("show proc: no master line")
	}
	return ps, nil
}

// splitLines returns the non-empty lines of a reply.
func splitLines(reply string) []string {
	var out []string
	for l := range strings.SplitSeq(reply, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
