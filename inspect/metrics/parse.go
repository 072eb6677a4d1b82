package metrics

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errNotStat is the error of a reply that is not `show stat` CSV (help text, a refusal).
var errNotStat = errors.New("not a show stat reply")

// header holds the positions, in the rows of one reply, of the columns the collector reads.
type header struct {
	proxy, server, typ int
	// cols[family][i] is the position of the column of the family's selected field i; -1 when this
	// HAProxy has no such column.
	cols [numFamilies][]int
	// width is the number of leading fields a row is split into: one past the last position used.
	width int
}

// parseHeader reads the header line of `show stat` ("# pxname,svname,qcur,..."): columns are found
// by name, since HAProxy versions add columns (2.6 has 128, 3.4 has 213 with the modules' ones).
func parseHeader(line string, sel *[numFamilies][]field) (header, error) {
	if !strings.HasPrefix(line, "# ") {
		return header{}, fmt.Errorf("%w: first line %q", errNotStat, truncate(line))
	}
	pos := map[string]int{}
	for i, name := range strings.Split(strings.TrimPrefix(line, "# "), ",") {
		if _, dup := pos[name]; !dup {
			pos[name] = i
		}
	}
	h := header{proxy: -1, server: -1, typ: -1}
	var ok bool
	for _, c := range []struct {
		name string
		dst  *int
	}{{colProxy, &h.proxy}, {colServer, &h.server}, {colType, &h.typ}} {
		if *c.dst, ok = pos[c.name]; !ok {
			return header{}, fmt.Errorf("%w: no column %q in %q", errNotStat, c.name, truncate(line))
		}
		h.width = max(h.width, *c.dst+1)
	}
	for fam, fs := range sel {
		h.cols[fam] = make([]int, len(fs))
		for i, f := range fs {
			p, found := pos[f.column]
			if !found {
				p = -1
			}
			h.cols[fam][i] = p
			h.width = max(h.width, p+1)
		}
	}
	return h, nil
}

// truncate shortens s for an error message.
func truncate(s string) string {
	const n = 80
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// lines iterates over the lines of a reply without copying them.
type lines struct{ rest string }

// next returns the next line without its "\n"; ok is false at the end.
func (l *lines) next() (line string, ok bool) {
	if l.rest == "" {
		return "", false
	}
	i := strings.IndexByte(l.rest, '\n')
	if i < 0 {
		line, l.rest = l.rest, ""
		return line, true
	}
	line, l.rest = l.rest[:i], l.rest[i+1:]
	return line, true
}

// splitRow puts the first len(dst) fields of one CSV row into dst and returns how many it found
// (fewer when the row is shorter). A field in double quotes (HAProxy quotes a value holding a comma
// or a quote) is unquoted, its doubled quotes made single; only such a field is copied, the others
// are slices of line.
func splitRow(line string, dst []string) (int, error) {
	n := 0
	for n < len(dst) {
		if strings.HasPrefix(line, `"`) {
			v, rest, err := quoted(line)
			if err != nil {
				return n, err
			}
			dst[n] = v
			n++
			if rest == "" {
				return n, nil
			}
			if rest[0] != ',' {
				return n, fmt.Errorf("field %d: text after its closing quote", n)
			}
			line = rest[1:]
			continue
		}
		i := strings.IndexByte(line, ',')
		if i < 0 {
			dst[n] = line
			return n + 1, nil
		}
		dst[n] = line[:i]
		n++
		line = line[i+1:]
	}
	return n, nil
}

// quoted reads the quoted field at the start of s and returns its value and what follows the
// closing quote.
func quoted(s string) (value, rest string, err error) {
	var b strings.Builder
	s = s[1:]
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			return "", "", errors.New("quoted field without its closing quote")
		}
		b.WriteString(s[:i])
		if i+1 < len(s) && s[i+1] == '"' {
			b.WriteByte('"')
			s = s[i+2:]
			continue
		}
		return b.String(), s[i+1:], nil
	}
}

// value converts one field to a metric value; ok is false for an empty field (HAProxy leaves a
// field empty where it does not apply, e.g. the HTTP columns of a TCP backend), which is not
// exported.
func value(f *field, s string) (v float64, ok bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	if f.column == colStatus {
		return statusUp(s), true, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("column %s: %w", f.column, err)
	}
	return float64(n), true, nil
}

// statusUp reads the status column as OpenShift's exporter does: 1 for a frontend that is OPEN, a
// backend or server that is UP (also "UP 1/3", going down but still up) or a server without health
// checks ("no check"); 0 for DOWN, NOLB, DRAIN, MAINT and the rest.
func statusUp(s string) float64 {
	if strings.HasPrefix(s, "UP") || s == "OPEN" || s == "no check" {
		return 1
	}
	return 0
}
