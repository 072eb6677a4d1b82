package testkit

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestTLSBackendAndPKI(t *testing.T) {
	ca, other := NewCA(t, "ca one"), NewCA(t, "ca two")
	certPEM, keyPEM := ca.Issue(t, "svc.ns.svc", "127.0.0.1")
	be := StartTLSBackend(t, "127.0.0.1", "tls", certPEM, keyPEM)
	if !be.TLS || be.IP != "127.0.0.1" {
		t.Fatalf("backend = %+v", be)
	}
	// Point the client's https port straight at the backend.
	c := NewClient(t, 0, be.Port, ca.Pool())
	r := c.Fetch(t, "https://svc.ns.svc/hello")
	if r.Status != http.StatusOK || r.Backend != "tls" || r.Header.Get(HeaderSNI) != "svc.ns.svc" {
		t.Errorf("GET = %d from %q, SNI %q", r.Status, r.Backend, r.Header.Get(HeaderSNI))
	}
	if r.Body != "tls GET /hello\n\n" {
		t.Errorf("body = %q", r.Body)
	}
	if leaf := r.Leaf(); leaf == nil || leaf.Issuer.CommonName != "ca one" {
		t.Errorf("leaf = %v, want one issued by ca one", leaf)
	}
	// A client trusting another CA refuses the certificate.
	c2 := NewClient(t, 0, be.Port, other.Pool())
	if _, err := c2.Do(http.MethodGet, "https://svc.ns.svc/", nil); err == nil {
		t.Error("client trusting another CA accepted the backend's certificate")
	}
	// The key pair round-trips and the certificate carries the IP SAN.
	kp := KeyPair(t, certPEM, keyPEM)
	if len(kp.Certificate) != 1 {
		t.Fatalf("key pair has %d certificates", len(kp.Certificate))
	}
	conn, err := tls.Dial("tcp", be.Addr(), &tls.Config{RootCAs: Pool(ca), ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("dial by IP SAN: %v", err)
	}
	conn.Close()
}

func TestBackendRefusesNonLoopback(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		StartHTTPBackend(ft, "10.0.0.1", "x")
	}()
	<-done
	if !ft.fatal {
		t.Error("StartHTTPBackend on 10.0.0.1 did not fail")
	}
}

func TestFreePortIsFree(t *testing.T) {
	p := FreePort(t)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatalf("port %d from FreePort: %v", p, err)
	}
	l.Close()
}

// TestListenPortsReserves checks that a port ListenPorts handed out is not handed out again until
// the cleanups of the test that got it have run, in this process or (the lock being a file lock)
// in any other.
func TestListenPortsReserves(t *testing.T) {
	var p int
	t.Run("holder", func(t *testing.T) {
		p = FreePort(t)
		if reservePort(t, p) {
			t.Fatalf("port %d was reserved twice", p)
		}
	})
	// The holder's cleanups ran: the port is free to reserve again.
	if !reservePort(t, p) {
		t.Fatalf("port %d still reserved after its test ended", p)
	}
}

// fatalRecorder records Fatalf instead of failing the test; Fatalf ends the calling goroutine.
type fatalRecorder struct {
	testing.TB
	fatal bool
}

func (f *fatalRecorder) Fatalf(string, ...any) {
	f.fatal = true
	runtime.Goexit()
}

func TestLogBufferKeepsHeadAndTail(t *testing.T) {
	var b LogBuffer
	_, _ = b.Write([]byte("start\n"))
	filler := bytes.Repeat([]byte("x"), logHead+logTail)
	_, _ = b.Write(filler)
	_, _ = b.Write([]byte("\nthe end"))
	s := b.String()
	if !strings.HasPrefix(s, "start\n") || !strings.HasSuffix(s, "\nthe end") {
		t.Fatalf("LogBuffer lost its head or its tail: %q…%q", s[:20], s[len(s)-20:])
	}
	dropped := len("start\n") + len(filler) + len("\nthe end") - logHead - logTail
	if !strings.Contains(s, fmt.Sprintf("[%d bytes of output dropped]", dropped)) {
		t.Errorf("LogBuffer does not say it dropped %d bytes", dropped)
	}
	if len(s) > logHead+logTail+100 {
		t.Errorf("LogBuffer kept %d bytes", len(s))
	}
}

func TestWriteTreeRefusesEscapes(t *testing.T) {
	dir := TempDir(t)
	for _, p := range []string{"../x", "/etc/x", "", "a/../../x"} {
		if err := writeTree(dir, map[string][]byte{p: []byte("x"), "ok.map": []byte("x")}); err == nil {
			t.Errorf("writeTree(%q): no error", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.map")); err == nil {
		t.Error("a refused tree wrote its other files")
	}
	if err := writeTree("relative", map[string][]byte{"a": nil}); err == nil {
		t.Error("writeTree into a relative directory: no error")
	}
	WriteTree(t, dir, map[string][]byte{"conf/a/b.map": []byte("k v\n")})
	if data, err := os.ReadFile(filepath.Join(dir, "conf", "a", "b.map")); err != nil || string(data) != "k v\n" {
		t.Errorf("file content = %q, %v", data, err)
	}
	if mode := FileMode(t, filepath.Join(dir, "conf", "a", "b.map")); mode != 0o600 {
		t.Errorf("file mode %v, want 0600", mode)
	}
}
