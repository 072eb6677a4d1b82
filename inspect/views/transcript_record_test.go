package views_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/runtime/socket"
)

// recordEnv names the environment variable that makes TestRecordTranscripts record.
const recordEnv = "HAROUTE_RECORD_TRANSCRIPTS"

// Bounds of the recorder.
const (
	recordReady  = 30 * time.Second // haroute ready, HAProxy serving
	recordSettle = 30 * time.Second // the scenario's state reached (servers, the operator's hold)
	recordPoll   = 50 * time.Millisecond
	recordSocket = 5 * time.Second // one exchange with a real socket
	recordStop   = 20 * time.Second
)

// recordEpoch is the time every time of the recorded state is fixed to (the reloads a minute apart,
// the last sync and the snapshot after them), so that re-recording does not change the goldens.
var recordEpoch = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)

// recordManifests is the recorded scenario: a plain HTTP Route, an edge Route with a path that
// redirects plain HTTP, a passthrough Route, a Route whose Service has no endpoint, a Route whose
// only server an operator puts in maintenance, and a Route rejected because another namespace
// holds its host. The endpoints are fixed loopback addresses (recordEndpoints), so that the views
// print the same servers at every recording.
func recordManifests() *testbed.Manifests {
	ep := func(i int) netip.AddrPort { return netip.MustParseAddrPort(recordEndpoints[i]) }
	m := &testbed.Manifests{}
	m.ServiceAt("team-a", "web", ep(0)).
		ServiceAt("team-a", "shop", ep(1)).
		ServiceAt("team-b", "pass", ep(2)).
		ServiceAt("team-b", "empty").
		ServiceAt("team-b", "maint", ep(3))
	m.Route("team-a", "web", "web.inspect.test", "", "web").
		Route("team-a", "shop-api", "shop.inspect.test", "/api", "shop", testbed.Edge(nil, nil), testbed.Insecure("Redirect")).
		Route("team-b", "pass", "pass.inspect.test", "", "pass", testbed.Passthrough()).
		Route("team-b", "empty", "empty.inspect.test", "", "empty").
		Route("team-b", "maint", "maint.inspect.test", "", "maint").
		Route("team-b", "web-copy", "web.inspect.test", "", "web")
	return m
}

// recordEndpoints are the scenario's endpoints; the recorder listens on each, so that HAProxy's
// health checks find them up.
var recordEndpoints = []string{"127.0.77.1:8080", "127.0.77.2:8080", "127.0.77.3:8443", "127.0.77.4:8080"}

// maintRoute is the Route whose server the operator puts in maintenance.
const maintRoute = "team-b/maint"

// TestRecordTranscripts records the transcripts of one HAProxy series (testdata/transcripts/<series>,
// the series taken from HAProxy's `show info`): it runs `haroute run` on recordManifests with a
// managed HAProxy, puts recording proxies in front of HAProxy's admin and master sockets and of
// haroute's state socket (recordingSources), and runs every view of goldenViews through them, so
// that the transcripts hold exactly what the views ask. It then replays the transcripts and checks
// that the views print the same.
//
// It runs only with HAROUTE_RECORD_TRANSCRIPTS=1. HAROUTE_HAPROXY chooses the HAProxy (an absolute
// path: go test runs in the package's folder; default /usr/sbin/haproxy, 2.6). The haroute binary is
// built from the working tree, or taken from HAROUTE_BINARY. From the repository root, re-record every
// series of the matrix, then regenerate the goldens and read their diff:
//
//	HAROUTE_RECORD_TRANSCRIPTS=1 go test -count=1 -run '^TestRecordTranscripts$' ./inspect/views/
//	for v in 3.0 3.2 3.4; do HAROUTE_RECORD_TRANSCRIPTS=1 HAROUTE_HAPROXY=$PWD/bin/haproxy-$v go test -count=1 -run '^TestRecordTranscripts$' ./inspect/views/; done
//	go test -count=1 -run '^TestGolden' ./inspect/views/ -update
func TestRecordTranscripts(t *testing.T) {
	if os.Getenv(recordEnv) != "1" {
		t.Skipf("records only with %s=1 (and HAROUTE_HAPROXY naming the HAProxy)", recordEnv)
	}
	bin, remove, err := testbed.BuildHaroute()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	listenEndpoints(t)
	realDir, r := startRecordRouter(t, bin)
	settleScenario(t, r, layout.For(realDir).StateSocket())

	rec := recording{admin: newTranscript(), master: newTranscript(), state: &stateRecord{}}
	live := renderViews(t, recordingSources(t, realDir, rec))
	if t.Failed() {
		t.FailNow()
	}

	version := seriesOf(t, rec.admin)
	series := version
	if parts := strings.SplitN(version, ".", 3); len(parts) == 3 {
		series = parts[0] + "." + parts[1]
	}
	header := func(socketName string) []string {
		return []string{
			fmt.Sprintf("HAProxy %s, %s: the inspection views' commands and HAProxy's raw replies,", version, socketName),
			"recorded by TestRecordTranscripts (transcript_record_test.go; transcript_test.go has the format).",
			"The HAProxy directory reads " + goldenHAProxyDir + ".",
		}
	}
	rec.admin.header, rec.master.header = header("admin socket"), header("master CLI")
	if err := rec.write(series); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded HAProxy %s into %s: admin %q, master %q", version, transcriptDir(series), rec.admin.commands(), rec.master.commands())

	// The replay must print what the live sockets made the views print.
	saved, err := readRecording(series)
	if err != nil {
		t.Fatal(err)
	}
	replayed := renderViews(t, replay(t, saved))
	for _, v := range goldenViews {
		if !bytes.Equal(live[v.name], replayed[v.name]) {
			t.Errorf("view %s: the replay differs from the live sockets:\n%s", v.name, testkit.LineDiff(string(live[v.name]), string(replayed[v.name])))
		}
	}
}

