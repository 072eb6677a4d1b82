package main

import (
	"bufio"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/haroute/haroute/inspect/access"
)

// statsHosts returns the addresses the stats listener binds: the one ROUTER_LISTEN_ADDR or
// ROUTER_BIND_ADDRESS names; else, when the pod's own addresses are known (HAROUTE_POD_IPS), those
// and loopback — what the kubelet's probes, a scraper and `kubectl port-forward` reach, and not the
// other addresses of a node in the hostNetwork shape; else every address ("").
func statsHosts(rc runConfig) []string {
	if rc.statsAddress != "" || len(rc.podIPs) == 0 {
		return []string{rc.statsAddress}
	}
	seen := map[netip.Addr]bool{}
	var hosts []string
	add := func(a netip.Addr) {
		if !seen[a] {
			seen[a] = true
			hosts = append(hosts, a.String())
		}
	}
	v6 := false
	for _, a := range rc.podIPs {
		add(a)
		v6 = v6 || a.Is6()
	}
	add(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	if v6 {
		add(netip.IPv6Loopback())
	}
	return hosts
}

// listenStats takes the stats port of rc on every address of statsHosts (none when there is no
// port: port 0, or --once). It takes all or none. With rc.metricsTLS each listener serves HTTPS beside
// plain HTTP (tlsSniffer).
func listenStats(rc runConfig) ([]net.Listener, error) {
	if rc.statsPort == 0 || rc.once {
		return nil, nil
	}
	var lns []net.Listener
	for _, h := range statsHosts(rc) {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(rc.statsPort)))
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("stats listener: %w", err)
		}
		if rc.metricsTLS != nil {
			ln = newTLSSniffer(ln, rc.metricsTLS.config(), statsReadHeaderTimout)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// tlsHandshakeRecord is the first byte of a TLS connection (a handshake record: the ClientHello).
const tlsHandshakeRecord = 0x16

// tlsSniffer serves TLS and plain HTTP on one port, as OpenShift's router serves its metrics port: a
// connection that opens with a TLS handshake record is accepted as a *tls.Conn (so that http.Server
// runs the handshake and sets Request.TLS), any other as it is. The kubelet's probes stay plain HTTP
// while Prometheus scrapes over HTTPS. The first byte is waited for in a goroutine per connection (at
// most timeout), so that a silent client holds up no other; Close closes the connections still waited
// on.
type tlsSniffer struct {
	net.Listener
	config  *tls.Config
	timeout time.Duration
	conns   chan net.Conn
	errs    chan error
	done    chan struct{}

	mu      sync.Mutex
	closed  bool
	pending map[net.Conn]struct{}
}

func newTLSSniffer(ln net.Listener, config *tls.Config, timeout time.Duration) *tlsSniffer {
	s := &tlsSniffer{Listener: ln, config: config, timeout: timeout, conns: make(chan net.Conn), errs: make(chan error),
		done: make(chan struct{}), pending: map[net.Conn]struct{}{}}
	go s.acceptLoop()
	return s
}

func (s *tlsSniffer) acceptLoop() {
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			select {
			case s.errs <- err:
			case <-s.done:
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go s.sniff(c)
	}
}

// sniff reads c's first byte and hands c on, as TLS or as it is.
func (s *tlsSniffer) sniff(c net.Conn) {
	if !s.wait(c, true) {
		_ = c.Close()
		return
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(s.timeout))
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	s.wait(c, false)
	if err != nil {
		_ = c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: br}
	if first[0] == tlsHandshakeRecord {
		out = tls.Server(out, s.config)
	}
	select {
	case s.conns <- out:
	case <-s.done:
		_ = c.Close()
	}
}

func (s *tlsSniffer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case err := <-s.errs:
		return nil, err
	case <-s.done:
		return nil, net.ErrClosed
	}
}

// wait adds c to the connections whose first byte is waited for (on) or takes it out; it reports
// false, and does not add c, when the listener is closed.
func (s *tlsSniffer) wait(c net.Conn, on bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return false
	case on:
		s.pending[c] = struct{}{}
	default:
		delete(s.pending, c)
	}
	return true
}

func (s *tlsSniffer) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
		for c := range s.pending {
			_ = c.Close()
		}
	}
	s.mu.Unlock()
	return s.Listener.Close()
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// closeAll closes listeners (the servers on them may have closed them already).
func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		_ = ln.Close()
	}
}

