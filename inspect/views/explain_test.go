package views

import (
	"context"
	"strings"
	"testing"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// fakeMaps answers `get map` from its own maps (by path), as HAProxy's map_str and map_beg do.
type fakeMaps map[string][]model.MapEntry

func (f fakeMaps) Command(_ context.Context, cmd string) (string, error) {
	parts := strings.Fields(cmd)
	if len(parts) != 4 || parts[0] != "get" || parts[1] != "map" {
		return "Unknown command.\n", nil
	}
	entries, key := f[parts[2]], parts[3]
	str, beg := "type=str, case=sensitive, found=no\n", "type=beg, case=sensitive, found=no\n"
	best := ""
	for _, e := range entries {
		if e.Key == key {
			str = `type=str, case=sensitive, found=yes, idx=tree, key="` + e.Key + `", value="` + e.Value + `", type="str"` + "\n"
		}
		if strings.HasPrefix(key, e.Key) && len(e.Key) > len(best) {
			best = e.Key
			beg = `type=beg, case=sensitive, found=yes, idx=tree, key="` + e.Key + `", value="` + e.Value + `", type="str"` + "\n"
		}
	}
	return str + beg + "\n", nil
}

func (f fakeMaps) Payload(context.Context, string, string) (string, error) { return "", nil }

var _ socket.Runner = fakeMaps(nil)

func explainFixture() *Snapshot {
	cfg := &model.Config{
		Maps: []model.MapFile{
			{Name: model.MapHTTP, Entries: []model.MapEntry{
				{Key: "=shop.example.com/api", Value: "be_http:a:api"}, {Key: "shop.example.com/", Value: "be_http:a:web"},
				{Key: "shop.example.com/api/", Value: "be_http:a:api"}, {Key: "*.wild.example.com/", Value: "be_http:a:wild"}}},
			{Name: model.MapHTTPRedirect, Entries: []model.MapEntry{
				{Key: "=shop.example.com/api", Value: "0"}, {Key: "shop.example.com/", Value: "0"},
				{Key: "shop.example.com/api/", Value: "0"}, {Key: "*.wild.example.com/", Value: "0"},
				{Key: "secure.example.com/", Value: "1"}, {Key: "pass.example.com/", Value: "0"}}},
			{Name: model.MapEdgeReencrypt, Entries: []model.MapEntry{{Key: "secure.example.com/", Value: "be_edge_http:a:secure"}}},
			{Name: model.MapTCP, Entries: []model.MapEntry{{Key: "pass.example.com", Value: "be_tcp:a:pass"}}},
			{Name: model.MapWildcardDomain, Entries: []model.MapEntry{{Key: "*.wild.example.com", Value: "1"}}},
		},
		Routes: []model.RouteInfo{
			{Namespace: "a", Name: "api", Host: "shop.example.com", Path: "/api", Backend: "be_http:a:api"},
			{Namespace: "a", Name: "web", Host: "shop.example.com", Backend: "be_http:a:web"},
			{Namespace: "a", Name: "wild", Host: "*.wild.example.com", Backend: "be_http:a:wild"},
			{Namespace: "a", Name: "secure", Host: "secure.example.com", Termination: "edge", InsecurePolicy: "Redirect", Backend: "be_edge_http:a:secure"},
			{Namespace: "a", Name: "pass", Host: "pass.example.com", Termination: "passthrough", Backend: "be_tcp:a:pass"},
		},
	}
	return &Snapshot{
		State: &stateapi.State{Applied: cfg},
		Servers: map[string][]socket.ServerState{
			"be_http:a:api": {{Server: "s1", OpState: 2}}, "be_http:a:web": {{Server: "s1", OpState: 2, AdminState: 0x01}},
			"be_http:a:wild": {{Server: "s1", OpState: 2}}, "be_edge_http:a:secure": {{Server: "s1", OpState: 2}},
			"be_tcp:a:pass": {{Server: "s1", OpState: 2}},
		},
	}
}

const fixtureDir = "/h"

// live returns HAProxy's maps as the fixture's model has them (a copy), by path.
func live(s *Snapshot) fakeMaps {
	out := fakeMaps{}
	for _, m := range s.State.Applied.Maps {
		out[fixtureDir+"/conf/"+m.Name] = append([]model.MapEntry(nil), m.Entries...)
	}
	return out
}

func TestExplainVerdicts(t *testing.T) {
	snap := explainFixture()
	maps := live(snap)
	for _, tc := range []struct {
		url, host, verdict, route string
	}{
		{"http://shop.example.com/api", "", VerdictServed, "a/api"},
		{"http://SHOP.example.com.:8080/api/v2?q=1", "", VerdictServed, "a/api"},
		{"http://shop.example.com/apix", "", VerdictNoServer, "a/web"}, // its only server is in maintenance
		{"http://x.wild.example.com/", "", VerdictServed, "a/wild"},
		{"http://a.b.wild.example.com/", "", VerdictDefault, ""},
		{"http://secure.example.com/", "", VerdictRedirect, "a/secure"},
		{"https://secure.example.com/", "", VerdictServed, "a/secure"},
		{"https://pass.example.com/", "", VerdictPassthrough, "a/pass"},
		{"http://10.0.0.1/", "shop.example.com", VerdictNoServer, "a/web"},
	} {
		ex := snap.Explain(context.Background(), maps, fixtureDir, Request{URL: tc.url, Host: tc.host})
		if ex.Verdict != tc.verdict || ex.Route != tc.route || ex.Disagreements != 0 {
			t.Errorf("%s (Host %q): verdict %s, route %q, %d disagreements; want %s, %q\n%+v", tc.url, tc.host, ex.Verdict, ex.Route, ex.Disagreements, tc.verdict, tc.route, ex.Steps)
		}
	}
}

// TestExplainMarksDisagreement: when HAProxy's map lacks the entry the model has (drift), the step is
// marked and the verdict follows what HAProxy does.
func TestExplainMarksDisagreement(t *testing.T) {
	snap := explainFixture()
	maps := live(snap)
	p := fixtureDir + "/conf/" + model.MapHTTP
	maps[p] = maps[p][1:] // HAProxy lost "=shop.example.com/api"
	ex := snap.Explain(context.Background(), maps, fixtureDir, Request{URL: "http://shop.example.com/api"})
	if ex.Disagreements != 1 || ex.Route != "a/web" {
		t.Fatalf("disagreements %d, route %q: want 1 and the / Route HAProxy really picks\n%+v", ex.Disagreements, ex.Route, ex.Steps)
	}
	offline := snap.Explain(context.Background(), nil, fixtureDir, Request{URL: "http://shop.example.com/api"})
	if offline.Route != "a/api" || offline.Disagreements != 0 {
		t.Fatalf("offline: %+v", offline)
	}
}
