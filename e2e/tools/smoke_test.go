package tools

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// binDir is where `make e2e-bin` puts the binaries; HAROUTE_E2E_BIN overrides it.
func binDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HAROUTE_E2E_BIN")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatalf("bin dir: %v", err)
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(abs, name)); err != nil {
			t.Fatalf("%s missing (run `make e2e-bin` at the repository root): %v", name, err)
		}
	}
	return abs
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// start runs a binary until the test ends; it is stopped with SIGTERM, then killed.
func start(t *testing.T, logPath, bin string, args ...string) {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("log file: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{}) // closed once the binary has exited; stopped by a signal, its status says nothing
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("%s log (last 3000 bytes):\n%s", filepath.Base(bin), tail(b, 3000))
			}
		}
	})
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

// servingCert writes a self-signed certificate for 127.0.0.1 and returns a pool trusting it.
func servingCert(t *testing.T, certPath, keyPath string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("serving key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("serving cert: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("serving key: %v", err)
	}
	writePEM(t, certPath, "CERTIFICATE", der)
	writePEM(t, keyPath, "PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse serving cert: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// serviceAccountKeys writes an RSA key pair for signing and verifying service account tokens.
func serviceAccountKeys(t *testing.T, keyPath, pubPath string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("service account key: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("service account key: %v", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatalf("service account public key: %v", err)
	}
	writePEM(t, keyPath, "PRIVATE KEY", keyDER)
	writePEM(t, pubPath, "PUBLIC KEY", pubDER)
}

func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("token: %v", err)
	}
	return hex.EncodeToString(b)
}

// waitReady polls url with the bearer token until it answers 200 "ok" or the deadline passes.
func waitReady(ctx context.Context, client *http.Client, url, token string) error {
	var last string
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("request %s: %w", url, err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "ok" {
				return nil
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, tail(body, 300))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready: %w (last answer: %s)", url, ctx.Err(), last)
}

// TestSmoke starts etcd and kube-apiserver on loopback, waits for /readyz and stops both.
func TestSmoke(t *testing.T) {
	bin := binDir(t)
	dir := t.TempDir()
	ports := freePorts(t, 3)
	etcdClient := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	etcdPeer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	apiPort := strconv.Itoa(ports[2])

	pool := servingCert(t, filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key"))
	serviceAccountKeys(t, filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub"))
	token := randomToken(t)
	tokens := token + `,haroute-admin,haroute-admin,"system:masters"` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		t.Fatalf("token file: %v", err)
	}

	began := time.Now()
	start(t, filepath.Join(dir, "etcd.log"), filepath.Join(bin, "etcd"),
		"--name=smoke",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdClient,
		"--advertise-client-urls="+etcdClient,
		"--listen-peer-urls="+etcdPeer,
		"--initial-advertise-peer-urls="+etcdPeer,
		"--initial-cluster=smoke="+etcdPeer,
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := waitHealth(ctx, plain, etcdClient+"/health"); err != nil {
		t.Fatal(err)
	}
	etcdReady := time.Since(began)

	apiBegan := time.Now()
	start(t, filepath.Join(dir, "kube-apiserver.log"), filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers="+etcdClient,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+apiPort,
		"--tls-cert-file="+filepath.Join(dir, "serving.crt"),
		"--tls-private-key-file="+filepath.Join(dir, "serving.key"),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
	)
	secure := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	if err := waitReady(ctx, secure, "https://127.0.0.1:"+apiPort+"/readyz", token); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd healthy after %v; kube-apiserver ready %v after its start (%v in all)",
		etcdReady.Round(time.Millisecond), time.Since(apiBegan).Round(time.Millisecond),
		time.Since(began).Round(time.Millisecond))
}

// waitHealth polls etcd's /health until it reports healthy or the deadline passes.
func waitHealth(ctx context.Context, client *http.Client, url string) error {
	var last string
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("request %s: %w", url, err)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, tail(body, 300))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not healthy: %w (last answer: %s)", url, ctx.Err(), last)
}
