package traffic

import (
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/render"
)

// syslogWait bounds the wait for one log line; logWindow is how long a line that must not come is
// waited for.
const (
	syslogWait = 5 * time.Second
	logWindow  = 300 * time.Millisecond
)

// syslogServer is a syslog receiver on a UDP socket of 127.0.0.1: every datagram HAProxy sends is
// one line.
type syslogServer struct {
	conn  net.PacketConn
	lines chan string
	seen  []string // lines await and none have read, for failure messages
}

func startSyslog(t *testing.T) *syslogServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("syslog: %v", err)
	}
	s := &syslogServer{conn: conn, lines: make(chan string, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<16)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			select {
			case s.lines <- string(buf[:n]):
			default: // a test that stops reading loses later lines, never blocks the reader
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	return s
}

// Addr is the receiver's "127.0.0.1:port", a ROUTER_SYSLOG_ADDRESS.
func (s *syslogServer) Addr() string { return s.conn.LocalAddr().String() }

// await returns the next line that contains match, skipping others, and fails the test after
// syslogWait.
func (s *syslogServer) await(t *testing.T, match string) string {
	t.Helper()
	timeout := time.After(syslogWait)
	for {
		select {
		case line := <-s.lines:
			s.seen = append(s.seen, line)
			if strings.Contains(line, match) {
				return line
			}
		case <-timeout:
			t.Fatalf("no syslog line with %q within %v; lines received:\n%s", match, syslogWait, strings.Join(s.seen, "\n"))
			return ""
		}
	}
}

// none fails the test when a line containing match arrives within logWindow, or has arrived unread.
func (s *syslogServer) none(t *testing.T, match string) {
	t.Helper()
	timeout := time.After(logWindow)
	for {
		select {
		case line := <-s.lines:
			s.seen = append(s.seen, line)
			if strings.Contains(line, match) {
				t.Errorf("unexpected syslog line with %q: %s", match, line)
			}
		case <-timeout:
			return
		}
	}
}

// accessLogRouter starts HAProxy for three Routes of namespace logs — web (plain HTTP), secure (edge)
// and pass (passthrough) — with the access-log settings FromEnv reads from env, and a syslog receiver
// for ROUTER_SYSLOG_ADDRESS. It also checks that haproxy -c has no warning for the configuration.
func accessLogRouter(t *testing.T, env map[string]string) (*testbed.StaticHAProxy, *syslogServer) {
	t.Helper()
	s := startSyslog(t)
	vars := map[string]string{"ROUTER_SYSLOG_ADDRESS": s.Addr()}
	for k, v := range env {
		vars[k] = v
	}
	fromEnv, err := mapping.FromEnv(func(name string) string { return vars[name] })
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	opts := testbed.RouterOptions(t)
	opts.AccessLog = fromEnv.AccessLog

	f := newFixture(t)
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	passCrt, passKey := f.ca.Issue(t, "pass.logs.example.com")
	pass := testkit.StartTLSBackend(t, "127.0.0.3", "pass", passCrt, passKey)
	f.m.Service("logs", "web", web).Service("logs", "pass", pass)
	f.m.Route("logs", "web", "www.logs.example.com", "", "web")
	crt, key := f.ca.Issue(t, "secure.logs.example.com")
	f.m.Route("logs", "secure", "secure.logs.example.com", "", "web", testbed.Edge(crt, key))
	f.m.Route("logs", "pass", "pass.logs.example.com", "", "pass", testbed.Passthrough())
	r := testbed.StartStaticHAProxy(t, f.m.Input(t), opts, f.ca.IssueBundle(t, defaultCertName), f.ca.Pool())
	r.RequireAdmitted(t)

	out, err := exec.Command(testkit.HAProxyBinary(), append([]string{"-c"}, render.ConfigArgs(r.Dir)...)...).CombinedOutput()
	if err != nil || strings.Contains(string(out), "WARNING") {
		t.Errorf("haproxy -c: %v\n%s", err, out)
	}
	return r, s
}

// get sends a GET with header and fails unless backend answers it with 200.
func get(t *testing.T, c *testkit.Client, url, backend string, header http.Header) {
	t.Helper()
	resp, err := c.Do(http.MethodGet, url, header)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || resp.Backend != backend {
		t.Fatalf("GET %s: %d from %s, want 200 from backend %s", url, resp.Status, who(resp.Backend), backend)
	}
}

// nullConnection opens a connection to the public HTTP port, sends nothing, closes it and waits until
// HAProxy has ended the session (and so logged it, if it logs it at all).
func nullConnection(t *testing.T, r *testbed.StaticHAProxy) {
	t.Helper()
	frontend := func(field string) int64 {
		n, err := r.Stat("public", "FRONTEND", field)
		if err != nil {
			t.Fatalf("stat public %s: %v", field, err)
		}
		return n
	}
	before := frontend("stot")
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Options.HTTPPort)))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	deadline := time.Now().Add(syslogWait)
	for frontend("stot") == before || frontend("scur") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("HAProxy did not end the empty connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// httpLogLine is an "option httplog" line of the public frontend for Route logs/web: backend/server,
// the five timers, status 200, bytes, the captured cookie, termination and cookie state, connection
// counts, queues, the captured request and response headers, then the quoted request line.
var httpLogLine = regexp.MustCompile(`\]: 127\.0\.0\.1:\d+ \[[^]]+\] public be_http:logs:web/\S+ \d+/\d+/\d+/\d+/\d+ 200 \d+ ` +
	`session=s3cr3t - \S{4} \d+/\d+/\d+/\d+/\d+ \d+/\d+ \{abc123\} \{web\} "GET /hello\?q=1 HTTP/1\.1"$`)

// tcpLogLine is an "option tcplog" line of public_ssl for Route logs/pass: backend/server, three
// timers, bytes, termination state, connection counts and queues; nothing of HTTP.
var tcpLogLine = regexp.MustCompile(`\]: 127\.0\.0\.1:\d+ \[[^]]+\] public_ssl be_tcp:logs:pass/\S+ \d+/\d+/\d+ \d+ \S\S \d+/\d+/\d+/\d+/\d+ \d+/\d+$`)

// TestAccessLog: with ROUTER_SYSLOG_ADDRESS and level info, each request through a Route reaches the
// syslog server as one line in OpenShift's formats — httplog with the captured headers and cookie on
// the HTTP frontends, tcplog on public_ssl — naming the Route's backend, with facility local1.
// Connections that send nothing are logged too (no ROUTER_DONT_LOG_NULL).
func TestAccessLog(t *testing.T) {
	r, s := accessLogRouter(t, map[string]string{
		"ROUTER_LOG_LEVEL":                     "info",
		"ROUTER_CAPTURE_HTTP_REQUEST_HEADERS":  "X-Trace:32",
		"ROUTER_CAPTURE_HTTP_RESPONSE_HEADERS": "X-Backend:16",
		"ROUTER_CAPTURE_HTTP_COOKIE":           "session=:100",
	})
	header := http.Header{"X-Trace": {"abc123"}, "Cookie": {"other=1; session=s3cr3t"}}
	// <PRI> is facility*8+severity: local1 (17) at info (6).
	const pri = "<142>"

	t.Run("http", func(t *testing.T) {
		get(t, r.Client, "http://www.logs.example.com/hello?q=1", "web", header)
		line := s.await(t, "be_http:logs:web")
		if !strings.HasPrefix(line, pri) || !httpLogLine.MatchString(strings.TrimSpace(line)) {
			t.Errorf("http log line:\n  %s\nwant %s...%s", line, pri, httpLogLine)
		}
	})
	t.Run("edge", func(t *testing.T) {
		get(t, r.Client, "https://secure.logs.example.com/tls", "web", header)
		// fe_sni logs the HTTP request ('~' marks a TLS frontend) with its own captures.
		line := s.await(t, "be_edge_http:logs:secure")
		for _, want := range []string{pri, " fe_sni~ be_edge_http:logs:secure/", " 200 ", "{abc123} {web}", `"GET /tls HTTP/1.1"`} {
			if !strings.Contains(line, want) {
				t.Errorf("edge log line has no %q:\n  %s", want, line)
			}
		}
	})
	t.Run("passthrough", func(t *testing.T) {
		get(t, r.Client, "https://pass.logs.example.com/p", "pass", nil)
		// A TCP connection is logged when it ends.
		r.Client.CloseIdleConnections()
		line := s.await(t, "be_tcp:logs:pass")
		if !strings.HasPrefix(line, pri) || !tcpLogLine.MatchString(strings.TrimSpace(line)) {
			t.Errorf("tcp log line:\n  %s\nwant %s...%s", line, pri, tcpLogLine)
		}
	})
	t.Run("null connection", func(t *testing.T) {
		nullConnection(t, r)
		s.await(t, " public public/<NOSRV> ")
	})
}

// TestAccessLogFormat: ROUTER_SYSLOG_FORMAT, Go-quoted as OpenShift's ingress operator sets it,
// replaces httplog on the HTTP frontends, double quotes, '#' and sample expressions included, while
// public_ssl keeps tcplog; with ROUTER_DONT_LOG_NULL an empty connection leaves no line.
func TestAccessLogFormat(t *testing.T) {
	r, s := accessLogRouter(t, map[string]string{
		"ROUTER_LOG_LEVEL":                    "info",
		"ROUTER_LOG_FACILITY":                 "local4",
		"ROUTER_SYSLOG_FORMAT":                `"route=%b status=%ST trace=%[capture.req.hdr(0)] uri=\"%HU\" #1"`,
		"ROUTER_CAPTURE_HTTP_REQUEST_HEADERS": "X-Trace:32",
		"ROUTER_DONT_LOG_NULL":                "true",
	})
	nullConnection(t, r)
	get(t, r.Client, "http://www.logs.example.com/hello?q=1", "web", http.Header{"X-Trace": {"abc123"}})
	// local4 (20) at info (6).
	line := s.await(t, "route=")
	if want := `]: route=be_http:logs:web status=200 trace=abc123 uri="/hello?q=1" #1`; !strings.HasPrefix(line, "<166>") ||
		!strings.HasSuffix(strings.TrimSpace(line), want) {
		t.Errorf("custom format line:\n  %s\nwant <166>...%s", line, want)
	}
	// Lines arrive in the order HAProxy ends sessions: the empty connection ended first.
	for _, l := range s.seen {
		if strings.Contains(l, "<NOSRV>") || strings.Contains(l, "route=public") {
			t.Errorf("the empty connection was logged despite ROUTER_DONT_LOG_NULL: %s", l)
		}
	}

	get(t, r.Client, "https://pass.logs.example.com/p", "pass", nil)
	r.Client.CloseIdleConnections()
	if line := s.await(t, "be_tcp:logs:pass"); !tcpLogLine.MatchString(strings.TrimSpace(line)) {
		t.Errorf("tcp log line with a custom HTTP format:\n  %s\nwant %s", line, tcpLogLine)
	}
}

// TestAccessLogDefaultLevel: at OpenShift's default level, warning, HAProxy sends no access line (it
// logs traffic at info) but does send warnings, here a server going down.
func TestAccessLogDefaultLevel(t *testing.T) {
	s := startSyslog(t)
	fromEnv, err := mapping.FromEnv(func(name string) string {
		return map[string]string{"ROUTER_SYSLOG_ADDRESS": s.Addr()}[name]
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := testbed.RouterOptions(t)
	opts.AccessLog = fromEnv.AccessLog
	opts.CheckInterval = "100ms"
	f := newFixture(t)
	web := testkit.StartHTTPBackend(t, "127.0.0.2", "web")
	// Two endpoints, both down: as in OpenShift, only a backend with more than one endpoint is
	// health-checked (a lone server's check stops right after the start).
	dead := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), uint16(testkit.FreePort(t)))
	dead2 := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.4"), uint16(testkit.FreePort(t)))
	f.m.Service("logs", "web", web).ServiceAt("logs", "dead", dead, dead2)
	f.m.Route("logs", "web", "www.logs.example.com", "", "web")
	f.m.Route("logs", "dead", "dead.logs.example.com", "", "dead")
	r := testbed.StartStaticHAProxy(t, f.m.Input(t), opts, f.ca.IssueBundle(t, defaultCertName), f.ca.Pool())
	r.RequireAdmitted(t)

	get(t, r.Client, "http://www.logs.example.com/", "web", nil)
	s.await(t, "be_http:logs:dead/")
	for _, l := range s.seen {
		if strings.Contains(l, "be_http:logs:web") {
			t.Errorf("an access line at level warning: %s", l)
		}
	}
	s.none(t, "be_http:logs:web")
}
