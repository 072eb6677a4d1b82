package socket_test

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/socket"
)

func sha1Sum(der []byte) []byte {
	sum := sha1.Sum(der)
	return sum[:]
}

func sha1Hex(t *testing.T, certPEM []byte) string {
	t.Helper()
	c, err := tls.X509KeyPair(certPEM, certPEM)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(c.Certificate[0])
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// served returns the leaf certificate HAProxy presents for sni.
func served(t *testing.T, port int, sni string, pool *x509.CertPool) *x509.Certificate {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", fmt.Sprintf("127.0.0.1:%d", port),
		&tls.Config{ServerName: sni, RootCAs: pool, InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("TLS to %s: %v", sni, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func TestCertificatesOnHAProxy(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	r := b.admin
	cPath := b.path("ns:c.pem")
	bundle := b.ca.IssueBundle(t, "c.example.com")
	// Blank lines in the PEM would end the payload; SetCert drops them.
	spaced := strings.ReplaceAll(string(bundle), "-----\n", "-----\n\n")

	wantErr(t, "new cert", socket.NewCert(ctx, r, cPath), nil)
	wantErr(t, "new cert again", socket.NewCert(ctx, r, cPath), socket.ErrExists)
	wantErr(t, "new cert loaded", socket.NewCert(ctx, r, b.path("b.pem")), socket.ErrExists)
	wantErr(t, "set cert bad PEM", socket.SetCert(ctx, r, cPath, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), socket.ErrUnexpectedReply)
	wantErr(t, "set cert", socket.SetCert(ctx, r, cPath, spaced), nil)
	wantErr(t, "set cert update", socket.SetCert(ctx, r, cPath, string(bundle)), nil)
	// 2.6.12 loads the payload of another path into the open transaction: SetCert aborts it. 3.0+
	// refuses ("The ongoing transaction is about …") and leaves the open transaction as it was.
	wantErr(t, "set cert while another transaction is open", socket.SetCert(ctx, r, b.path("b.pem"), string(bundle)), socket.ErrBusy)
	if b.caps.Version.AtLeast(3, 0) {
		wantErr(t, "abort the transaction left open", socket.AbortCert(ctx, r, cPath), nil)
	} else {
		wantErr(t, "commit the aborted transaction", socket.CommitCert(ctx, r, cPath), socket.ErrNotFound)
	}
	wantErr(t, "set cert once more", socket.SetCert(ctx, r, cPath, string(bundle)), nil)
	wantErr(t, "commit cert", socket.CommitCert(ctx, r, cPath), nil)
	wantErr(t, "commit cert again", socket.CommitCert(ctx, r, cPath), socket.ErrNotFound)
	wantErr(t, "set cert unknown", socket.SetCert(ctx, r, b.path("nope.pem"), string(bundle)), socket.ErrNotFound)
	wantErr(t, "abort cert none", socket.AbortCert(ctx, r, cPath), socket.ErrNotFound)
	wantErr(t, "set cert before abort", socket.SetCert(ctx, r, cPath, string(bundle)), nil)
	wantErr(t, "abort cert", socket.AbortCert(ctx, r, cPath), nil)

	fp, subject, err := socket.ShowCert(ctx, r, cPath)
	if err != nil || fp != sha1Hex(t, bundle) || subject != "/CN=c.example.com" {
		t.Errorf("show ssl cert = %q, %q, %v; want %s /CN=c.example.com", fp, subject, err, sha1Hex(t, bundle))
	}
	if _, _, err := socket.ShowCert(ctx, r, b.path("nope.pem")); !errors.Is(err, socket.ErrNotFound) {
		t.Errorf("show ssl cert nope: %v, want ErrNotFound", err)
	}
	certs, err := socket.ShowCertPaths(ctx, r)
	if want := []string{b.path("b.pem"), cPath, b.path("ns:a.pem"), b.path("default.pem")}; err != nil || !sameSet(certs, want) {
		t.Errorf("show ssl cert = %q, %v; want %q", certs, err, want)
	}

	line := cPath + " [alpn h2,http/1.1] c.example.com *.c.example.com"
	wantErr(t, "add crt-list", socket.AddCrtListEntry(ctx, r, b.crtList, line), nil)
	wantErr(t, "add crt-list unknown cert", socket.AddCrtListEntry(ctx, r, b.crtList, b.path("nope.pem")+" x.example.com"), socket.ErrNotFound)
	wantErr(t, "add crt-list unknown list", socket.AddCrtListEntry(ctx, r, b.path("nope.map"), line), socket.ErrNotFound)
	lines, err := socket.ShowCrtList(ctx, r, b.crtList)
	wantLines := []string{b.path("ns:a.pem") + " a.example.com", b.path("b.pem") + " [alpn h2,http/1.1] b.example.com", line}
	if err != nil || !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("show ssl crt-list = %q, %v; want %q", lines, err, wantLines)
	}
	if _, err := socket.ShowCrtList(ctx, r, b.path("nope.map")); !errors.Is(err, socket.ErrNotFound) {
		t.Errorf("show ssl crt-list nope: %v, want ErrNotFound", err)
	}
	for _, sni := range []string{"c.example.com", "x.c.example.com"} {
		if cn := served(t, b.tlsPort, sni, b.ca.Pool()).Subject.CommonName; cn != "c.example.com" {
			t.Errorf("SNI %s served %q, want c.example.com", sni, cn)
		}
	}
	if cn := served(t, b.tlsPort, "b.example.com", b.ca.Pool()).Subject.CommonName; cn != "b.example.com" {
		t.Errorf("SNI b.example.com served %q, want its own certificate", cn)
	}
	// Updating a certificate in use: HAProxy prints a dot per rebuilt instance in its answer.
	rotated := b.ca.IssueBundle(t, "c.example.com")
	wantErr(t, "set cert in use", socket.SetCert(ctx, r, cPath, string(rotated)), nil)
	wantErr(t, "commit cert in use", socket.CommitCert(ctx, r, cPath), nil)
	if fp, _, err := socket.ShowCert(ctx, r, cPath); err != nil || fp != sha1Hex(t, rotated) {
		t.Errorf("fingerprint after the rotation %q, %v; want %s", fp, err, sha1Hex(t, rotated))
	}
	if leaf := served(t, b.tlsPort, "c.example.com", b.ca.Pool()); strings.ToUpper(hex.EncodeToString(sha1Sum(leaf.Raw))) != sha1Hex(t, rotated) {
		t.Error("c.example.com still serves the old certificate")
	}
	wantErr(t, "del cert in use", socket.DelCert(ctx, r, cPath), socket.ErrBusy)
	wantErr(t, "del crt-list of a path with ':'", socket.DelCrtListEntry(ctx, r, b.crtList, cPath), socket.ErrUnsupported)
	wantErr(t, "del crt-list b", socket.DelCrtListEntry(ctx, r, b.crtList, b.path("b.pem")), nil)
	wantErr(t, "del crt-list b again", socket.DelCrtListEntry(ctx, r, b.crtList, b.path("b.pem")), socket.ErrNotFound)
	wantErr(t, "del crt-list unknown list", socket.DelCrtListEntry(ctx, r, b.path("nope.map"), b.path("b.pem")), socket.ErrNotFound)
	if cn := served(t, b.tlsPort, "b.example.com", b.ca.Pool()).Subject.CommonName; cn != "default.example.com" {
		t.Errorf("SNI b.example.com served %q after its crt-list line went, want the default", cn)
	}
	wantErr(t, "del cert", socket.DelCert(ctx, r, b.path("b.pem")), nil)
	wantErr(t, "del cert again", socket.DelCert(ctx, r, b.path("b.pem")), socket.ErrNotFound)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestCAFilesOnHAProxy(t *testing.T) {
	b := startBed(t)
	ctx := context.Background()
	r := b.admin
	caPath := b.path("ns:secure.ca.pem")
	certPEM, keyPEM := b.ca.Issue(t, "svc.ns.svc")
	tlsBackend := testkit.StartTLSBackend(t, "127.0.0.5", "secure", certPEM, keyPEM)

	wantErr(t, "new ca-file", socket.NewCAFile(ctx, r, caPath), nil)
	wantErr(t, "new ca-file again", socket.NewCAFile(ctx, r, caPath), socket.ErrExists)
	wantErr(t, "set ca-file invalid", socket.SetCAFile(ctx, r, caPath, "garbage"), socket.ErrUnexpectedReply)
	wantErr(t, "commit ca-file none", socket.CommitCAFile(ctx, r, caPath), socket.ErrNotFound)
	wantErr(t, "set ca-file", socket.SetCAFile(ctx, r, caPath, string(b.ca.PEM())), nil)
	wantErr(t, "set ca-file update", socket.SetCAFile(ctx, r, caPath, string(b.ca.PEM())), nil)
	wantErr(t, "set ca-file other", socket.SetCAFile(ctx, r, b.path("other.pem"), string(b.ca.PEM())), socket.ErrBusy)
	wantErr(t, "commit ca-file", socket.CommitCAFile(ctx, r, caPath), nil)
	wantErr(t, "abort ca-file none", socket.AbortCAFile(ctx, r, caPath), socket.ErrNotFound)
	wantErr(t, "set ca-file unknown", socket.SetCAFile(ctx, r, b.path("other.pem"), string(b.ca.PEM())), socket.ErrNotFound)
	wantErr(t, "set ca-file before abort", socket.SetCAFile(ctx, r, caPath, string(b.ca.PEM())), nil)
	wantErr(t, "abort ca-file", socket.AbortCAFile(ctx, r, caPath), nil)

	// A re-encrypting server verified against the new CA file serves.
	spec := tlsBackend.Addr() + " ssl verify required ca-file " + caPath + " verifyhost svc.ns.svc sni str(svc.ns.svc)"
	wantErr(t, "add server", socket.AddServer(ctx, r, "be_secure", "tls", spec), nil)
	wantErr(t, "ready", socket.SetServerState(ctx, r, "be_secure", "tls", "ready"), nil)
	wantErr(t, "route", socket.AddMap(ctx, r, b.hostsMap, "secure.example.com", "be_secure"), nil)
	if status, backend, _ := b.client.Get(t, "http://secure.example.com/"); status != http.StatusOK || backend != "secure" {
		t.Errorf("GET through the re-encrypting server = %d from %q, want 200 from secure", status, backend)
	}
	if st, _ := serverState(t, r, "be_secure", "tls"); !st.UseSSL {
		t.Errorf("server state %+v, want UseSSL", st)
	}
	// Updating the CA file while a server uses it.
	wantErr(t, "set ca-file in use", socket.SetCAFile(ctx, r, caPath, string(b.ca.PEM())), nil)
	wantErr(t, "commit ca-file in use", socket.CommitCAFile(ctx, r, caPath), nil)
	if status, backend, _ := b.client.Get(t, "http://secure.example.com/"); status != http.StatusOK || backend != "secure" {
		t.Errorf("GET after the CA update = %d from %q, want 200 from secure", status, backend)
	}
	// A CA bundle larger than one payload (a tenant's pasted public bundle), sent in parts: set ssl
	// ca-file with the first, add ssl ca-file with the rest (2.7+). Every certificate of the bundle
	// is in the committed CA file, and the server still verifies (its CA comes last).
	const limit = 32768 - 4608
	bundle := string(b.ca.LargeCABundle(t, 200_000))
	parts, err := socket.SplitPEM(bundle, limit)
	if err != nil || len(parts) < 7 {
		t.Fatalf("SplitPEM of a 200 kB bundle: %d parts, %v; want at least 7", len(parts), err)
	}
	wantErr(t, "set ca-file part 1", socket.SetCAFile(ctx, r, caPath, parts[0]), nil)
	if !b.caps.AddCAFile {
		// 2.6 has no add ssl ca-file: the applier never sends it there (apply.pemParts).
		wantErr(t, "add ca-file on 2.6", socket.AddCAFile(ctx, r, caPath, parts[1]), socket.ErrUnexpectedReply)
		wantErr(t, "abort ca-file", socket.AbortCAFile(ctx, r, caPath), nil)
	} else {
		for i, part := range parts[1:] {
			wantErr(t, fmt.Sprintf("add ca-file part %d", i+2), socket.AddCAFile(ctx, r, caPath, part), nil)
		}
		wantErr(t, "commit ca-file in parts", socket.CommitCAFile(ctx, r, caPath), nil)
		// "show ssl ca-file" lists "<path> - <n> certificate(s)" per CA file (a path with ':' cannot be
		// named on its own: HAProxy reads what follows the last ':' as a certificate index).
		reply, err := r.Command(ctx, "show ssl ca-file")
		want := fmt.Sprintf("%s - %d certificate(s)", caPath, strings.Count(bundle, "-----BEGIN CERTIFICATE-----"))
		if err != nil || !slices.Contains(strings.Split(reply, "\n"), want) {
			t.Errorf("show ssl ca-file after %d parts = %q (%v), want a line %q", len(parts), reply, err, want)
		}
		if status, backend, _ := b.client.Get(t, "http://secure.example.com/"); status != http.StatusOK || backend != "secure" {
			t.Errorf("GET after the bundle went in %d parts = %d from %q, want 200 from secure", len(parts), status, backend)
		}
	}

	wantErr(t, "maint", socket.SetServerState(ctx, r, "be_secure", "tls", "maint"), nil)
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err = socket.DelServer(ctx, r, "be_secure", "tls"); !errors.Is(err, socket.ErrBusy) {
			break
		}
	}
	wantErr(t, "del server", err, nil)
	wantErr(t, "del ca-file", socket.DelCAFile(ctx, r, caPath), nil)
	wantErr(t, "del ca-file again", socket.DelCAFile(ctx, r, caPath), socket.ErrNotFound)
}
