//go:build e2e

package bench

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds and paces of the long-lived connections.
const (
	longLivedEvery = time.Second
	// longLivedMax bounds how many one trace opens.
	longLivedMax     = 600
	longLivedTimeout = 5 * time.Second
	// longLivedQuiet is how long a stream may go without a tick and still count as open at the end.
	longLivedQuiet = 3 * framework.StreamTick
)

// longLived opens, every longLivedEvery, one more connection through HAProxy's HTTP port to a Route
// whose pod streams (framework.StreamPath), and keeps them all open: each pins the HAProxy worker
// that accepted it, so a worker replaced by a reload stays until its last stream ends.
type longLived struct {
	httpPort int
	host     string
	backends []string // the pods the host's answers may come from

	mu      sync.Mutex
	conns   []*stream
	failed  int
	lastErr error

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// stream is one long-lived connection.
type stream struct {
	conn     net.Conn
	lastTick atomic.Int64 // unix nanoseconds of the last tick read
	ended    atomic.Bool  // the stream ended (EOF, error or closed)
}

// startLongLived starts opening long-lived connections to host, whose answers come from one of the
// pods named backends.
func startLongLived(httpPort int, host string, backends ...string) *longLived {
	ll := &longLived{httpPort: httpPort, host: host, backends: backends, stop: make(chan struct{}), done: make(chan struct{})}
	go ll.run()
	return ll
}

func (ll *longLived) run() {
	defer close(ll.done)
	tick := time.NewTicker(longLivedEvery)
	defer tick.Stop()
	for range longLivedMax {
		s, err := ll.open()
		ll.mu.Lock()
		if err != nil {
			ll.failed++
			ll.lastErr = err
		} else {
			ll.conns = append(ll.conns, s)
		}
		ll.mu.Unlock()
		select {
		case <-ll.stop:
			return
		case <-tick.C:
		}
	}
}

// open connects, sends GET StreamPath and reads the answer's header and first tick; a goroutine
// then reads the ticks until the connection ends.
func (ll *longLived) open() (*stream, error) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ll.httpPort)), longLivedTimeout)
	if err != nil {
		return nil, fmt.Errorf("long-lived connection: %w", err)
	}
	fail := func(err error) (*stream, error) {
		_ = conn.Close()
		return nil, fmt.Errorf("long-lived connection to %s: %w", ll.host, err)
	}
	if err := conn.SetDeadline(time.Now().Add(longLivedTimeout)); err != nil {
		return fail(err)
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", framework.StreamPath, ll.host); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK || !slices.Contains(ll.backends, resp.Header.Get(testkit.HeaderBackend)) {
		_ = resp.Body.Close()
		return fail(fmt.Errorf("answer %d from %q", resp.StatusCode, resp.Header.Get(testkit.HeaderBackend)))
	}
	body := bufio.NewReader(resp.Body)
	if _, err := body.ReadString('\n'); err != nil {
		return fail(fmt.Errorf("first tick: %w", err))
	}
	s := &stream{conn: conn}
	s.lastTick.Store(time.Now().UnixNano())
	go s.read(body)
	return s, nil
}

// read reads ticks until the stream ends; each read is bounded, so a stream that stops ticking ends.
func (s *stream) read(body *bufio.Reader) {
	defer s.ended.Store(true)
	for {
		if err := s.conn.SetReadDeadline(time.Now().Add(longLivedQuiet)); err != nil {
			return
		}
		if _, err := body.ReadString('\n'); err != nil {
			return
		}
		s.lastTick.Store(time.Now().UnixNano())
	}
}

// Stop stops opening connections (idempotent); the open ones stay.
func (ll *longLived) Stop() {
	ll.stopOnce.Do(func() { close(ll.stop) })
	<-ll.done
}

// Open returns how many connections are open now (ticking within longLivedQuiet), how many were
// opened in all and how many could not be opened, with the last reason.
func (ll *longLived) Open() (open, opened, failed int, lastErr error) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	now := time.Now()
	for _, s := range ll.conns {
		if !s.ended.Load() && now.Sub(time.Unix(0, s.lastTick.Load())) < longLivedQuiet {
			open++
		}
	}
	return open, len(ll.conns), ll.failed, ll.lastErr
}

// Close stops opening connections and closes every one (HAProxy's old workers can then exit).
func (ll *longLived) Close() {
	ll.Stop()
	ll.mu.Lock()
	defer ll.mu.Unlock()
	for _, s := range ll.conns {
		_ = s.conn.Close()
	}
}