// startRecordRouter writes recordManifests into a manifest folder and runs haroute on it with a
// managed HAProxy and the fixed default certificate of mapping/testdata/certs; it returns the
// HAProxy directory.
func startRecordRouter(t *testing.T, bin string) (string, *testbed.RouterProcess) {
	t.Helper()
	dir := testkit.TempDir(t)
	manifests := filepath.Join(dir, "m")
	data, err := recordManifests().YAML()
	if err != nil {
		t.Fatal(err)
	}
	var cert []byte
	for _, f := range []string{"example.crt", "example.key"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "mapping", "testdata", "certs", f))
		if err != nil {
			t.Fatal(err)
		}
		cert = append(cert, b...)
	}
	certFile := filepath.Join(dir, "default.pem")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifests, "scenario.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	r := testbed.NewRouterProcess(t, testbed.RouterProcessConfig{
		Binary: bin,
		Dir:    filepath.Join(dir, "h"),
		Source: []string{"--manifests", manifests},
		// HAProxy's default maxconn needs more file descriptors than a test machine may grant.
		Env:    []string{"ROUTER_MAX_CONNECTIONS=2000"},
		Bounds: testbed.RouterProcessBounds{Ready: recordReady, Apply: recordSettle, Poll: recordPoll, ShowProc: recordSocket, Socket: recordSocket},
		Process: testkit.ProcessOptions{
			StopTimeout: recordStop,
			Deathsig:    syscall.SIGTERM,
			MustOutlive: true,
		},
	})
	// A short drift interval: the operator's hold shows in the state at the next drift check.
	r.Start([]string{testbed.ManagedHAProxyFlag(), "--allow-loopback-endpoints", "--default-certificate", certFile, "--drift-interval", "200ms"})
	r.MustStopWith(r.ShowProc().Master.PID)
	return r.Dir, r
}

// checkL4OK is `show servers state`'s srv_check_status of a server whose last check connected
// (HCHK_STATUS_L4OK).
const checkL4OK = 6

