package plantest_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/plan/plantest"
)

// simConfig is a small hand-made applied state.
func simConfig() *model.Config {
	return &model.Config{
		Maps: []model.MapFile{
			{Name: model.MapHTTP, Entries: []model.MapEntry{{Key: "a.example.com/", Value: "be_http:ns:a"}}},
			{Name: model.MapHTTPRedirect},
		},
		Backends: []*model.Backend{
			{Name: "be_http:ns:a", Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Route: "ns/a",
				Cookie: &model.Cookie{Name: "c", Key: "k"},
				Servers: []model.Server{
					{Name: "s1", ID: 11, Addr: "10.0.0.1", Port: 80, Weight: 1, State: model.StateReady},
					{Name: "s2", ID: 12, Addr: "10.0.0.2", Port: 80, Weight: 1, State: model.StateMaint},
				}},
			{Name: "be_secure:ns:b", Kind: model.KindReencrypt, Mode: model.ModeHTTP, Balance: "random", Route: "ns/b",
				TLS:     &model.BackendTLS{CAFile: "ns:b.pem"},
				Servers: []model.Server{{Name: "s3", ID: 13, Addr: "10.0.0.3", Port: 443, Weight: 1, State: model.StateReady, VerifyHost: "b.ns.svc"}}},
		},
		Certificates: []model.Certificate{{Name: "ns:a.pem", PEM: "A\n", SNI: []string{"a.example.com"}}},
		CAFiles:      []model.CAFile{{Name: "ns:b.pem", PEM: "CA\n"}},
	}
}

func TestSimulateRefuses(t *testing.T) {
	a := simConfig()
	plainBackend := *a.Backends[0]
	srv := model.Server{Name: "s9", ID: 19, Addr: "10.0.0.9", Port: 80, Weight: 1, State: model.StateReady}
	secure := *a.Backends[1]
	secure.TLS = &model.BackendTLS{CAFile: "ns:other.pem"}
	unclaimed := *a.Backends[1]
	unclaimed.TLS = nil
	for name, tc := range map[string]struct {
		ops  []plan.Op
		want string
	}{
		"duplicate server":          {[]plan.Op{plan.AddServer{Backend: plainBackend, Server: a.Backends[0].Servers[0]}}, "already exists"},
		"unknown backend":           {[]plan.Op{plan.AddServer{Backend: model.Backend{Name: "be_http:ns:zz"}, Server: srv}}, "no such backend"},
		"CA not loaded":             {[]plan.Op{plan.AddServer{Backend: secure, Server: srv}}, "not loaded"},
		"reencrypt without TLS":     {[]plan.Op{plan.AddServer{Backend: unclaimed, Server: srv}}, "needs TLS settings"},
		"del server not in maint":   {[]plan.Op{plan.DelServer{Backend: "be_http:ns:a", Server: "s1"}}, "not in maintenance"},
		"del unknown server":        {[]plan.Op{plan.DelServer{Backend: "be_http:ns:a", Server: "s9"}}, "no such server"},
		"weight of unknown server":  {[]plan.Op{plan.SetServerWeight{Backend: "be_http:ns:a", Server: "s9", Weight: 2}}, "no such server"},
		"weight out of range":       {[]plan.Op{plan.SetServerWeight{Backend: "be_http:ns:a", Server: "s1", Weight: 300}}, "out of 0-256"},
		"state of unknown server":   {[]plan.Op{plan.SetServerState{Backend: "be_http:ns:a", Server: "s9", State: model.StateReady}}, "no such server"},
		"health of unknown server":  {[]plan.Op{plan.EnableHealth{Backend: "be_http:ns:a", Server: "s9"}}, "no such server"},
		"duplicate map key":         {[]plan.Op{plan.AddMapEntry{Map: model.MapHTTP, Key: "a.example.com/", Value: "x"}}, "already present"},
		"set missing key":           {[]plan.Op{plan.SetMapEntry{Map: model.MapHTTP, Key: "b/", Value: "x"}}, "not found"},
		"del missing key":           {[]plan.Op{plan.DelMapEntry{Map: model.MapHTTP, Key: "b/"}}, "not found"},
		"unknown map":               {[]plan.Op{plan.DelMapEntry{Map: "nope.map", Key: "b/"}}, "unknown map"},
		"new existing certificate":  {[]plan.Op{plan.SetCertificate{Cert: model.Certificate{Name: "ns:a.pem", PEM: "X\n"}, New: true}}, "already exists"},
		"set missing certificate":   {[]plan.Op{plan.SetCertificate{Cert: model.Certificate{Name: "ns:z.pem", PEM: "X\n"}}}, "no certificate"},
		"PEM with a blank line":     {[]plan.Op{plan.SetCertificate{Cert: model.Certificate{Name: "ns:a.pem", PEM: "X\n\nY\n"}}}, "blank line"},
		"listed twice":              {[]plan.Op{plan.AddCrtListEntry{Cert: a.Certificates[0]}}, "already in the crt-list"},
		"list unstored":             {[]plan.Op{plan.AddCrtListEntry{Cert: model.Certificate{Name: "ns:z.pem"}}}, "no certificate"},
		"delete listed certificate": {[]plan.Op{plan.DelCertificate{Cert: "ns:a.pem"}}, "still in the crt-list"},
		"unlisted at the end":       {[]plan.Op{plan.DelCrtListEntry{Cert: "ns:a.pem"}}, "stored but not in the crt-list"},
		"stored, never listed":      {[]plan.Op{plan.SetCertificate{Cert: model.Certificate{Name: "ns:z.pem", PEM: "X\n"}, New: true}}, "stored but not in the crt-list"},
		"CA file in use":            {[]plan.Op{plan.DelCAFile{CA: "ns:b.pem"}}, "used by server"},
		"new existing CA file":      {[]plan.Op{plan.SetCAFile{CA: model.CAFile{Name: "ns:b.pem", PEM: "X\n"}, New: true}}, "already exists"},
		"set missing CA file":       {[]plan.Op{plan.SetCAFile{CA: model.CAFile{Name: "ns:z.pem", PEM: "X\n"}}}, "no CA file"},
		"duplicate replace key":     {[]plan.Op{plan.ReplaceMap{Map: model.MapHTTP, Entries: []model.MapEntry{{Key: "k", Value: "1"}, {Key: "k", Value: "2"}}}}, "duplicate key"},
	} {
		t.Run(name, func(t *testing.T) {
			before := a.Clone()
			_, err := plantest.Simulate(a, tc.ops)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Simulate error %v, want %q", err, tc.want)
			}
			if !reflect.DeepEqual(before, a) {
				t.Fatal("Simulate modified applied")
			}
		})
	}
}

