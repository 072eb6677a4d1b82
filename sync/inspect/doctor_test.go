package inspect

import (
	"context"
	"slices"
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
