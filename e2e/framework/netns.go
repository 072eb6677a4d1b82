//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// BackendPort is the port every backend listens on inside its namespace.
const BackendPort = 8080

const (
	backendStartTimeout = 10 * time.Second
	ipTimeout           = 10 * time.Second
)

// netnsSeq makes namespace and link names unique within the process.
var netnsSeq atomic.Int32

// PodNetwork is a network namespace joined to the host by a veth pair: the host side has
// 198.18.N.1/24, backends get 198.18.N.2, .3, … inside.
type PodNetwork struct {
	t      *testing.T
	Name   string
	Subnet int
	next   int
	peer   string
}

// Backend is an HTTP server running inside a PodNetwork.
type Backend struct {
	Name string
	IP   string
	Port int
	proc *testkit.Process
}

// Addr returns "ip:port".
func (b *Backend) Addr() string { return net.JoinHostPort(b.IP, strconv.Itoa(b.Port)) }

// NewPodNetwork creates a network namespace and its veth pair; cleanup deletes both.
func NewPodNetwork(t *testing.T) *PodNetwork {
	t.Helper()
	seq := netnsSeq.Add(1)
	return newPodNetwork(t, seq, freeSubnet(t, (os.Getpid()+int(seq))%250+1))
}

// NewPodNetworkAt is NewPodNetwork on 198.18.subnet.0/24, which must be free: a test whose backends
// need the same addresses on every run (names derived from them, such as the stock router's cookie
// values) chooses its subnet.
func NewPodNetworkAt(t *testing.T, subnet int) *PodNetwork {
	t.Helper()
	if subnet < 1 || subnet > 254 {
		t.Fatalf("pod network: subnet %d is not in 1-254", subnet)
	}
	if got := freeSubnet(t, subnet); got != subnet {
		t.Fatalf("pod network: 198.18.%d.0/24 is in use on this machine", subnet)
	}
	return newPodNetwork(t, netnsSeq.Add(1), subnet)
}

// newPodNetwork creates the namespace of sequence number seq on 198.18.subnet.0/24.
func newPodNetwork(t *testing.T, seq int32, subnet int) *PodNetwork {
	t.Helper()
	name := fmt.Sprintf("hr%d%d", os.Getpid()%1000, seq)
	n := &PodNetwork{t: t, Name: name, Subnet: subnet, next: 2}
	host, peer := n.hostLink(), name+"p"
	ipRun(t, "netns", "add", name)
	t.Cleanup(func() {
		if out, err := ipCmd("netns", "del", name); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
		// The pair goes with the namespace; delete the host side in case it was never moved.
		_, _ = ipCmd("link", "del", host)
	})
	ipRun(t, "link", "add", host, "type", "veth", "peer", "name", peer)
	ipRun(t, "link", "set", peer, "netns", name)
	ipRun(t, "addr", "add", n.hostIP()+"/24", "dev", host)
	ipRun(t, "link", "set", host, "up")
	ipRun(t, "-n", name, "link", "set", "lo", "up")
	ipRun(t, "-n", name, "link", "set", peer, "up")
	n.peer = peer
	return n
}

func (n *PodNetwork) hostIP() string { return fmt.Sprintf("198.18.%d.1", n.Subnet) }

// StartBackend adds the next address to the namespace and starts an HTTP backend named name on it.
func (n *PodNetwork) StartBackend(name string) *Backend {
	n.t.Helper()
	return n.start(nil, "", name)[0]
}

// StartBackends starts one HTTP backend per name, on consecutive addresses, all served by one process
// (stopping one stops them all).
func (n *PodNetwork) StartBackends(names ...string) []*Backend {
	n.t.Helper()
	return n.start(nil, "", names...)
}

// StartTLSBackend starts a backend named name that serves HTTPS with the given key pair.
func (n *PodNetwork) StartTLSBackend(name string, certPEM, keyPEM []byte) *Backend {
	n.t.Helper()
	return n.start(n.tlsEnv(certPEM, keyPEM), " (TLS)", name)[0]
}

// StartEchoBackends is StartBackends with backends that answer every path with testbed's echo
// (testkit.EchoHandler: the request as received, as JSON).
func (n *PodNetwork) StartEchoBackends(names ...string) []*Backend {
	n.t.Helper()
	return n.start([]string{envBackendEcho + "=1"}, " (echo)", names...)
}

