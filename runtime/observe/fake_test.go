package observe

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// fakeRunner answers commands from a table the way HAProxy 2.6 does (replies without the trailing
// empty line); anything else gets the help text.
type fakeRunner map[string]string

func (f fakeRunner) Command(ctx context.Context, cmd string) (string, error) {
	if r, ok := f[cmd]; ok {
		return r, nil
	}
	return "Unknown command, but maybe one of the following ones is a better match:\n  help\n", nil
}

func (f fakeRunner) Payload(ctx context.Context, cmd, payload string) (string, error) {
	return "", errors.New("no payloads expected")
}

const stateHeader = "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight " +
	"srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state " +
	"bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr " +
	"srv_agent_addr srv_agent_port\n"

func fakePaths() render.RuntimePaths {
	return render.RuntimePaths{
		Maps:     map[string]string{model.MapHTTP: "/d/conf/os_http_be.map"},
		CertList: "/d/conf/cert_config.map",
		CertDir:  "/d/router/certs",
		CADir:    "/d/router/cacerts",
	}
}

func TestObserveWithFakeRunner(t *testing.T) {
	certA, keyA := selfSigned(t, "a.example.com")
	certB, _ := selfSigned(t, "b.example.com")
	ca, _ := selfSigned(t, "ca")
	applied := &model.Config{
		Maps: []model.MapFile{{Name: model.MapHTTP, Entries: []model.MapEntry{{Key: "a.example.com/", Value: "be_a"}}}},
		Backends: []*model.Backend{
			{Name: "be_a", Servers: []model.Server{server("s1", 1, "127.0.0.2", 80, 1, model.StateReady)}},
			{Name: "be_empty"},
			{Name: "be_tls", TLS: &model.BackendTLS{CAFile: "ns:ca.pem"}, Servers: []model.Server{
				{Name: "t1", ID: 1, Addr: "127.0.0.5", Port: 443, Weight: 1, State: model.StateReady, Service: "ns/t", VerifyHost: "t.ns.svc"},
			}},
		},
		Certificates: []model.Certificate{
			{Name: "ns:a.pem", PEM: certA + keyA, SNI: []string{"a.example.com"}, ALPN: "h2"},
			{Name: "ns:b.pem", PEM: certB, SNI: []string{"b.example.com"}},
		},
		CAFiles: []model.CAFile{{Name: "ns:ca.pem", PEM: ca}, {Name: "ns:unused.pem", PEM: ca}},
	}
	applied.Backends[0].Servers[0].HealthCheck = true
	r := fakeRunner{
		"show backend": "# name\nbe_a\nbe_empty\nbe_tls\nopenshift_default\n",
		"show servers state": stateHeader +
			"3 be_a 1 s1 127.0.0.2 2 8 1 1 3 8 2 0 6 0 0 0 - 80 - 0 0 - - 0\n" +
			"3 be_a 2 s0 127.0.0.9 2 1 4 1 3 8 2 0 2 0 0 0 - 81 - 0 0 - - 0\n" +
			"5 be_tls 7 t1 127.0.0.5 2 0 1 1 3 8 2 0 6 0 0 0 - 443 - 1 0 - - 0\n",
		"show map /d/conf/os_http_be.map": "0x1 a.example.com/ be_a\n0x2 a.example.com/ be_x\n0x3 0.example.com/ be_a\n",
		"show ssl crt-list /d/conf/cert_config.map": "# /d/conf/cert_config.map\n" +
			"/d/router/certs/ns:a.pem [alpn h2 ] a.example.com\n" +
			"/d/router/certs/ns:x.pem x.example.com\n" +
			"/d/conf/other.pem\n",
		"show ssl cert /d/router/certs/ns:a.pem": "Filename: /d/router/certs/ns:a.pem\nStatus: Used\nSHA1 FingerPrint: " + leafSHA1(certA) + "\nSubject: /CN=a.example.com\n",
		"show ssl cert /d/router/certs/ns:x.pem": "Filename: /d/router/certs/ns:x.pem\nStatus: Used\nSHA1 FingerPrint: ABCD\nSubject: /CN=x\n",
		"show ssl ca-file":                       "# filename\n/d/router/cacerts/ns:ca.pem - 2 certificate(s)\n/d/router/cacerts/ns:stray.pem - 1 certificate(s)\n@system-ca - 3 certificate(s)\n",
	}
	obs, err := Observe(context.Background(), r, applied, fakePaths())
	if err != nil {
		t.Fatal(err)
	}
	// t1 was re-added by hand with another id.
	t1 := applied.Backends[2].Servers[0]
	t1.ID = 7
	t1.HealthCheck = true // HAProxy runs its check (state 6), which the applied state has off
	wantServers := [][]model.Server{
		{
			{Name: "s0", ID: 2, Addr: "127.0.0.9", Port: 81, Weight: 4, State: model.StateMaint},
			{Name: "s1", ID: 1, Addr: "127.0.0.2", Port: 80, Weight: 1, State: model.StateDrain, Service: "ns/svc", HealthCheck: true},
		},
		nil,
		{t1},
	}
	for i, want := range wantServers {
		if got := obs.Backends[i].Servers; !reflect.DeepEqual(got, want) {
			t.Errorf("backend %s servers:\n%+v\nwant\n%+v", obs.Backends[i].Name, got, want)
		}
	}
	wantEntries := []model.MapEntry{{Key: "0.example.com/", Value: "be_a"}, {Key: "a.example.com/", Value: "be_a"}, {Key: "a.example.com/", Value: "be_x"}}
	if !reflect.DeepEqual(obs.Maps[0].Entries, wantEntries) {
		t.Errorf("map entries %v, want %v", obs.Maps[0].Entries, wantEntries)
	}
	wantCerts := []model.Certificate{
		applied.Certificates[0],
		{Name: "ns:x.pem", PEM: certMarker("ABCD"), SNI: []string{"x.example.com"}},
	}
	if !reflect.DeepEqual(obs.Certificates, wantCerts) {
		t.Errorf("certificates\n%+v\nwant\n%+v", obs.Certificates, wantCerts)
	}
	wantCAs := []model.CAFile{{Name: "ns:ca.pem", PEM: caMarker(2)}, {Name: "ns:stray.pem", PEM: caMarker(1)}, applied.CAFiles[1]}
	if !reflect.DeepEqual(obs.CAFiles, wantCAs) {
		t.Errorf("CA files\n%+v\nwant\n%+v", obs.CAFiles, wantCAs)
	}
	var kinds []string
	for _, d := range Compare(applied, obs) {
		kinds = append(kinds, string(d.Kind)+" "+d.Subject)
	}
	wantKinds := []string{
		"CAFile ns:ca.pem", "CAFile ns:stray.pem", "CrtList ns:b.pem", "CrtList ns:x.pem",
		"ExtraMapEntry os_http_be.map 0.example.com/", "ExtraMapEntry os_http_be.map a.example.com/",
		"ExtraServer be_a/s0", "ServerHealthCheck be_tls/t1", "ServerID be_tls/t1", "ServerState be_a/s1",
	}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("drift %v\nwant %v", kinds, wantKinds)
	}
	if applied.Backends[0].Servers[0].State != model.StateReady || len(applied.Certificates) != 2 {
		t.Error("Observe changed applied")
	}
}