func TestSimulateApplies(t *testing.T) {
	a := simConfig()
	b := *a.Backends[0]
	ops := []plan.Op{
		plan.SetCAFile{CA: model.CAFile{Name: "ns:c.pem", PEM: "CA2\n"}, New: true},
		plan.SetCertificate{Cert: model.Certificate{Name: "ns:a.pem", PEM: "A2\n"}},
		plan.DelCrtListEntry{Cert: "ns:a.pem"},
		plan.AddCrtListEntry{Cert: model.Certificate{Name: "ns:a.pem", SNI: []string{"z.example.com"}, ALPN: "h2"}},
		plan.AddServer{Backend: b, Server: model.Server{Name: "s0", ID: 10, Addr: "10.0.0.5", Port: 80, Weight: 7, State: model.StateReady, Service: "ns/x"}},
		plan.EnableHealth{Backend: b.Name, Server: "s0"},
		plan.SetServerState{Backend: b.Name, Server: "s0", State: model.StateReady},
		plan.SetServerWeight{Backend: b.Name, Server: "s1", Weight: 9},
		plan.EnableHealth{Backend: b.Name, Server: "s1"},
		plan.DisableHealth{Backend: b.Name, Server: "s1"},
		plan.DelServer{Backend: b.Name, Server: "s2"},
		plan.AddMapEntry{Map: model.MapHTTP, Key: "0.example.com/", Value: b.Name},
		plan.SetMapEntry{Map: model.MapHTTP, Key: "a.example.com/", Value: "be_x"},
		plan.SetServerState{Backend: "be_secure:ns:b", Server: "s3", State: model.StateMaint},
		plan.DelServer{Backend: "be_secure:ns:b", Server: "s3"},
		plan.DelCAFile{CA: "ns:b.pem"},
		plan.ReplaceMap{Map: model.MapHTTPRedirect, Entries: []model.MapEntry{{Key: "z", Value: "1"}, {Key: "b", Value: "1"}}},
	}
	got, err := plantest.Simulate(a, ops)
	if err != nil {
		t.Fatal(err)
	}
	want := simConfig()
	want.Backends[0].Servers = []model.Server{
		{Name: "s0", ID: 10, Addr: "10.0.0.5", Port: 80, Weight: 7, State: model.StateReady, Service: "ns/x", HealthCheck: true},
		{Name: "s1", ID: 11, Addr: "10.0.0.1", Port: 80, Weight: 9, State: model.StateReady},
	}
	want.Backends[1].Servers = []model.Server{}
	want.Maps[0].Entries = []model.MapEntry{{Key: "0.example.com/", Value: b.Name}, {Key: "a.example.com/", Value: "be_x"}}
	want.Maps[1].Entries = []model.MapEntry{{Key: "b", Value: "1"}, {Key: "z", Value: "1"}}
	want.Certificates = []model.Certificate{{Name: "ns:a.pem", PEM: "A2\n", SNI: []string{"z.example.com"}, ALPN: "h2"}}
	want.CAFiles = []model.CAFile{{Name: "ns:c.pem", PEM: "CA2\n"}}
	if !reflect.DeepEqual(plantest.RuntimeView(got), plantest.RuntimeView(want)) {
		t.Fatalf("got %+v\nwant %+v", plantest.RuntimeView(got), plantest.RuntimeView(want))
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	// A server added without a state op stays in maint.
	got, err = plantest.Simulate(a, []plan.Op{plan.AddServer{Backend: b, Server: model.Server{Name: "s5", ID: 15, Addr: "10.0.0.6", Port: 80, Weight: 1, State: model.StateReady}}})
	if err != nil || got.Backends[0].Servers[2].State != model.StateMaint {
		t.Fatalf("added server %+v, %v", got.Backends[0].Servers, err)
	}
}

func TestRuntimeView(t *testing.T) {
	a := simConfig()
	v := plantest.RuntimeView(a)
	if v.Backends[0].Cookie != nil || v.Backends[0].Route != "" || v.Backends[0].Servers[0].Name != "s1" || len(v.Maps) != 2 || v.Maps[1].Entries == nil {
		t.Fatalf("view %+v", v)
	}
	b := simConfig()
	b.Backends[0].Servers[0].Service = "ns/other"
	b.Backends[0].Balance = "leastconn"
	b.Settings.HTTPPort = 1
	if !reflect.DeepEqual(v, plantest.RuntimeView(b)) {
		t.Fatal("the view must ignore options, settings and Service")
	}
	b.Backends[0].Servers[0].Weight = 2
	if reflect.DeepEqual(v, plantest.RuntimeView(b)) {
		t.Fatal("the view must see weights")
	}
}
