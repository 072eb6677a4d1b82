package faults

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of TestGracefulStopUnderLoad.
const (
	// slowDelay is how long the slow backend takes to answer: the request is in flight when haroute
	// gets SIGTERM.
	slowDelay = 2 * time.Second
	// idleConns is the number of kept-alive connections left idle across the stop.
	idleConns = 4
	connIO    = 5 * time.Second
)

// TestGracefulStopUnderLoad sends SIGTERM to haroute (managed HAProxy) under load, with a request in
// flight to a slow backend and kept-alive connections left idle. haroute stops within its stop
// timeout with exit status 0; HAProxy's soft stop lets the request in flight finish with its 200 and
// closes the idle connections; the master and every worker are gone afterwards (no orphan), and no
// answer came from a wrong backend. The requests the load lost once the listeners closed and the time
// the stop took are logged.
func TestGracefulStopUnderLoad(t *testing.T) {
	t.Parallel()
	web := testkit.StartHTTPBackend(t, "127.0.56.1", "web")
	slowIP := "127.0.56.2"
	entered := make(chan struct{}, 1)
	slowPort := startSlowBackend(t, slowIP, "slow", entered)
	host, slowHost := "base.stop.e2e.test", "slow.stop.e2e.test"
	b := newBed(t, map[string]string{
		"route.yaml":   testkit.RouteYAML("base", host, "web") + "---\n" + testkit.RouteYAML("slow", slowHost, "slow"),
		"service.yaml": testkit.ServiceYAML("web", web) + "---\n" + testkit.ServiceYAML("slow") + "---\n" + testkit.SliceYAML("slow", "slow", slowIP, slowPort),
	})
	r := b.StartManaged(testbed.FolderOpts{MayExit: true}, nil)
	r.WaitAnswer(host, "/", http.StatusOK, web.Name)
	pids := procPIDs(r)
	idle := openIdle(t, r.HTTPPort, host, idleConns)
	load := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+host+"/", web.Name)
	time.Sleep(loadSettle)

	// The request in flight.
	type answer struct {
		resp *testkit.Response
		err  error
	}
	slowDone := make(chan answer, 1)
	slowClient := testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil)
	go func() {
		resp, err := slowClient.Do(http.MethodGet, "http://"+slowHost+"/", nil)
		slowDone <- answer{resp, err}
	}()
	select {
	case <-entered:
	case <-time.After(applyTimeout):
		t.Fatal("the slow request never reached its backend")
	}

	if err := r.Proc.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	term := time.Now()
	closedCh := make(chan []time.Time, 1)
	go func() { closedCh <- waitClosed(idle) }()
	select {
	case <-r.Proc.Done():
	case <-time.After(stopTimeout):
		t.Fatalf("haroute did not stop within %v of SIGTERM", stopTimeout)
	}
	stopped := time.Now()
	closed := <-closedCh
	f := stopLoad(load)
	if st := r.Proc.Cmd.ProcessState; !st.Success() {
		t.Errorf("haroute exited with %v after SIGTERM, want status 0", st)
	}
	if err := waitGone(applyTimeout, pids...); err != nil {
		t.Errorf("HAProxy outlived haroute's stop: %v", err)
	}
	select {
	case a := <-slowDone:
		if a.err != nil || a.resp.Status != http.StatusOK || a.resp.Backend != "slow" {
			t.Errorf("the request in flight at SIGTERM: %+v, %v; want 200 from slow", a.resp, a.err)
		}
	case <-time.After(applyTimeout):
		t.Error("the request in flight at SIGTERM got no answer")
	}
	for i, at := range closed {
		switch {
		case at.IsZero():
			t.Errorf("idle kept-alive connection %d was still open after the stop", i)
		case at.After(stopped):
			t.Errorf("idle kept-alive connection %d was closed %v after haroute exited", i, at.Sub(stopped))
		}
	}
	if f.wrong != 0 {
		t.Errorf("%d answers from a wrong backend", f.wrong)
	}
	t.Logf("haroute stopped %v after SIGTERM (a request of %v in flight); idle connections closed after %v",
		stopped.Sub(term).Round(time.Millisecond), slowDelay, latest(closed).Sub(term).Round(time.Millisecond))
	figures(t, "graceful stop (SIGTERM)", f, "haroute stopped after", stopped.Sub(term), 0)
}

// startSlowBackend serves HTTP on ip (a free port, returned) answering every request with 200 and
// X-Backend: name after slowDelay; entered gets a value when a request arrives (never blocking).
func startSlowBackend(t *testing.T, ip, name string, entered chan<- struct{}) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("slow backend: %v", err)
	}
	srv := &http.Server{
		ReadHeaderTimeout: connIO,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			select {
			case entered <- struct{}{}:
			default:
			}
			time.Sleep(slowDelay)
			w.Header().Set(testkit.HeaderBackend, name)
			fmt.Fprintln(w, name)
		}),
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// openIdle opens n connections to HAProxy's HTTP port, has one request answered on each (HTTP/1.1,
// kept alive) and leaves them idle.
func openIdle(t *testing.T, port int, host string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), connIO)
		if err != nil {
			t.Fatalf("idle connection: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if err := c.SetDeadline(time.Now().Add(connIO)); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
			t.Fatalf("idle connection: %v", err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("idle connection: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("idle connection: %s, close %v; want a kept-alive 200", resp.Status, resp.Close)
		}
		conns[i] = c
	}
	return conns
}

// waitClosed returns, for each connection, when the server closed it, zero when it had not within
// stopTimeout (all are read concurrently).
func waitClosed(conns []net.Conn) []time.Time {
	out := make([]time.Time, len(conns))
	done := make(chan struct{}, len(conns))
	for i, c := range conns {
		go func() {
			defer func() { done <- struct{}{} }()
			if err := c.SetReadDeadline(time.Now().Add(stopTimeout)); err != nil {
				return
			}
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			if timedOut := errors.As(err, &ne) && ne.Timeout(); err != nil && !timedOut {
				out[i] = time.Now()
			}
		}()
	}
	for range conns {
		<-done
	}
	return out
}

// latest returns the latest of ts.
func latest(ts []time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}