func TestObserveStructuralDrift(t *testing.T) {
	applied := &model.Config{
		Maps:     []model.MapFile{{Name: model.MapHTTP}},
		Backends: []*model.Backend{{Name: "be_a"}, {Name: "be_b"}},
	}
	base := fakeRunner{
		"show backend":                              "# name\nbe_a\nbe_b\n",
		"show servers state":                        stateHeader,
		"show map /d/conf/os_http_be.map":           "",
		"show ssl crt-list /d/conf/cert_config.map": "didn't find the specified filename\n",
	}
	if _, err := Observe(context.Background(), base, applied, fakePaths()); err != nil {
		t.Fatalf("base case: %v", err)
	}
	for name, change := range map[string]fakeRunner{
		"backend": {"show backend": "# name\nbe_a\n"},
		"map":     {"show map /d/conf/os_http_be.map": "Unknown map identifier. Please use #<id> or <file>.\n"},
	} {
		r := fakeRunner{}
		for k, v := range base {
			r[k] = v
		}
		for k, v := range change {
			r[k] = v
		}
		_, err := Observe(context.Background(), r, applied, fakePaths())
		if !errors.Is(err, ErrStructuralDrift) {
			t.Errorf("%s: error %v, want ErrStructuralDrift", name, err)
		}
	}
	// Help text is an error, not an empty state.
	r := fakeRunner{}
	for k, v := range base {
		if k != "show backend" {
			r[k] = v
		}
	}
	if _, err := Observe(context.Background(), r, applied, fakePaths()); err == nil || errors.Is(err, ErrStructuralDrift) ||
		!strings.Contains(err.Error(), "show backend") {
		t.Errorf("help text for show backend: error %v", err)
	}
}
