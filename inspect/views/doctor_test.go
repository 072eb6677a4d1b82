package views

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

func codes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code+" "+f.Object)
	}
	return out
}

// TestDoctorFindsFaults: a Route whose only server is in maintenance, a rejected Route, a failed
// reload, and a map entry HAProxy lost (the /api Route is then shadowed by the / one).
func TestDoctorFindsFaults(t *testing.T) {
	snap := explainFixture()
	snap.State.Problems = []mapping.Problem{{Namespace: "b", Name: "dup", Reason: "HostAlreadyClaimed", Message: "shop.example.com"}}
	snap.Procs = &socket.ProcState{Workers: []socket.Proc{{PID: 3}}, Failed: 1}
	maps := live(snap)
	p := fixtureDir + "/conf/" + model.MapHTTP
	maps[p] = maps[p][1:]
	got := codes(snap.Doctor(context.Background(), maps, fixtureDir))
	for _, want := range []string{
		"RELOAD_FAILED haproxy", "NO_USABLE_SERVER route a/web", "ROUTE_REJECTED route b/dup",
		"MODEL_HAPROXY_DISAGREE route a/api", "ROUTE_NOT_REACHED route a/api",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("findings lack %q:\n%q", want, got)
		}
	}
	if got[0] == "ROUTE_REJECTED route b/dup" {
		t.Errorf("findings not sorted by level: %q", got)
	}
}

// TestDoctorOfflineIsALint: from manifests alone (no HAProxy), only the model is checked.
func TestDoctorOfflineIsALint(t *testing.T) {
	snap := explainFixture()
	snap.Servers, snap.Procs = nil, nil
	if got := codes(snap.Doctor(context.Background(), nil, fixtureDir)); len(got) != 0 {
		t.Fatalf("a consistent model offline: %q", got)
	}
	snap.State.Problems = []mapping.Problem{{Namespace: "b", Name: "dup", Reason: "HostAlreadyClaimed", Message: "x"}}
	if got := codes(snap.Doctor(context.Background(), nil, fixtureDir)); !slices.Equal(got, []string{"ROUTE_REJECTED route b/dup"}) {
		t.Fatalf("offline with a rejected Route: %q", got)
	}
}

// TestDoctorWorkerReloadLimit: doctor names mworker-max-reloads with the old workers, and warns
// when an old worker nears it (the master would stop it and cut its connections).
func TestDoctorWorkerReloadLimit(t *testing.T) {
	snap := explainFixture()
	snap.State.Applied = snap.State.Applied.Clone()
	snap.State.Applied.Settings.MaxWorkerReloads = 10
	old := func(reloads ...int) []socket.Proc {
		ws := []socket.Proc{{PID: 1}}
		for i, r := range reloads {
			ws = append(ws, socket.Proc{PID: 10 + i, Reloads: r, Old: true})
		}
		return ws
	}
	find := func(code string) *Finding {
		for _, f := range snap.Doctor(context.Background(), live(snap), fixtureDir) {
			if f.Code == code {
				return &f
			}
		}
		return nil
	}
	snap.Procs = &socket.ProcState{Workers: old(7, 1)}
	if f := find("WORKER_RELOAD_LIMIT"); f != nil {
		t.Fatalf("an old worker at 7 of 10 reloads: %s", f)
	}
	if sum := snap.Summary(); sum.MaxWorkerReloads != 10 || sum.OldestWorkerReloads != 7 {
		t.Fatalf("summary: limit %d, oldest %d", sum.MaxWorkerReloads, sum.OldestWorkerReloads)
	}
	snap.Procs = &socket.ProcState{Workers: old(8, 3, 2)}
	if f := find("WORKER_RELOAD_LIMIT"); f == nil || f.Level != LevelWarn || !strings.Contains(f.Message, "seen 8 reloads; at 11") {
		t.Fatalf("an old worker at 8 of 10 reloads: %v", f)
	}
	if f := find("OLD_WORKERS"); f == nil || !strings.Contains(f.Message, "after 10 reloads: mworker-max-reloads") {
		t.Fatalf("OLD_WORKERS does not name the limit: %v", f)
	}
	var out strings.Builder
	if err := PrintSummary(&out, snap.Summary()); err != nil || !strings.Contains(out.String(), "stopped after 10 reloads (mworker-max-reloads); the oldest has seen 8") {
		t.Fatalf("summary text (%v):\n%s", err, out.String())
	}
	snap.State.Applied.Settings.MaxWorkerReloads = 0 // not set: haroute's default is rendered
	if sum := snap.Summary(); sum.MaxWorkerReloads != model.DefaultMaxWorkerReloads {
		t.Fatalf("default limit %d", sum.MaxWorkerReloads)
	}
}
