package socket

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// MapLookup is one answer of `get map`: HAProxy looks the key up with every matching method the
// configuration uses the map with (map_str: "str", map_beg: "beg", ...), one answer each.
type MapLookup struct {
	// Type is the matching method ("str", "beg", ...).
	Type  string
	Found bool
	// Key is the entry that matched (for "beg", the prefix) and Value its value.
	Key, Value string
}

// GetMap asks HAProxy which entry of the map at mapPath matches key (`get map`), once per matching
// method the configuration uses the map with. ErrNotFound for an unknown map.
func GetMap(ctx context.Context, r Runner, mapPath, key string) ([]MapLookup, error) {
	cmd, err := line("get", "map", mapPath, key)
	if err != nil {
		return nil, err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	out, err := ParseMapLookup(reply)
	if err != nil {
		return nil, parseError(cmd, reply, err)
	}
	return out, nil
}

// ParseMapLookup reads a `get map` reply: one line per matching method,
// `type=str, case=sensitive, found=yes, idx=tree, key="k", value="v", type="str"`.
func ParseMapLookup(reply string) ([]MapLookup, error) {
	var out []MapLookup
	for _, l := range strings.Split(strings.TrimSpace(reply), "\n") {
		if l == "" {
			continue
		}
		if !strings.HasPrefix(l, "type=") {
			return nil, fmt.Errorf("not a lookup line: %q", l)
		}
		var m MapLookup
		for _, field := range splitLookup(l) {
			name, val, _ := strings.Cut(field, "=")
			if uq, err := strconv.Unquote(val); err == nil {
				val = uq
			}
			switch name {
			case "type":
				if m.Type == "" {
					m.Type = val
				}
			case "found":
				m.Found = val == "yes"
			case "key":
				m.Key = val
			case "value":
				m.Value = val
			}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no lookup line")
	}
	return out, nil
}

// splitLookup splits a lookup line at the ", " that separate its fields, not inside quotes.
func splitLookup(l string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && quoted:
			i++
		case l[i] == '"':
			quoted = !quoted
		case !quoted && l[i] == ',' && i+1 < len(l) && l[i+1] == ' ':
			out = append(out, l[start:i])
			start = i + 2
			i++
		}
	}
	return append(out, l[start:])
}