// StartTLSEchoBackend is StartTLSBackend with a backend that answers every path with testbed's echo.
func (n *PodNetwork) StartTLSEchoBackend(name string, certPEM, keyPEM []byte) *Backend {
	t := n.t
	t.Helper()
	env := append(n.tlsEnv(certPEM, keyPEM), envBackendEcho+"=1")
	return n.start(env, " (TLS echo)", name)[0]
}

// StartEchoBackendAt starts an echo backend named name on ip:port, an address outside the pod
// subnet that the host routes into the namespace, as kube-proxy makes a Service's cluster IP answer:
// a router that sends traffic to the cluster IP reaches it.
func (n *PodNetwork) StartEchoBackendAt(name, ip string, port int) *Backend {
	t := n.t
	t.Helper()
	ipRun(t, "-n", n.Name, "addr", "add", ip+"/32", "dev", n.peer)
	ipRun(t, "route", "add", ip+"/32", "dev", n.hostLink())
	t.Cleanup(func() { _, _ = ipCmd("route", "del", ip+"/32", "dev", n.hostLink()) })
	b := &Backend{Name: name, IP: ip, Port: port}
	return n.run([]string{envBackendEcho + "=1"}, " (echo)", []*Backend{b})[0]
}

// hostLink is the host side of the veth pair.
func (n *PodNetwork) hostLink() string { return n.Name + "h" }

// tlsEnv writes the key pair into files and returns the backend environment that names them.
func (n *PodNetwork) tlsEnv(certPEM, keyPEM []byte) []string {
	t := n.t
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatalf("backend certificate: %v", err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatalf("backend key: %v", err)
	}
	return []string{envBackendTLS + "=" + certFile + "," + keyFile}
}

// start adds one address per name and runs the test binary inside the namespace as their backend.
func (n *PodNetwork) start(env []string, kind string, names ...string) []*Backend {
	t := n.t
	t.Helper()
	if n.next+len(names) > 255 {
		t.Fatalf("pod network %s: out of addresses", n.Name)
	}
	var backends []*Backend
	for _, name := range names {
		ip := fmt.Sprintf("198.18.%d.%d", n.Subnet, n.next)
		n.next++
		ipRun(t, "-n", n.Name, "addr", "add", ip+"/24", "dev", n.peer)
		backends = append(backends, &Backend{Name: name, IP: ip, Port: BackendPort})
	}
	return n.run(env, kind, backends)
}

// run runs the test binary inside the namespace as the backends, whose addresses it has.
func (n *PodNetwork) run(env []string, kind string, backends []*Backend) []*Backend {
	t := n.t
	t.Helper()
	var addrs, names []string
	for _, b := range backends {
		addrs = append(addrs, b.Addr())
		names = append(names, b.Name)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("test binary: %v", err)
	}
	cmd := exec.Command("ip", "netns", "exec", n.Name, self, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envBackendAddr+"="+strings.Join(addrs, ","),
		envBackendName+"="+strings.Join(names, ",")), env...)
	proc := startProcess(t, "backend "+strings.Join(names, ",")+kind, cmd)
	for _, b := range backends {
		b.proc = proc
		if err := testkit.Eventually(backendStartTimeout, 20*time.Millisecond, func() error {
			if proc.Exited() {
				return fmt.Errorf("backend exited: %s", proc.Out.String())
			}
			c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
			if err != nil {
				return err
			}
			return c.Close()
		}); err != nil {
			t.Fatalf("backend %s on %s: %v", b.Name, b.Addr(), err)
		}
	}
	return backends
}

// freeSubnet returns N in 1..254, starting at from, such that no local interface has 198.18.N.1.
func freeSubnet(t *testing.T, from int) int {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatalf("interface addresses: %v", err)
	}
	used := map[int]bool{}
	for _, a := range addrs {
		ip, _, err := net.ParseCIDR(a.String())
		if ip4 := ip.To4(); err == nil && ip4 != nil && ip4[0] == 198 && ip4[1] == 18 {
			used[int(ip4[2])] = true
		}
	}
	for i := range 254 {
		if n := (from-1+i)%254 + 1; !used[n] {
			return n
		}
	}
	t.Fatal("no free 198.18.N.0/24 subnet")
	return 0
}

func ipCmd(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func ipRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := ipCmd(args...); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}
