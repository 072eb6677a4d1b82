package stateapi_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// serve serves h on a unix socket in a temporary directory and returns the socket's path.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return path
}

// TestReadWhatHandlerServes round-trips a State with every kind of field through the socket: the
// loop's side (Handler) and the commands' side (Read) agree on the encoding.
func TestReadWhatHandlerServes(t *testing.T) {
	at := time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC)
	want := stateapi.State{
		Generated:    at,
		Ready:        true,
		Applied:      &model.Config{Routes: []model.RouteInfo{{Namespace: "demo", Name: "web"}}},
		Problems:     []mapping.Problem{{Namespace: "demo", Name: "bad", Reason: "HostAlreadyClaimed", Message: "taken"}},
		Reloads:      []stateapi.ReloadRecord{{At: at, Reason: plan.Reason{Kind: plan.Initial}, Seconds: 0.25}},
		ReloadsTotal: 1,
		RuntimeOps:   map[string]int{"add_server": 3},
		LastSync:     &stateapi.SyncRecord{At: at, Seconds: 0.01, Ops: map[string]int{"add_server": 3}},
		Drift:        []string{"be_http:demo:web/pod-1: weight"},
		Held:         []string{"be_http:demo:web/pod-2"},
		Certificates: []stateapi.CertInfo{{Name: "demo:web.pem", Digest: "sha256:00", Routes: []string{"demo/web"},
			SNI: []string{"web.example.test"}, DNSNames: []string{"web.example.test"}, NotBefore: at, NotAfter: at.Add(time.Hour)}},
		Changes:     map[string]stateapi.RouteChange{"demo/web": {At: at, Via: stateapi.ViaReload, Reason: string(plan.Initial)}},
		Labels:      map[string]map[string]string{"demo/web": {"tier": "front"}},
		RunSettings: &stateapi.RunSettings{Env: map[string]string{"ROUTER_USE_PROXY_PROTOCOL": ""}, Flags: map[string]string{"allow-loopback-endpoints": "true"}},
	}
	path := serve(t, stateapi.Handler(func() stateapi.State { return want }, nil))
	got, err := stateapi.Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, want)
	}
}

// TestHandlerAnswersOnlyItsPath: the socket answers GET Path and nothing else.
func TestHandlerAnswersOnlyItsPath(t *testing.T) {
	h := stateapi.Handler(func() stateapi.State { return stateapi.State{} }, nil)
	path := serve(t, h)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	defer client.CloseIdleConnections()
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, stateapi.Path, http.StatusOK},
		{http.MethodGet, "/other", http.StatusNotFound},
		{http.MethodPost, stateapi.Path, http.StatusMethodNotAllowed},
	} {
		req, err := http.NewRequestWithContext(context.Background(), c.method, "http://haroute"+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}

// TestReadErrors: a missing socket and a server that is not the state socket give errors that say so.
func TestReadErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.sock")
	if _, err := stateapi.Read(context.Background(), missing); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing socket: %v, want an error wrapping os.ErrNotExist", err)
	}
	path := serve(t, http.NotFoundHandler())
	if _, err := stateapi.Read(context.Background(), path); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("other server: %v, want its 404", err)
	}
	garbage := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{not json")) }))
	if _, err := stateapi.Read(context.Background(), garbage); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("garbage: %v, want a decode error", err)
	}
}
