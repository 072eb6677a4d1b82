package model

import (
	"fmt"
	"testing"
)

func TestServerIDOf(t *testing.T) {
	seen := map[int32]string{}
	for i := range 2000 {
		name := fmt.Sprintf("pod:web-%d:web:http:10.0.%d.%d:8080", i, i/250, i%250)
		id := ServerIDOf(name)
		if id < 1 || id > MaxServerID {
			t.Fatalf("ServerIDOf(%q) = %d, out of 1-%d", name, id, MaxServerID)
		}
		if id != ServerIDOf(name) {
			t.Fatalf("ServerIDOf(%q) is not stable", name)
		}
		seen[id] = name
	}
	// 2,000 names in 2^20 ids: a couple of collisions at most is expected, hundreds would be a bug.
	if len(seen) < 1990 {
		t.Errorf("%d distinct ids for 2000 names", len(seen))
	}
}

func TestNextServerID(t *testing.T) {
	taken := map[int32]bool{5: true, 6: true, MaxServerID: true, 1: true}
	free := func(id int32) bool { return !taken[id] }
	for in, want := range map[int32]int32{4: 4, 5: 7, MaxServerID: 2} {
		if got := NextServerID(in, free); got != want {
			t.Errorf("NextServerID(%d) = %d, want %d", in, got, want)
		}
	}
}

// TestAssignServerIDs: ids follow the names only; on a collision the later name in order moves on.
func TestAssignServerIDs(t *testing.T) {
	// Find two names that hash to the same id.
	byID := map[int32]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		n := fmt.Sprintf("pod:p%d:svc:http:10.1.%d.%d:80", i, i/250%250, i%250)
		if o, ok := byID[ServerIDOf(n)]; ok {
			a, b = min(o, n), max(o, n)
		}
		byID[ServerIDOf(n)] = n
		if i > 5_000_000 {
			t.Fatal("no collision found")
		}
	}
	servers := []Server{{Name: a}, {Name: b}, {Name: "pod:z:svc:http:10.2.0.1:80"}}
	AssignServerIDs(servers)
	id := ServerIDOf(a)
	want := NextServerID(id, func(x int32) bool { return x != id })
	if servers[0].ID != id || servers[1].ID != want || servers[2].ID != ServerIDOf(servers[2].Name) {
		t.Fatalf("ids %d %d %d; want %d %d %d", servers[0].ID, servers[1].ID, servers[2].ID, id, want, ServerIDOf(servers[2].Name))
	}
	c := &Config{Backends: []*Backend{{Name: "be", Kind: KindHTTP, Mode: ModeHTTP, Balance: "random", Servers: servers}}}
	for i := range servers {
		servers[i].Addr, servers[i].Port, servers[i].State = "10.0.0.1", 80, StateReady
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
