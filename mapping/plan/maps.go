package plan

import (
	"fmt"

	"github.com/haroute/haroute/mapping/model"
)

// mapOps returns the map entry operations between two sets of map files (Diff step 4): adds holds
// every AddMapEntry and SetMapEntry, the backend attribute maps (os_route_http_redirect.map,
// haroute_forwarded.map, haroute_header_values.map) first and then the other maps in name order; dels holds every DelMapEntry,
// the other maps in name order and the attribute maps last. A backend's attributes are thus in place
// before a lookup map sends requests to it, and stay until none does. Entries within a map go in key
// order. Both sides must have the same map files (a map file only exists for HAProxy when the config
// refers to it).
func mapOps(from, to []model.MapFile) (adds, dels []Op, err error) {
	if len(from) != len(to) {
		return nil, nil, fmt.Errorf("%d map files, want %d: map files can only be added or removed by a reload", len(to), len(from))
	}
	var attrAdds, attrDels []Op
	for i := range to {
		if from[i].Name != to[i].Name {
			return nil, nil, fmt.Errorf("map file %q where %q runs: map files can only be added or removed by a reload", to[i].Name, from[i].Name)
		}
		a, d := mapFileOps(&from[i], &to[i])
		if isAttributeMap(to[i].Name) {
			attrAdds, attrDels = append(attrAdds, a...), append(attrDels, d...)
			continue
		}
		adds = append(adds, a...)
		dels = append(dels, d...)
	}
	return append(attrAdds, adds...), append(dels, attrDels...), nil
}

// isAttributeMap reports whether a map is keyed by backend name and holds how requests to that
// backend are handled, rather than which backend serves them.
func isAttributeMap(name string) bool {
	return name == model.MapHTTPRedirect || name == model.MapForwardedHeaders || name == model.MapCookieSameSite || name == model.MapHeaderValues
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
