package render

import (
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// TestServerSpecMatchesRenderedLine proves that the runtime "add server" arguments are exactly the
// rendered server line plus the defaults a configured server inherits (what makes a runtime server
// equal to a reloaded one).
func TestServerSpecMatchesRenderedLine(t *testing.T) {
	cfg := &model.Config{
		Settings: model.Settings{CheckInterval: "5000ms"},
		CAFiles:  []model.CAFile{{Name: "ns:r.pem", PEM: "x"}},
	}
	b := model.Backend{Name: "be_secure:ns:r", Kind: model.KindReencrypt, Mode: model.ModeHTTP, Balance: "random",
		CheckInterval: "2s", ServerMaxConn: 7, TLS: &model.BackendTLS{CAFile: "ns:r.pem"}}
	s := model.Server{Name: "pod:p:svc:https:fd00::1:8443", ID: 4242, Addr: "fd00::1", Port: 8443, Weight: 12, State: model.StateMaint, VerifyHost: "svc.ns.svc"}
	spec, err := ServerSpec(cfg, "/var/lib/haproxy", b, s)
	if err != nil {
		t.Fatal(err)
	}
	want := "[fd00::1]:8443 id 4242 weight 12 maxconn 7 check inter 2s ssl verify required ca-file /var/lib/haproxy/router/cacerts/ns:r.pem verifyhost svc.ns.svc alpn h2,http/1.1 " + RuntimeServerDefaults
	if spec != want {
		t.Fatalf("spec\n got %q\nwant %q", spec, want)
	}
	// With HTTP/2 disabled router-wide, reencrypt servers are not offered h2 either.
	h1 := *cfg
	h1.Settings.HTTP.DisableHTTP2 = true
	if spec, err := ServerSpec(&h1, "/var/lib/haproxy", b, s); err != nil || strings.Contains(spec, "alpn") {
		t.Fatalf("HTTP/2 disabled: spec %q (err %v) still offers ALPN", spec, err)
	}
	d, err := newData(cfg, "/var/lib/haproxy")
	if err != nil {
		t.Fatal(err)
	}
	s.State = model.StateReady
	line, err := newFuncs(d, nil).serverLine(b, s)
	if err != nil || line+" "+RuntimeServerDefaults != "server "+s.Name+" "+spec {
		t.Fatalf("rendered line %q (err %v) is not \"server <name> \" + spec without the runtime defaults", line, err)
	}
	s.ID = 0
	if _, err := ServerSpec(cfg, "/var/lib/haproxy", b, s); err == nil || !strings.Contains(err.Error(), "id 0") {
		t.Fatalf("a server without an id was accepted: %v", err)
	}
	if _, err := ServerSpec(cfg, "relative", b, s); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("a relative dir was accepted: %v", err)
	}
	p, err := PathsFor(cfg, "/var/lib/haproxy")
	if err != nil || p.Maps[model.MapHTTP] != "/var/lib/haproxy/conf/os_http_be.map" || p.AdminSocket != "/var/lib/haproxy/run/haproxy.sock" {
		t.Fatalf("PathsFor = %+v, %v", p, err)
	}
}
