package parity

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

// Send puts every request to target, in order, and returns the answers in the same order. endpoints
// are the run's (for the stock cookies sent and the cookie values compared).
func Send(ctx context.Context, target Target, endpoints Endpoints, reqs []Request) ([]Answer, error) {
	s := &sender{target: target, n: normCtx{target: target, endpoints: endpoints, pods: map[string]string{}}, jars: map[string]map[string]string{}}
	out := make([]Answer, 0, len(reqs))
	for _, r := range reqs {
		a, err := s.do(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// sender holds the state of one pass over the corpus: the cookie jars and the pods seen.
type sender struct {
	target Target
	n      normCtx
	// jars are the cookies per session: name → value.
	jars map[string]map[string]string
}

// do sends one request (Repeat times, with Hold requests held) and returns its answer.
func (s *sender) do(ctx context.Context, r Request) (Answer, error) {
	if r.Hold > 0 {
		release := s.hold(ctx, r)
		defer release()
	}
	n := max(r.Repeat, 1)
	var as []Answer
	var pods []string
	for i := range n {
		if i > 0 && r.Repeat > 0 {
			time.Sleep(pause)
		}
		cookie, err := s.cookie(r)
		if err != nil {
			return Answer{}, err
		}
		o := send(ctx, s.target, r, cookie, "")
		a := normalise(r, o, s.n)
		if i == 0 {
			s.n.pods[r.ID] = rawPod(o)
		}
		s.keep(r, o)
		as, pods = append(as, a), append(pods, rawPod(o))
	}
	if r.Repeat > 0 {
		return aggregate(r, as, pods), nil
	}
	return as[0], nil
}

// cookie returns the Cookie header of the request: its session's cookies and its stock cookie.
func (s *sender) cookie(r Request) (string, error) {
	var parts []string
	if jar := s.jars[r.Session]; r.Session != "" {
		names := make([]string, 0, len(jar))
		for name := range jar {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			parts = append(parts, name+"="+jar[name])
		}
	}
	if r.StockCookie != nil {
		c, err := s.n.endpoints.cookie(*r.StockCookie)
		if err != nil {
			return "", err
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, "; "), nil
}

// keep stores the cookies an answer set in the request's session.
func (s *sender) keep(r Request, o observation) {
	if r.Session == "" || o.err != nil {
		return
	}
	for _, line := range o.header.Values("Set-Cookie") {
		pair, _, _ := strings.Cut(line, ";")
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			continue
		}
		if s.jars[r.Session] == nil {
			s.jars[r.Session] = map[string]string{}
		}
		s.jars[r.Session][name] = value
	}
}

// hold opens r.Hold requests like r that the pod answers only after holdSleep, one after the other:
// each is written to the router and given holdSettle to be counted before the next, so that no two
// are counted at once (two arriving together could both find the limit reached and both be
// refused). It returns a function that waits for them to end.
func (s *sender) hold(ctx context.Context, r Request) func() {
	var wg sync.WaitGroup
	held := r
	held.Hold, held.Repeat = 0, 0
	for range r.Hold {
		written := make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = sendWrote(ctx, s.target, held, "", testkit.EchoSleepParam+"="+holdSleep, func() { written <- struct{}{} })
		}()
		select {
		case <-written:
		case <-ctx.Done():
		}
		time.Sleep(holdSettle)
	}
	return wg.Wait
}
