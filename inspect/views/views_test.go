package views

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/runtime/socket"
)

func snapshotFixture() *Snapshot {
	applied := &model.Config{
		Routes: []model.RouteInfo{
			{Namespace: "b", Name: "web", Host: "web.example.com", Backend: "be_http:b:web"},
			{Namespace: "a", Name: "shop", Host: "shop.example.com", Path: "/api", Termination: "edge", InsecurePolicy: "Redirect", Backend: "be_edge_http:_spare:random-00"},
		},
		Backends: []*model.Backend{
			{Name: "be_edge_http:_spare:random-00", Spare: true, Route: "a/shop"},
			{Name: "be_edge_http:_spare:random-01", Spare: true},
			{Name: "be_http:b:web"},
		},
	}
	return &Snapshot{
		State: &stateapi.State{
			Ready:   true,
			Applied: applied,
			Problems: []mapping.Problem{
				{Namespace: "c", Name: "evil", Reason: "HostAlreadyClaimed", Message: "line\nbreak\x1b[31m"},
				{Namespace: "b", Name: "web", Reason: "EndpointRefused", Message: "endpoint 127.0.0.1 refused", Warning: true},
			},
			ReloadsTotal: 1,
			Reloads:      []stateapi.ReloadRecord{{Reason: plan.Reason{Kind: plan.Initial}}},
			RuntimeOps:   map[string]int{"add_server": 2},
		},
		Servers: map[string][]socket.ServerState{
			"be_http:b:web":                 {{Server: "s1", OpState: 2}, {Server: "s2", OpState: 2, AdminState: 0x01}},
			"be_edge_http:_spare:random-00": {{Server: "s1", OpState: 0}},
		},
		Procs: &socket.ProcState{Workers: []socket.Proc{{PID: 2}, {PID: 1, Old: true}}},
	}
}

func TestRoutesAndSummary(t *testing.T) {
	snap := snapshotFixture()
	rows := snap.Routes("")
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	shop, web, evil := rows[0], rows[1], rows[2]
	if shop.Name != "shop" || shop.Status != StatusNoServer || shop.Servers != 1 || shop.Usable != 0 || shop.TLS != "edge/Redirect" {
		t.Errorf("shop %+v: want its down server counted, no usable server", shop)
	}
	if web.Status != StatusServing || web.Servers != 2 || web.Usable != 1 || web.Reason != "EndpointRefused" {
		t.Errorf("web %+v: want 1 of 2 usable (one in maintenance) and its warning", web)
	}
	if evil.Status != StatusRejected || evil.Reason != "HostAlreadyClaimed" {
		t.Errorf("evil %+v", evil)
	}
	if got := snap.Routes("b"); len(got) != 1 || got[0].Name != "web" {
		t.Errorf("namespace b: %+v", got)
	}
	sum := snap.Summary()
	if sum.Admitted != 2 || sum.Rejected != 1 || sum.NoServer != 1 || sum.FreeSpares != 1 || sum.Workers != 1 ||
		sum.OldWorkers != 1 || sum.RuntimeOps != 2 || sum.LastReload == nil || sum.LastReload.Reason != "Initial" {
		t.Errorf("summary %+v", sum)
	}
}

// TestCellsEscapeControlCharacters: no value from a Route can break a table line or reach the
// terminal as an escape sequence.
func TestCellsEscapeControlCharacters(t *testing.T) {
	var buf bytes.Buffer
	if err := PrintRoutes(&buf, snapshotFixture().Routes(""), true, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Count(out, "\n") != 4 || strings.Contains(out, "\x1b") || !strings.Contains(out, `line\nbreak\x1b[31m`) {
		t.Fatalf("table:\n%s", out)
	}
	if got := Cell("a\tb"); got != `a\tb` {
		t.Errorf("Cell(tab) = %q", got)
	}
}

func TestWithoutState(t *testing.T) {
	snap := &Snapshot{Notes: []string{"state socket: no such file"}}
	if snap.Readable() || snap.Routes("") != nil {
		t.Fatal("an empty snapshot has content")
	}
	var buf bytes.Buffer
	if err := PrintSummary(&buf, snap.Summary()); err != nil || !strings.Contains(buf.String(), "Note:") || !strings.Contains(buf.String(), "? current") {
		t.Fatalf("summary without sources: %v\n%s", err, buf.String())
	}
}
