package oracle

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// History records, per step of a walk, the endpoints (backend names) of every watched Route, and
// which step is in flight and which completed, so that an answer can be judged against the steps
// that were in effect while its request was in flight.
type History struct {
	mu        sync.Mutex
	sets      []map[string]map[string]bool // per step: Route → endpoints
	started   int                          // the last step begun (its set is known)
	completed int                          // the last step carried out
}

// NewHistory starts a history at step 0 with the given endpoint sets, completed.
func NewHistory(initial map[string]map[string]bool) *History {
	return &History{sets: []map[string]map[string]bool{initial}}
}

// Begin records the endpoint sets of the next step, which is now in flight.
func (h *History) Begin(sets map[string]map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sets = append(h.sets, sets)
	h.started = len(h.sets) - 1
}

// Complete marks the step in flight as carried out.
func (h *History) Complete() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.completed = h.started
}

// Completed returns the last step carried out.
func (h *History) Completed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.completed
}

// Started returns the last step begun.
func (h *History) Started() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started
}

// Judge classifies an answer from backend for route to a request sent when step from was the last
// completed one: "current" when backend was an endpoint of the route in a step in effect between
// from and the step in flight now, "previous" when only in the step before from (a request already
// in flight on a removed endpoint), "" when never.
func (h *History) Judge(route, backend string, from int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := from; k <= h.started; k++ {
		if h.sets[k][route][backend] {
			return "current"
		}
	}
	if from > 0 && h.sets[from-1][route][backend] {
		return "previous"
	}
	return ""
}

// Target is one URL the traffic client requests for a Route.
type Target struct {
	Route string
	URL   string
	// Passthrough targets open a new connection per request: HAProxy hands a TCP connection to one
	// server for its whole life.
	Passthrough bool
}

// Traffic is a bounded loopback client sending requests to targets until stopped, judging every
// answer against a History.
type Traffic struct {
	Requests, Failed, Wrong, Previous int
	// Samples are the first failures and wrong answers, for the failure message.
	Samples  []string
	PerRoute map[string]int

	mu   sync.Mutex
	stop context.CancelFunc
	done sync.WaitGroup
}

// maxSamples bounds the failures kept for the message.
const maxSamples = 20

// StartTraffic starts workers that each loop over the targets (starting at different offsets)
// until Stop, ctx ends, or maxRequests requests were sent in all. Requests go to HAProxy's ports
// on 127.0.0.1 whatever the URL's host (the host is the Host header and the SNI) and time out
// after timeout.
func StartTraffic(ctx context.Context, httpPort, httpsPort int, targets []Target, h *History, workers, maxRequests int, timeout time.Duration) *Traffic {
	ctx, cancel := context.WithCancel(ctx)
	tr := &Traffic{stop: cancel, PerRoute: map[string]int{}}
	keepAlive, fresh := trafficClient(httpPort, httpsPort, timeout, false), trafficClient(httpPort, httpsPort, timeout, true)
	var budget sync.Mutex
	left := maxRequests
	take := func() bool {
		budget.Lock()
		defer budget.Unlock()
		left--
		return left >= 0
	}
	for w := 0; w < workers; w++ {
		tr.done.Add(1)
		go func(w int) {
			defer tr.done.Done()
			defer keepAlive.CloseIdleConnections()
			for i := w; ctx.Err() == nil && take(); i++ {
				tg := targets[i%len(targets)]
				c := keepAlive
				if tg.Passthrough {
					c = fresh
				}
				tr.one(ctx, c, tg, h)
			}
		}(w)
	}
	return tr
}

// Summary formats the counts and the first failures.
func (tr *Traffic) Summary() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests (per route %v), %d failed, %d from a wrong backend, %d from an endpoint of the step before",
		tr.Requests, tr.PerRoute, tr.Failed, tr.Wrong, tr.Previous)
	for _, s := range tr.Samples {
		b.WriteString("\n  " + s)
	}
	return b.String()
}

// Stop ends the traffic and waits for the workers.
func (tr *Traffic) Stop() {
	tr.stop()
	tr.done.Wait()
}

func (tr *Traffic) one(ctx context.Context, c *http.Client, tg Target, h *History) {
	from := h.Completed()
	status, backend, err := get(ctx, c, tg.URL)
	if ctx.Err() != nil {
		return // stopped: the request may have been cut short
	}
	verdict, inFlight := "", h.Started()
	if err == nil && status == http.StatusOK {
		verdict = h.Judge(tg.Route, backend, from)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.Requests++
	tr.PerRoute[tg.Route]++
	sample := func(format string, args ...any) {
		if len(tr.Samples) < maxSamples {
			tr.Samples = append(tr.Samples, fmt.Sprintf("GET %s (route %s, sent after step %d, step %d in flight at the answer): ", tg.URL, tg.Route, from, inFlight)+fmt.Sprintf(format, args...))
		}
	}
	switch {
	case err != nil:
		tr.Failed++
		sample("error: %v", err)
	case status != http.StatusOK:
		tr.Failed++
		sample("status %d from %q", status, backend)
	case verdict == "":
		tr.Wrong++
		sample("answered by %q, not an endpoint of the route", backend)
	case verdict == "previous":
		tr.Previous++
	}
}

// get sends one GET and returns the status and the answering backend.
func get(ctx context.Context, c *http.Client, rawURL string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)); err != nil {
		return 0, "", fmt.Errorf("read body: %w", err)
	}
	return resp.StatusCode, resp.Header.Get("X-Backend"), nil
}

// trafficClient returns a client that sends every request to HAProxy on 127.0.0.1 (http or https
// port by scheme) with the URL's host as Host and SNI, without verifying certificates.
func trafficClient(httpPort, httpsPort int, timeout time.Duration, fresh bool) *http.Client {
	dialer := &net.Dialer{Timeout: timeout}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort)))
		},
		DialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			raw, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(httpsPort)))
			if err != nil {
				return nil, err
			}
			conn := tls.Client(raw, &tls.Config{ServerName: host, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
			if err := conn.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, fmt.Errorf("TLS handshake with SNI %q: %w", host, err)
			}
			return conn, nil
		},
		DisableKeepAlives:   fresh,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// TargetsFor returns, for the given Routes of the world, the URL of each Route's host and exact path
// over every scheme that serves it (http for http Routes and Allow policies, https otherwise).
func TargetsFor(w *World, keys []string) ([]Target, error) {
	var out []Target
	for _, key := range keys {
		r := w.Route(key)
		if r == nil {
			return nil, fmt.Errorf("no route %s", key)
		}
		path := r.Path
		if path == "" {
			path = "/"
		}
		u := url.URL{Host: r.Host, Path: path}
		var schemes []string
		switch {
		case r.Kind == KindHTTP:
			schemes = []string{"http"}
		case r.Kind == KindPassthrough:
			schemes = []string{"https"}
		case r.Insecure == "Allow":
			schemes = []string{"http", "https"}
		default:
			schemes = []string{"https"}
		}
		for _, s := range schemes {
			u.Scheme = s
			out = append(out, Target{Route: key, URL: u.String(), Passthrough: r.Kind == KindPassthrough})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out, nil
}

// EndpointSets returns the endpoints of each of the Routes.
func EndpointSets(w *World, keys []string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, k := range keys {
		out[k] = w.EndpointNames(k)
	}
	return out
}
