package haproxy_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// TestListenerFilesRotateWithoutReload drives a real HAProxy with mutual TLS through rotations of
// the router's own TLS files: the default certificate and the CRLs (a client certificate revoked) are
// runtime updates — no reload — that TLS clients see at once (the CRLs on 3.2 and newer: 2.6 and 3.0
// would serve the old default certificate after a rotation that follows a runtime CRL update, so
// there a CRL change reloads); a new client CA bundle (another CA's
// clients in, the old ones out) and CRLs that go away are reloads. After each step the files on disk
// are a fresh render of what HAProxy runs.
func TestListenerFilesRotateWithoutReload(t *testing.T) {
	ctx := context.Background()
	opts := testbed.RouterOptions(t)
	opts.ClientTLS = model.ClientTLS{Verify: model.ClientVerifyRequired}
	serverCA := testkit.NewCA(t, "server CA")
	clients1, clients2 := testkit.NewCA(t, "clients 1"), testkit.NewCA(t, "clients 2")
	aliceCert, aliceKey := issueClient(t, clients1, "alice")
	alice := testkit.KeyPair(t, aliceCert, aliceKey)
	bobCert, bobKey := issueClient(t, clients2, "bob")
	bob := testkit.KeyPair(t, bobCert, bobKey)
	carolCert, carolKey := issueClient(t, clients1, "carol")
	carol := testkit.KeyPair(t, carolCert, carolKey)

	def1, def2 := serverCA.IssueBundle(t, "default-1.example.com"), serverCA.IssueBundle(t, "default-2.example.com")
	def3 := serverCA.IssueBundle(t, "default-3.example.com")
	files := model.ListenerFiles{
		DefaultCertificate: string(def1),
		ClientCA:           string(clients1.PEM()),
		ClientCRL:          string(clients1.RevocationList(t, 1)),
	}
	translate := func(l model.ListenerFiles) *model.Config {
		cfg, problems := mapping.Translate(mapping.Input{Listener: l}, opts)
		if len(problems) > 0 || cfg.Validate() != nil {
			t.Fatalf("translate: %v %v", problems, cfg.Validate())
		}
		return cfg
	}
	dir := testkit.TempDir(t)
	ro := render.Options{DefaultCertificatePEM: serverCA.IssueBundle(t, "renderer.example.com")}
	u, h := startInstance(t, dir, ro, translate(files))
	ro.Dir = dir
	caps, err := socket.DetectCapabilities(ctx, socket.NewAdmin(h.AdminSocket, socket.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.HTTPSPort))

	check := func(step string, wantServer string, served map[string]tls.Certificate, refused map[string]tls.Certificate) {
		t.Helper()
		for name, cert := range served {
			cn, err := mutualRequest(addr, cert)
			if err != nil {
				t.Fatalf("%s: client %s refused: %v", step, name, err)
			}
			if cn != wantServer {
				t.Fatalf("%s: client %s was served the certificate of %q, want %q", step, name, cn, wantServer)
			}
		}
		for name, cert := range refused {
			if _, err := mutualRequest(addr, cert); err == nil {
				t.Fatalf("%s: client %s was served", step, name)
			}
		}
	}
	check("start", "default-1.example.com", map[string]tls.Certificate{"alice": alice, "carol": carol},
		map[string]tls.Certificate{"bob (other CA)": bob, "no certificate": {}})

	for _, step := range []struct {
		name    string
		change  func(*model.ListenerFiles)
		server  string
		served  map[string]tls.Certificate
		refused map[string]tls.Certificate
	}{
		{"default certificate rotated", func(l *model.ListenerFiles) { l.DefaultCertificate = string(def2) },
			"default-2.example.com", map[string]tls.Certificate{"alice": alice, "carol": carol}, map[string]tls.Certificate{"bob": bob}},
		{"carol revoked", func(l *model.ListenerFiles) { l.ClientCRL = string(clients1.RevocationList(t, 2, carolCert)) },
			"default-2.example.com", map[string]tls.Certificate{"alice": alice}, map[string]tls.Certificate{"carol": carol, "bob": bob}},
		{"default certificate rotated again", func(l *model.ListenerFiles) { l.DefaultCertificate = string(def3) },
			"default-3.example.com", map[string]tls.Certificate{"alice": alice}, map[string]tls.Certificate{"bob": bob}},
		{"default certificate back to the first", func(l *model.ListenerFiles) { l.DefaultCertificate = string(def1) },
			"default-1.example.com", map[string]tls.Certificate{"alice": alice}, map[string]tls.Certificate{"bob": bob}},
		{"and to the second", func(l *model.ListenerFiles) { l.DefaultCertificate = string(def2) },
			"default-2.example.com", map[string]tls.Certificate{"alice": alice}, map[string]tls.Certificate{"bob": bob}},
	} {
		step.change(&files)
		out, err := u.Update(ctx, translate(files))
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		// A CRL change is a reload where HAProxy would lose later certificate updates after it.
		if crl := strings.Contains(step.name, "revoked"); crl && !caps.RuntimeCRLFile {
			if !out.Reloaded || out.Reason.Kind != plan.ListenerChanged {
				t.Fatalf("%s on HAProxy %s: want a ListenerChanged reload, got reloaded=%v reason=%v", step.name, caps.Version, out.Reloaded, out.Reason)
			}
		} else if out.Reloaded || len(out.Plan.Ops) == 0 {
			t.Fatalf("%s: want a runtime update, got reloaded=%v reason=%v ops=%v", step.name, out.Reloaded, out.Reason, out.Plan.Ops)
		}
		check(step.name, step.server, step.served, step.refused)
		sameAsFreshRender(t, step.name, dir, ro, u)
	}

	// A new client CA bundle is a reload: at runtime HAProxy would verify against it but still name
	// the old CAs in its certificate request, and bob's client would offer no certificate. Without
	// CRLs the bind loses its crl-file: a reload too.
	for _, step := range []struct {
		name    string
		change  func(*model.ListenerFiles)
		served  map[string]tls.Certificate
		refused map[string]tls.Certificate
	}{
		{"client CA rotated", func(l *model.ListenerFiles) {
			l.ClientCA, l.ClientCRL = string(clients2.PEM()), string(clients2.RevocationList(t, 1))
		}, map[string]tls.Certificate{"bob": bob}, map[string]tls.Certificate{"alice": alice, "carol": carol}},
		{"CRLs removed", func(l *model.ListenerFiles) { l.ClientCRL = "" },
			map[string]tls.Certificate{"bob": bob}, map[string]tls.Certificate{"alice": alice}},
	} {
		step.change(&files)
		out, err := u.Update(ctx, translate(files))
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if !out.Reloaded || out.Reason.Kind != plan.ListenerChanged {
			t.Fatalf("%s: want a ListenerChanged reload, got reloaded=%v reason=%v", step.name, out.Reloaded, out.Reason)
		}
		check(step.name, "default-2.example.com", step.served, step.refused)
		sameAsFreshRender(t, step.name, dir, ro, u)
	}
}

// issueClient returns a client certificate of ca for name, and its key.
func issueClient(t *testing.T, ca *testkit.CA, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.Issue(t, name+".clients.example.com")
}

// mutualRequest sends one HTTPS request with the client certificate cert (none when empty) and
// returns the common name of the certificate the server presented. Any failure, of the handshake or
// of the request (TLS 1.3 reports a refused client certificate after the handshake), is an error.
func mutualRequest(addr string, cert tls.Certificate) (string, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	cfg := &tls.Config{ServerName: "anything.example.com", InsecureSkipVerify: true} //nolint:gosec // the test checks the served certificate itself
	if cert.Certificate != nil {
		// Go's client offers a certificate only when its issuer is among the CAs the server names.
		cfg.Certificates = []tls.Certificate{cert}
	}
	conn, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: anything.example.com\r\nConnection: close\r\n\r\n"); err != nil {
		return "", err
	}
	reply, err := io.ReadAll(conn)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(string(reply), "HTTP/1.") {
		return "", fmt.Errorf("no HTTP answer: %q", reply)
	}
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
}