// podAddresses parses HAROUTE_POD_IPS (comma-separated; the translation options report a bad value).
func podAddresses(v string) []netip.Addr {
	var out []netip.Addr
	for _, f := range strings.Split(v, ",") {
		if a, err := netip.ParseAddr(strings.TrimSpace(f)); err == nil && a.Zone() == "" {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// Values of --metrics-auth.
const (
	metricsAuthKube = "kube"
	metricsAuthNone = "none"
)

// protectMetrics guards /metrics; the probes stay open (the kubelet sends no credentials). With
// STATS_USERNAME and STATS_PASSWORD, a request with basic credentials must carry those; with a
// reviewer (cluster mode, --metrics-auth=kube), a request without basic credentials must carry a
// bearer token the API server allows to get routers/metrics, as OpenShift's router has it. Without
// either, /metrics is open.
func protectMetrics(rc runConfig, rev *access.Reviewer, metrics http.Handler) http.Handler {
	switch {
	case rc.statsUser != "" && rev != nil:
		basic, token := basicAuth(rc.statsUser, rc.statsPassword, metrics), rev.Wrap(metrics)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, ok := r.BasicAuth(); ok {
				basic.ServeHTTP(w, r)
				return
			}
			token.ServeHTTP(w, r)
		})
	case rc.statsUser != "":
		return basicAuth(rc.statsUser, rc.statsPassword, metrics)
	case rev != nil:
		return rev.Wrap(metrics)
	}
	return metrics
}

// OpenShift's variables of the stats credentials in files: the ingress operator mounts its
// router-stats Secret and points these at its two keys.
const (
	envStatsUserFile     = "STATS_USERNAME_FILE"
	envStatsPasswordFile = "STATS_PASSWORD_FILE"
)

// statsCredentials returns the stats credentials: from the files STATS_USERNAME_FILE and
// STATS_PASSWORD_FILE name when both are set (they win over STATS_USERNAME and STATS_PASSWORD, as in
// OpenShift's router), else STATS_USERNAME and STATS_PASSWORD. The files are read once, here, and only
// when serve (the stats port is served); one of them alone, or one that is missing, unreadable or
// empty, is an error.
func (a *app) statsCredentials(serve bool) (user, password string, err error) {
	user, password = a.getenv("STATS_USERNAME"), a.getenv("STATS_PASSWORD")
	userFile, passwordFile := strings.TrimSpace(a.getenv(envStatsUserFile)), strings.TrimSpace(a.getenv(envStatsPasswordFile))
	switch {
	case userFile == "" && passwordFile == "":
		return user, password, nil
	case userFile == "" || passwordFile == "":
		return "", "", fmt.Errorf("%s and %s: set both or neither", envStatsUserFile, envStatsPasswordFile)
	case !serve:
		return user, password, nil
	}
	if user != "" || password != "" {
		a.log.Info("the stats credentials come from "+envStatsUserFile+" and "+envStatsPasswordFile+"; STATS_USERNAME and STATS_PASSWORD are ignored", "user", userFile, "password", passwordFile)
	}
	var errs []error
	if user, err = readCredential(envStatsUserFile, userFile); err != nil {
		errs = append(errs, err)
	}
	if password, err = readCredential(envStatsPasswordFile, passwordFile); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return "", "", err
	}
	return user, password, nil
}

// readCredential returns the content of the file path (variable names it) without one final line
// break ("\n" or "\r\n"), which an editor or `echo` adds and no client sends.
func readCredential(variable, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", variable, err)
	}
	v := string(b)
	if cut, ok := strings.CutSuffix(v, "\n"); ok {
		v = strings.TrimSuffix(cut, "\r")
	}
	if v == "" {
		return "", fmt.Errorf("%s=%s: the file is empty", variable, path)
	}
	return v, nil
}

// basicAuth serves next only to requests with these credentials (compared in constant time).
func basicAuth(user, password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="haroute"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metricsReviewer returns the reviewer of /metrics tokens: in cluster mode with --metrics-auth=kube,
// nil otherwise (a folder has no API server to ask).
func (a *app) metricsReviewer(rc runConfig, kube kubernetes.Interface) *access.Reviewer {
	if kube == nil || rc.metricsAuth != metricsAuthKube || rc.statsPort == 0 || rc.once {
		return nil
	}
	a.log.Info("/metrics needs a bearer token allowed to get routers/metrics in route.openshift.io, or the stats credentials", "router", rc.settings.opts.RouterName)
	return access.New(kube, rc.settings.opts.RouterName, a.log)
}
