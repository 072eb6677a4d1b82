package views

import (
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// TestDiffKinds: objects are keyed by Route, so a spare serving a Route equals the Route's own
// backend; each disagreement gets its kind, an operator's hold is told apart from drift.
func TestDiffKinds(t *testing.T) {
	server := func(addr string, w int32, st model.ServerState) model.Server {
		return model.Server{Name: "pod:p:web:http:" + addr + ":8080", Addr: addr, Port: 8080, Weight: w, State: st}
	}
	route := model.RouteInfo{Namespace: "a", Name: "web", Host: "web.example.com"}
	applied := &model.Config{
		Routes:   []model.RouteInfo{withBackend(route, "be_http:_spare:random-00")},
		Backends: []*model.Backend{{Name: "be_http:_spare:random-00", Spare: true, Route: "a/web", Servers: []model.Server{server("10.0.0.1", 1, model.StateReady), server("10.0.0.2", 1, model.StateReady)}}},
		Maps:     []model.MapFile{{Name: model.MapHTTP, Entries: []model.MapEntry{{Key: "web.example.com/", Value: "be_http:_spare:random-00"}}}},
	}
	desired := &model.Config{
		Routes:   []model.RouteInfo{withBackend(route, "be_http:a:web")},
		Backends: []*model.Backend{{Name: "be_http:a:web", Route: "a/web", Servers: []model.Server{server("10.0.0.1", 1, model.StateReady), server("10.0.0.2", 1, model.StateReady), server("10.0.0.3", 1, model.StateReady)}}},
		Maps:     []model.MapFile{{Name: model.MapHTTP, Entries: []model.MapEntry{{Key: "web.example.com/", Value: "be_http:a:web"}}}},
	}
	snap := &Snapshot{
		State: &stateapi.State{Applied: applied, Held: []string{"be_http:_spare:random-00/pod:p:web:http:10.0.0.2:8080: maint"}},
		Servers: map[string][]socket.ServerState{"be_http:_spare:random-00": {
			{Server: "s1", Addr: "10.0.0.1", Port: 8080, UserWeight: 5},
			{Server: "s2", Addr: "10.0.0.2", Port: 8080, UserWeight: 1, AdminState: 0x01},
		}},
		Maps: map[string][]socket.MapEntry{model.MapHTTP: {{Key: "web.example.com/", Value: "be_http:_spare:random-00"}}},
	}
	files := &Files{
		Servers: map[string][]FileServer{"be_http:_spare:random-00": {{Addr: "10.0.0.1:8080", Weight: 1}, {Addr: "10.0.0.2:8080", Weight: 1}}},
		Maps:    map[string][]model.MapEntry{model.MapHTTP: {}},
	}
	got := map[string]string{}
	for _, r := range snap.Diff(desired, files, Filter{}) {
		got[r.Object] = strings.Join(r.Kinds, ",")
	}
	want := map[string]string{
		"server 10.0.0.3:8080":                       "pending",
		"server 10.0.0.1:8080":                       "drift,stale-file",
		"server 10.0.0.2:8080":                       "held,stale-file",
		"map " + model.MapHTTP + " web.example.com/": "stale-file",
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	fs := snap.FileFindings(files)
	if len(fs) != 3 || !slices.ContainsFunc(fs, func(f Finding) bool { return f.Code == "FILES_STALE" && f.Object == "route a/web" }) {
		t.Fatalf("file findings %+v", fs)
	}
}

func withBackend(r model.RouteInfo, backend string) model.RouteInfo {
	r.Backend = backend
	return r
}

func TestParseConfigServers(t *testing.T) {
	cfg := "global\n  maxconn 10\nbackend be_http:a:web\n  balance random\n  server s1 10.0.0.1:8080 id 1 weight 7 check\n" +
		"  server s2 [fd00::1]:8080 id 2 weight 1 check disabled\n# comment\nbackend other\n  server x 1.2.3.4:1\nfrontend f\n  server y 1.1.1.1:1\n"
	got := ParseConfigServers([]byte(cfg))
	want := []FileServer{{Name: "s1", Addr: "10.0.0.1:8080", Weight: 7}, {Name: "s2", Addr: "[fd00::1]:8080", Weight: 1, Disabled: true}}
	if !slices.Equal(got["be_http:a:web"], want) || len(got["other"]) != 1 || len(got) != 2 {
		t.Fatalf("servers %+v", got)
	}

	// A cookie backend writes its servers in both arms of a conditional block: each counts once.
	cfg = "backend be_edge_http:a:web\n.if version_atleast(3.0)\n  cookie c insert indirect nocache httponly\n.endif\n" +
		".if version_atleast(3.0)\n  server s1 10.0.0.1:8080 id 1 weight 7 check cookie 0123\n.else\n  server s1 10.0.0.1:8080 id 1 weight 7 check\n.endif\n" +
		"backend be_http:a:other\n  server s2 10.0.0.2:8080 id 2 weight 3\n"
	got = ParseConfigServers([]byte(cfg))
	if !slices.Equal(got["be_edge_http:a:web"], []FileServer{{Name: "s1", Addr: "10.0.0.1:8080", Weight: 7}}) || len(got["be_http:a:other"]) != 1 {
		t.Fatalf("servers of the conditional blocks %+v", got)
	}
}
