package plan

import (
	"fmt"
	"slices"

	"github.com/haroute/haroute/mapping/model"
)

// mapOps returns the map entry operations between two sets of map files (Diff step 4): adds holds
// every AddMapEntry and SetMapEntry, dels every DelMapEntry, each group ordered so that a request
// never meets a state worse than the one before or the one after:
//
//   - adds: the backend attribute maps, haroute_cookie.map, haroute_forwarded.map and
//     haroute_header_values.map (a backend's attributes are in place before a lookup map sends
//     requests to it), the redirect map's entries that redirect ("1": a Route never serves plain
//     HTTP before its redirect), the other maps in name order, then the redirect map's "0" entries
//     (a Route stops being redirected once its plain-HTTP entry is in);
//   - dels: the redirect map's "0" entries (a Route removed from under a redirecting one is
//     redirected before its plain-HTTP entry goes), the other maps in name order, the attribute
//     maps, then the redirect map's "1" entries.
//
// Entries within a group go in key order. Both sides must have the same map files (a map file only
// exists for HAProxy when the config refers to it).
func mapOps(from, to []model.MapFile) (adds, dels []Op, err error) {
	if len(from) != len(to) {
		return nil, nil, fmt.Errorf("%d map files, want %d: map files can only be added or removed by a reload", len(to), len(from))
	}
	var attrAdds, attrDels, redirectOn, redirectOff, unredirect, unredirectLast []Op
	for i := range to {
		if from[i].Name != to[i].Name {
			return nil, nil, fmt.Errorf("map file %q where %q runs: map files can only be added or removed by a reload", to[i].Name, from[i].Name)
		}
		a, d := mapFileOps(&from[i], &to[i])
		switch to[i].Name {
		case model.MapForwardedHeaders, model.MapCookieSameSite, model.MapCookieNames, model.MapHeaderValues,
			model.MapTimeoutServer, model.MapTimeoutTunnel, model.MapHSTS:
			attrAdds, attrDels = append(attrAdds, a...), append(attrDels, d...)
		case model.MapHTTPRedirect:
			for _, op := range a {
				if opValue(op) == redirectOnValue {
					redirectOn = append(redirectOn, op)
				} else {
					redirectOff = append(redirectOff, op)
				}
			}
			var old map[string]string
			if len(d) > 0 {
				old = entryValues(&from[i])
			}
			for _, op := range d {
				if old[op.(DelMapEntry).Key] == redirectOnValue {
					unredirectLast = append(unredirectLast, op)
				} else {
					unredirect = append(unredirect, op)
				}
			}
		default:
			adds = append(adds, a...)
			dels = append(dels, d...)
		}
	}
	adds = slices.Concat(attrAdds, redirectOn, adds, redirectOff)
	dels = slices.Concat(unredirect, dels, attrDels, unredirectLast)
	return adds, dels, nil
}

// redirectOnValue is the value of a model.MapHTTPRedirect entry whose Route redirects.
const redirectOnValue = "1"

// opValue returns the value an AddMapEntry or SetMapEntry writes.
func opValue(op Op) string {
	switch op := op.(type) {
	case AddMapEntry:
		return op.Value
	case SetMapEntry:
		return op.Value
	}
	return ""
}

// entryValues returns a map file's entries as key → value.
func entryValues(m *model.MapFile) map[string]string {
	out := make(map[string]string, len(m.Entries))
	for _, e := range m.Entries {
		out[e.Key] = e.Value
	}
	return out
}

// mapFileOps returns the adds and sets, and the deletes, that turn one map file into another. Both
// are sorted by key (map files are).
func mapFileOps(a, b *model.MapFile) (adds, dels []Op) {
	i, j := 0, 0
	for i < len(a.Entries) || j < len(b.Entries) {
		// Equality first: it is the common case and cheaper than ordering keys.
		if i < len(a.Entries) && j < len(b.Entries) && a.Entries[i].Key == b.Entries[j].Key {
			if a.Entries[i].Value != b.Entries[j].Value {
				adds = append(adds, SetMapEntry{Map: b.Name, Key: b.Entries[j].Key, Value: b.Entries[j].Value})
			}
			i++
			j++
			continue
		}
		if j >= len(b.Entries) || (i < len(a.Entries) && a.Entries[i].Key < b.Entries[j].Key) {
			dels = append(dels, DelMapEntry{Map: a.Name, Key: a.Entries[i].Key})
			i++
		} else {
			adds = append(adds, AddMapEntry{Map: b.Name, Key: b.Entries[j].Key, Value: b.Entries[j].Value})
			j++
		}
	}
	return adds, dels
}
