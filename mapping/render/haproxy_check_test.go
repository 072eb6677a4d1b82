package render

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
)

// haproxyBin is the HAProxy the tests run: $HAROUTE_HAPROXY, or Debian's.
var haproxyBin = testkit.HAProxyBinary()

// writeFiles writes rendered files under dir and creates dir/run.
func writeFiles(t *testing.T, dir string, files []File) {
	t.Helper()
	if err := os.MkdirAll(layout.For(dir).RunDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// renderFixture renders the feature-complete model into a fresh directory and writes the files,
// including the configured default destination CA.
func renderFixture(t *testing.T, f *fixture) string {
	t.Helper()
	dir := t.TempDir()
	f.defaultCA = filepath.Join(dir, "extra", "default-ca.pem")
	cfg := f.model(t)
	files, err := Render(cfg, Options{Dir: dir, DefaultCertificatePEM: f.ca.IssueBundle(t, "default.invalid")})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	writeFiles(t, dir, files)
	if err := os.MkdirAll(filepath.Dir(f.defaultCA), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.defaultCA, f.ca.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// haproxyCheck runs haproxy -c and fails on an error, a warning or an alert.
func haproxyCheck(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command(haproxyBin, append([]string{"-c"}, ConfigArgs(dir)...)...).CombinedOutput()
	if err != nil {
		cfgText, _ := os.ReadFile(layout.For(dir).Config())
		t.Fatalf("haproxy -c: %v\n%s\nconfig:\n%s", err, out, cfgText)
	}
	if bytes.Contains(out, []byte("[WARNING]")) || bytes.Contains(out, []byte("[ALERT]")) {
		t.Fatalf("haproxy -c reported problems:\n%s", out)
	}
}

func TestHAProxyCheckFeatureComplete(t *testing.T) {
	dir := renderFixture(t, newFixture(t))
	haproxyCheck(t, dir)
}

func TestHAProxyCheckEmptyModel(t *testing.T) {
	f := newFixture(t)
	cfg := f.model(t)
	cfg.Maps, cfg.Backends, cfg.Certificates, cfg.CAFiles, cfg.Routes = nil, nil, nil, nil, nil
	dir := t.TempDir()
	files, err := Render(cfg, Options{Dir: dir, DefaultCertificatePEM: f.ca.IssueBundle(t, "default.invalid")})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	writeFiles(t, dir, files)
	haproxyCheck(t, dir)
}

// startHAProxy starts haproxy in the foreground on dir's config and waits until the health URI
// answers on port (an open port is not enough: 3.x binds its listeners before it serves). It is
// killed (by its PID) when the test ends.
func startHAProxy(t *testing.T, dir string, port int) {
	t.Helper()
	var out testkit.Buffer
	cmd := exec.Command(haproxyBin, append([]string{"-db"}, ConfigArgs(dir)...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	exited := make(chan struct{}) // closed once haproxy has exited, with its status in waitErr
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("haproxy (pid %d) did not exit after SIGKILL", cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("haproxy exited early: %v\n%s", waitErr, out.String())
		default:
		}
		err := healthy(port)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy does not listen on %d after 10s: %v\n%s", port, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// healthy asks the router's health URI on port once.
func healthy(port int) error {
	c := &http.Client{Timeout: 200 * time.Millisecond}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/_______internal_router_healthz", port))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health URI answered %d", resp.StatusCode)
	}
	return nil
}

// startBackend serves HTTP on ip:0 and reports what it received in response headers.
func startBackend(t *testing.T, ip string) int32 {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Path", r.RequestURI)
			w.Header().Set("X-Seen-Proto", r.Header.Get("X-Forwarded-Proto"))
			w.Header().Set("X-Seen-Forwarded", r.Header.Get("Forwarded"))
			fmt.Fprintln(w, "backend")
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return int32(l.Addr().(*net.TCPAddr).Port)
}

// client sends every request to 127.0.0.1:port whatever the URL says, with the given SNI for TLS,
// and does not follow redirects.
func client(port int, sni string, roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, fmt.Sprintf("127.0.0.1:%d", port))
			},
			TLSClientConfig:   &tls.Config{ServerName: sni, RootCAs: roots},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func get(t *testing.T, c *http.Client, url, host string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", url, host, err)
	}
	resp.Body.Close()
	return resp
}

func TestHAProxyLive(t *testing.T) {
	f := newFixture(t)
	ports := testkit.ListenPorts(t, 2)
	f.httpPort, f.httpsPort = ports[0], ports[1]
	f.backendAddr = "127.0.0.2"
	f.backendPort = startBackend(t, f.backendAddr)
	dir := renderFixture(t, f)
	startHAProxy(t, dir, f.httpPort)

	plain := client(f.httpPort, "", nil)
	httpURL := func(p string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", f.httpPort, p) }
	for _, tc := range []struct {
		host, path string
		status     int
	}{
		{"web.example.com", "/", 200},
		{"WEB.Example.COM.:8080", "/x?q=1", 200}, // upper case, trailing dot and port still match
		{"unknown.example.com", "/", 503},        // openshift_default
		{"a.wild.example.com", "/any", 200},      // wildcard Route: one label
		{"wild.example.com", "/", 503},           // not the domain itself
		{"a.b.wild.example.com", "/", 503},       // nor two labels
		{"anything", "/_______internal_router_healthz", 200},
		{"never.example.com", "/nx", 503}, // exact /n and prefix /n/ only: /nx is no match
	} {
		resp := get(t, plain, httpURL(tc.path), tc.host)
		if resp.StatusCode != tc.status {
			t.Errorf("http Host %s path %s: status %d, want %d", tc.host, tc.path, resp.StatusCode, tc.status)
		}
	}

	// Redirect policy: plain HTTP to the edge Route is sent to https, without the Host's port, with
	// the query.
	resp := get(t, plain, httpURL("/shop/item?q=1"), "edge.example.com:80")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != "https://edge.example.com/shop/item?q=1" {
		t.Errorf("edge over http: status %d Location %q, want 302 to https://edge.example.com/shop/item?q=1", resp.StatusCode, loc)
	}

	// Edge Route over TLS: public_ssl → be_sni → fe_sni, the Route's certificate, rewrite, headers.
	secure := client(f.httpsPort, "edge.example.com", f.ca.Pool())
	resp = get(t, secure, fmt.Sprintf("https://127.0.0.1:%d/shop/item", f.httpsPort), "edge.example.com")
	if resp.StatusCode != 200 {
		t.Fatalf("edge over https: status %d, want 200", resp.StatusCode)
	}
	if names := resp.TLS.PeerCertificates[0].DNSNames; len(names) != 1 || names[0] != "edge.example.com" {
		t.Errorf("edge over https: certificate for %v, want edge.example.com", names)
	}
	for header, want := range map[string]string{
		"X-Path":                    "/it's%41/item", // rewrite /shop → /it's%41 ('%' and the quote kept literal)
		"X-Seen-Proto":              "https",
		"X-Seen-Forwarded":          `for=127.0.0.1;host=edge.example.com;proto=https`,
		"Strict-Transport-Security": "max-age=31536000;includeSubDomains;preload",
	} {
		if got := resp.Header.Get(header); got != want {
			t.Errorf("edge over https: %s = %q, want %q", header, got, want)
		}
	}
	// OpenShift's attributes, haroute_cookie.map's SameSite; the value is a dynamic cookie before
	// HAProxy 3.0, the server's own after.
	if c := resp.Header.Get("Set-Cookie"); !regexp.MustCompile(`^edge_cookie=[0-9a-f]{16,32}; path=/; HttpOnly; Secure; SameSite=Lax$`).MatchString(c) {
		t.Errorf("edge over https: Set-Cookie %q, want a secure SameSite=Lax edge_cookie", c)
	}

	// No SNI: public_ssl → be_no_sni → fe_no_sni, which serves the default certificate.
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp",
		fmt.Sprintf("127.0.0.1:%d", f.httpsPort), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("TLS without SNI: %v", err)
	}
	defer conn.Close()
	if names := conn.ConnectionState().PeerCertificates[0].DNSNames; len(names) != 1 || names[0] != "default.invalid" {
		t.Errorf("TLS without SNI: certificate for %v, want the default certificate", names)
	}
}