// settleScenario waits until haroute has applied the scenario and every server is up (the checked
// ones after a passed check), puts the maintenance Route's server in maintenance as an operator
// would, and waits until haroute reports it held, the drift check finds nothing else and HAProxy
// runs one worker.
func settleScenario(t *testing.T, r *testbed.RouterProcess, statePath string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*recordSettle)
	defer cancel()
	var backend, server string
	err := testkit.Eventually(recordSettle, recordPoll, func() error {
		st, err := stateapi.Read(ctx, statePath)
		if err != nil {
			return err
		}
		if !st.Ready || st.Applied == nil || len(st.Applied.Routes) != 5 || len(st.Problems) != 1 {
			return fmt.Errorf("state not applied yet: ready %v, %d problems", st.Ready, len(st.Problems))
		}
		routeOf := map[string]string{}
		for _, rt := range st.Applied.Routes {
			routeOf[rt.Backend] = rt.Namespace + "/" + rt.Name
		}
		// A lone server is not health-checked (haroute turns its check off after the start), so
		// only the checked ones must have passed a check.
		checked := map[string]bool{}
		for _, b := range st.Applied.Backends {
			for _, sv := range b.Servers {
				checked[b.Name+"/"+sv.Name] = sv.HealthCheck
			}
		}
		states, err := socket.ShowServersState(ctx, r.Admin, "")
		if err != nil {
			return err
		}
		up := 0
		for _, sv := range states {
			route, ok := routeOf[sv.Backend]
			if !ok {
				continue
			}
			if sv.OpState != 2 || (checked[sv.Backend+"/"+sv.Server] && sv.CheckStatus != checkL4OK) {
				return fmt.Errorf("server %s/%s: op state %d, check status %d", sv.Backend, sv.Server, sv.OpState, sv.CheckStatus)
			}
			up++
			if route == maintRoute {
				backend, server = sv.Backend, sv.Server
			}
		}
		if up != len(recordEndpoints) || server == "" {
			return fmt.Errorf("%d servers up, want %d", up, len(recordEndpoints))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := socket.SetServerState(ctx, r.Admin, backend, server, "maint"); err != nil {
		t.Fatal(err)
	}
	err = testkit.Eventually(recordSettle, recordPoll, func() error {
		st, err := stateapi.Read(ctx, statePath)
		if err != nil {
			return err
		}
		if len(st.Held) != 1 || len(st.Drift) != 0 {
			return fmt.Errorf("held %q, drift %q", st.Held, st.Drift)
		}
		ps, err := r.Master.ShowProc(ctx)
		if err != nil {
			return err
		}
		if len(ps.Workers) != 1 || ps.Workers[0].Old {
			return fmt.Errorf("workers %+v", ps.Workers)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the operator's hold of %s/%s: %v", backend, server, err)
	}
}

// listenEndpoints listens on every recordEndpoints address until the test ends, closing each
// connection at once (HAProxy's health checks only connect).
func listenEndpoints(t *testing.T) {
	t.Helper()
	for _, addr := range recordEndpoints {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("endpoint %s: %v", addr, err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
		t.Cleanup(func() {
			_ = l.Close()
			<-done
		})
	}
}

// recordingSources starts recording proxies of the sockets of the HAProxy directory realDir and
// returns them as the views' sources. Each proxy answers a command it has answered before from rec
// and asks any other of the real socket, on a connection of its own in non-interactive mode (a
// command a view sends in interactive mode too: the transcripts hold non-interactive replies, to
// which the replay adds the prompt). The views are given goldenHAProxyDir as the HAProxy directory:
// the proxies put realDir in its place in the commands, and goldenHAProxyDir in realDir's place in
// the replies and the state.
func recordingSources(t *testing.T, realDir string, rec recording) views.Sources {
	t.Helper()
	target := views.SourcesFor(realDir)
	toReal := strings.NewReplacer(goldenHAProxyDir, realDir)
	fromReal := strings.NewReplacer(realDir, goldenHAProxyDir)
	admin := func(cmd string) (string, error) { return exchange(target.Admin, toReal.Replace(cmd)+"\n") }
	master := func(cmd string) (string, error) { return exchange(target.Master, toReal.Replace(cmd)+"\nquit\n") }
	return serveRecording(t, recordAnswer(t, "admin", rec.admin, admin, fromReal), recordAnswer(t, "master", rec.master, master, fromReal),
		func() []byte {
			if body, ok := rec.state.get(); ok {
				return body
			}
			body, err := recordState(target.State, realDir)
			if err != nil {
				t.Errorf("state socket: %v", err)
				return nil
			}
			return rec.state.set(body)
		})
}

// recordAnswer answers a CLI command from the transcript when it holds it, else asks the real
// socket (ask) and records the reply with fromReal's replacements; the first reply stays.
func recordAnswer(t testing.TB, name string, tr *transcript, ask func(cmd string) (string, error), fromReal *strings.Replacer) answerFunc {
	return func(cmd string) (string, bool) {
		if reply, ok := tr.reply(cmd); ok {
			return reply, true
		}
		raw, err := ask(cmd)
		if err != nil {
			t.Errorf("%s socket: %q: %v", name, cmd, err)
			return "", false
		}
		return tr.add(cmd, fromReal.Replace(raw)), true
	}
}

// exchange writes msg to the unix socket at path and reads the reply until HAProxy closes the
// connection (non-interactive mode), bounded by recordSocket.
func exchange(path, msg string) (string, error) {
	conn, err := net.DialTimeout("unix", path, recordSocket)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(recordSocket)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, msg); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	return string(b), err
}

// recordState asks the real state socket for GET /state and returns the answer with every time
// fixed (recordEpoch) and the HAProxy directory replaced, indented as haroute serves it.
func recordState(path, realDir string) ([]byte, error) {
	client := &http.Client{Timeout: recordSocket, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://haroute/state")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /state: %s, %v", resp.Status, err)
	}
	body = bytes.ReplaceAll(body, []byte(realDir), []byte(goldenHAProxyDir))
	var st stateapi.State
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("GET /state: %w", err)
	}
	for i := range st.Reloads {
		st.Reloads[i].At, st.Reloads[i].Seconds = recordEpoch.Add(time.Duration(i)*time.Minute), 0
	}
	if st.LastSync != nil {
		st.LastSync.At, st.LastSync.Seconds = recordEpoch.Add(time.Duration(len(st.Reloads))*time.Minute), 0
	}
	st.Generated = recordEpoch.Add(time.Hour)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// seriesOf returns HAProxy's version from the recorded `show info`.
func seriesOf(t *testing.T, admin *transcript) string {
	t.Helper()
	reply, ok := admin.reply("show info")
	if !ok {
		t.Fatalf("the views never sent show info: the series cannot be named (recorded %q)", admin.commands())
	}
	for line := range strings.Lines(reply) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Version: "); ok {
			return v
		}
	}
	t.Fatalf("show info names no version:\n%s", reply)
	return ""
}
