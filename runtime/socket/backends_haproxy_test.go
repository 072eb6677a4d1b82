package socket_test

import (
	"context"
	"testing"

	"github.com/haroute/haroute/runtime/socket"
)

// TestDynamicBackends: on HAProxy 3.4+ a backend added from a named defaults section serves a host
// once published, stops when unpublished, and is deleted once its servers are gone; a backend of the
// configuration file that only a map names can be deleted too, one that default_backend names never.
// Earlier versions refuse the commands.
func TestDynamicBackends(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	err := socket.AddBackend(ctx, b.admin, "be_dyn", "prof_http")
	if !b.caps.DynamicBackends {
		wantErr(t, "add backend before 3.4", err, socket.ErrUnexpectedReply)
		return
	}
	wantErr(t, "add backend", err, nil)
	wantErr(t, "add backend again", socket.AddBackend(ctx, b.admin, "be_dyn", "prof_http"), socket.ErrExists)
	wantErr(t, "add backend from no profile", socket.AddBackend(ctx, b.admin, "be_dyn2", "no_such_profile"), socket.ErrUnexpectedReply)
	wantErr(t, "add server", socket.AddServer(ctx, b.admin, "be_dyn", "s1", b.s1.Addr()), nil)
	wantErr(t, "ready", socket.SetServerState(ctx, b.admin, "be_dyn", "s1", "ready"), nil)
	if _, err := b.admin.Command(ctx, "add map "+b.hostsMap+" dyn.example.com be_dyn"); err != nil {
		t.Fatal(err)
	}
	answer := func(want int) {
		t.Helper()
		resp, err := b.client.Do("GET", "http://dyn.example.com/", nil)
		if err != nil || resp.Status != want {
			t.Fatalf("GET dyn.example.com: %v %+v, want %d", err, resp, want)
		}
	}
	answer(503) // unpublished: the default backend answers
	wantErr(t, "publish", socket.PublishBackend(ctx, b.admin, "be_dyn"), nil)
	answer(200)
	wantErr(t, "del backend while published", socket.DelBackend(ctx, b.admin, "be_dyn"), socket.ErrUnexpectedReply)
	wantErr(t, "unpublish", socket.UnpublishBackend(ctx, b.admin, "be_dyn"), nil)
	answer(503)
	wantErr(t, "del backend with a server", socket.DelBackend(ctx, b.admin, "be_dyn"), socket.ErrUnexpectedReply)
	wantErr(t, "maint", socket.SetServerState(ctx, b.admin, "be_dyn", "s1", "maint"), nil)
	wantErr(t, "del server", socket.DelServer(ctx, b.admin, "be_dyn", "s1"), nil)
	wantErr(t, "del backend", socket.DelBackend(ctx, b.admin, "be_dyn"), nil)
	wantErr(t, "del backend again", socket.DelBackend(ctx, b.admin, "be_dyn"), socket.ErrNotFound)
	wantErr(t, "publish a deleted backend", socket.PublishBackend(ctx, b.admin, "be_dyn"), socket.ErrNotFound)

	// be_secure is in the configuration file, and no rule names it.
	wantErr(t, "unpublish be_secure", socket.UnpublishBackend(ctx, b.admin, "be_secure"), nil)
	wantErr(t, "del be_secure", socket.DelBackend(ctx, b.admin, "be_secure"), nil)
	// be_default is default_backend of the frontends.
	wantErr(t, "unpublish be_default", socket.UnpublishBackend(ctx, b.admin, "be_default"), nil)
	wantErr(t, "del be_default", socket.DelBackend(ctx, b.admin, "be_default"), socket.ErrUnexpectedReply)
}
