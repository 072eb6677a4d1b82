package haproxy_test

import (
	"context"
	"slices"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// TestRepairLeavesOperatorHolds: drift made by hand is repaired through ops, except a server an
// operator put in maintenance or drain, which Repair reports as held and leaves alone.
func TestRepairLeavesOperatorHolds(t *testing.T) {
	ctx := context.Background()
	ca := testkit.NewCA(t, "router CA")
	a := testkit.StartHTTPBackend(t, "127.0.0.2", "a")
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = 1
	desired := routesTo(t, opts, a, "a.example.com")
	dir := testkit.TempDir(t)
	inst, h := startInstance(t, dir, render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}, desired)
	admin := socket.NewAdmin(h.AdminSocket, socket.Options{})
	applied := inst.Applied()
	be := applied.Backend(applied.Routes[0].Backend)
	srv := be.Servers[0]

	if err := socket.SetServerState(ctx, admin, be.Name, srv.Name, "maint"); err != nil {
		t.Fatal(err)
	}
	if err := socket.SetServerWeight(ctx, admin, be.Name, srv.Name, 7); err != nil {
		t.Fatal(err)
	}
	res, err := inst.Repair(ctx)
	if err != nil || res.Resync {
		t.Fatalf("Repair = %+v, %v", res, err)
	}
	if want := []string{be.Name + "/" + srv.Name + ": maint"}; !slices.Equal(res.Held, want) {
		t.Fatalf("held %v, want %v", res.Held, want)
	}
	if len(res.Drift) != 1 || res.Result.Counts["set_server_weight"] != 1 {
		t.Fatalf("drift %v, ops %v: want the weight repaired", res.Drift, res.Result.Counts)
	}
	states, err := socket.ShowServersState(ctx, admin, be.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Server == srv.Name && (s.UserWeight != int(srv.Weight) || s.AdminState&0x01 == 0) {
			t.Fatalf("server after the repair: weight %d, admin state %#x; want weight %d, still in maintenance", s.UserWeight, s.AdminState, srv.Weight)
		}
	}
	again, err := inst.Repair(ctx)
	if err != nil || len(again.Drift) != 0 || len(again.Held) != 1 {
		t.Fatalf("second Repair = %+v, %v; want only the hold", again, err)
	}
}
