package model

import "hash/fnv"

// MaxServerID is the largest server id haroute assigns. HAProxy keys a server's points on the
// consistent-hash ring (balance random, and hash-type consistent) on full_hash(id × 4096 + point) in
// 32 bits, so only the low 20 bits of an id tell two servers apart there: ids stay below 2^20.
const MaxServerID = 1<<20 - 1

// ServerIDOf is the id a server name hashes to: FNV-1a of the name, in 1–MaxServerID. The same name
// gets the same id on every router and after every restart, so two routers fed the same objects
// spread a consistent-hash backend the same way.
func ServerIDOf(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32()%MaxServerID) + 1
}

// NextServerID returns id if it is free, or else the first free id after it (wrapping from
// MaxServerID to 1). free must accept at least one id.
func NextServerID(id int32, free func(int32) bool) int32 {
	for !free(id) {
		id++
		if id > MaxServerID {
			id = 1
		}
	}
	return id
}

// AssignServerIDs gives every server of servers (sorted by name) the id its name hashes to; when two
// names hash to the same id, the later name in order takes the next free one. The result depends on
// the names only.
func AssignServerIDs(servers []Server) {
	used := make(map[int32]bool, len(servers))
	free := func(id int32) bool { return !used[id] }
	for i := range servers {
		id := NextServerID(ServerIDOf(servers[i].Name), free)
		used[id] = true
		servers[i].ID = id
	}
}
