package oracle

import (
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

func server(name string, weight int32, state model.ServerState) model.Server {
	return model.Server{Name: name, Addr: "127.0.0.2", Port: 8080, Weight: weight, State: state}
}

// viewPair returns the state of A (the Route on a claimed spare, a free spare, a retired backend)
// and of B (the Route on its own backend, a full pool) for the same desired state.
func viewPair() (a, b *model.Config) {
	maps := func(be string) []model.MapFile {
		return []model.MapFile{
			{Name: model.MapHTTP, Entries: []model.MapEntry{{Key: "=h.test/api", Value: be}, {Key: "h.test/api/", Value: be}}},
			{Name: model.MapHTTPRedirect, Entries: []model.MapEntry{{Key: be, Value: "1"}}},
			{Name: model.MapTCP, Entries: []model.MapEntry{{Key: "e.w.test", Value: model.SNIBackend}}},
		}
	}
	srv := func() []model.Server {
		return []model.Server{server("pod:p:s:http:127.0.0.2:8080", 256, model.StateReady)}
	}
	a = &model.Config{
		Maps: maps("be_http:_spare:random-00"),
		Backends: []*model.Backend{
			{Name: "be_http:_spare:random-00", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Spare: true, Route: "ns/r", Servers: srv()},
			{Name: "be_http:_spare:random-01", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Spare: true},
			{Name: "be_http:ns:gone", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Retired: true},
		},
		Certificates: []model.Certificate{{Name: "ns_r.pem", PEM: "pem", SNI: []string{"h.test"}}},
	}
	b = &model.Config{
		Maps: maps("be_http:ns:r"),
		Backends: []*model.Backend{
			{Name: "be_http:_spare:random-00", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Spare: true},
			{Name: "be_http:ns:r", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Route: "ns/r", Servers: srv()},
		},
		Certificates: []model.Certificate{{Name: "ns_r.pem", PEM: "pem", SNI: []string{"h.test"}}},
	}
	return a, b
}

func TestViewsOfEquivalentStatesAgree(t *testing.T) {
	a, b := viewPair()
	if d := DiffViews(NewView(a, nil), NewView(b, nil)); len(d) > 0 {
		t.Fatalf("a claimed spare and the Route's own backend should give the same view:\n%s", strings.Join(d, "\n"))
	}
	v := NewView(a, nil)
	rv := v.Routes["ns/r"]
	if rv == nil || len(rv.Entries) != 3 || len(rv.Servers) != 1 || len(v.Shared) != 1 {
		t.Fatalf("view of A: %+v (route %+v)", v, rv)
	}
}

func TestViewDifferences(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(a *model.Config)
		skip   map[string]bool
		want   string // a substring of one difference; "" for none
	}{
		"stale server on a free spare": {
			mutate: func(a *model.Config) { a.Backends[1].Servers = []model.Server{server("pod:x", 1, model.StateMaint)} },
			want:   "A: backend be_http:_spare:random-01 serves no route but has servers",
		},
		"deferred server skipped": {
			mutate: func(a *model.Config) { a.Backends[2].Servers = []model.Server{server("pod:x", 1, model.StateMaint)} },
			skip:   map[string]bool{ServerKey("be_http:ns:gone", "pod:x"): true},
		},
		"map entry pointing at a retired backend": {
			mutate: func(a *model.Config) { a.Maps[0].Entries[1].Value = "be_http:ns:gone" },
			want:   "points at backend be_http:ns:gone, which serves no route",
		},
		"map entry naming an unknown backend": {
			mutate: func(a *model.Config) { a.Maps[0].Entries[0].Value = "be_http:ns:nope" },
			want:   "which does not exist",
		},
		"missing redirect": {
			mutate: func(a *model.Config) { a.Maps[1].Entries = nil },
			want:   "route ns/r: map entry only in B: os_route_http_redirect.map @route 1",
		},
		"weight": {
			mutate: func(a *model.Config) { a.Backends[0].Servers[0].Weight = 1 },
			want:   "route ns/r: server only in A: pod:p:s:http:127.0.0.2:8080 127.0.0.2:8080 weight=1 ready",
		},
		"balance": {
			mutate: func(a *model.Config) { a.Backends[0].Balance = "roundrobin" },
			want:   `route ns/r: backend A "http http balance=roundrobin", B "http http balance=random"`,
		},
		"certificate": {
			mutate: func(a *model.Config) { a.Certificates[0].PEM = "other" },
			want:   "certificate only in A: ns_r.pem",
		},
		"shared entry": {
			mutate: func(a *model.Config) { a.Maps[2].Entries = nil },
			want:   "shared map entry only in B: os_tcp_be.map e.w.test be_sni",
		},
		"route served twice": {
			mutate: func(a *model.Config) { a.Backends[1].Route = "ns/r" },
			want:   "route ns/r is served by two backends",
		},
	} {
		t.Run(name, func(t *testing.T) {
			a, b := viewPair()
			tc.mutate(a)
			d := DiffViews(NewView(a, tc.skip), NewView(b, nil))
			if tc.want == "" {
				if len(d) > 0 {
					t.Fatalf("want no difference, got:\n%s", strings.Join(d, "\n"))
				}
				return
			}
			for _, line := range d {
				if strings.Contains(line, tc.want) {
					return
				}
			}
			t.Fatalf("want a difference containing %q, got:\n%s", tc.want, strings.Join(d, "\n"))
		})
	}
}

// TestViewFilesHeaderValuesUnderTheRoute: haroute_header_values.map entries are keyed by their
// backend; the view files them under the backend's Route, and a value of a backend that serves no
// Route (or of no backend) is a problem.
func TestViewFilesHeaderValuesUnderTheRoute(t *testing.T) {
	cfg := &model.Config{
		Maps: []model.MapFile{{Name: model.MapHeaderValues, Entries: []model.MapEntry{
			{Key: "be_http:ns:r/req/0", Value: "one%20two"},
			{Key: "be_http:ns:gone/res/1", Value: "x"},
			{Key: "be_http:ns:none/req/0", Value: "y"},
		}}},
		Backends: []*model.Backend{
			{Name: "be_http:ns:r", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Route: "ns/r",
				RequestHeaders: []model.HeaderRule{{Action: model.HeaderSet, Name: "X-A", Key: "be_http:ns:r/req/0"}}},
			{Name: "be_http:ns:gone", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Retired: true},
		},
	}
	v := NewView(cfg, nil)
	rv := v.Routes["ns/r"]
	if rv == nil || len(rv.Entries) != 1 || rv.Entries[0] != model.MapHeaderValues+" @route/req/0 one%20two" ||
		!strings.Contains(rv.Backend, "request-header=Set:X-A=map") {
		t.Fatalf("route view %+v", rv)
	}
	if len(v.Problems) != 2 || len(v.Shared) != 0 {
		t.Fatalf("problems %v, shared %v; want the two orphan values as problems", v.Problems, v.Shared)
	}
}
