package traffic

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

const (
	weightRequests = 2000
	weightTol      = 0.05 // absolute tolerance on a share (5 points: about five standard deviations)
)

// TestWeights checks that each Service of a Route gets its weight's share of the requests whatever
// its number of endpoints, and that a weight-0 Service gets none, under concurrent clients. A Route
// split across Services defaults to roundrobin (as in OpenShift): HAProxy's `balance random` draws two
// servers and takes the less loaded one, so under concurrency it evens out load instead of following
// the weights (measured here: 61 % instead of 70 % with 4 parallel clients). An explicit balance
// annotation still wins; with random, the shares hold for sequential requests.
func TestWeights(t *testing.T) {
	f := newFixture(t)
	a := testkit.StartHTTPBackend(t, "127.0.0.2", "a0")
	var bs []*testkit.Backend
	for i := range 3 {
		bs = append(bs, testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.0.%d", 3+i), fmt.Sprintf("b%d", i)))
	}
	zero := testkit.StartHTTPBackend(t, "127.0.0.6", "z0")
	f.m.Service("w", "a", a).Service("w", "b", bs...).Service("w", "z", zero)
	split := []testbed.RouteOption{testbed.Weight(70), testbed.Alternate("b", 30), testbed.Alternate("z", 0)}
	f.m.Route("w", "split", "split.example.com", "", "a", split...)
	f.m.Route("w", "split-random", "split-random.example.com", "", "a",
		append(split, testbed.Annotate("haproxy.router.openshift.io/balance", "random"))...)
	r := f.start(t)

	for _, tc := range []struct {
		name    string
		url     string
		workers int
	}{
		{"default balance, 4 parallel clients", "http://split.example.com/w", 4},
		{"balance random, sequential", "http://split-random.example.com/w", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counts, errs := fire(r.Client, tc.url, weightRequests, tc.workers)
			if len(errs) > 0 {
				t.Fatalf("%d of %d requests failed; first: %v", len(errs), weightRequests, errs[0])
			}
			checkShares(t, counts)
		})
	}
	if n := zero.Requests(); n != 0 {
		t.Errorf("the weight-0 service's endpoint answered %d requests, want none", n)
	}
}

// checkShares checks the answers per backend against the weights 70 (a0) / 30 (b0-b2) / 0 (z0).
func checkShares(t *testing.T, counts map[string]int) {
	t.Helper()
	share := func(names ...string) float64 {
		n := 0
		for _, name := range names {
			n += counts[name]
		}
		return float64(n) / weightRequests
	}
	check := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > weightTol {
			t.Errorf("%s got %.1f%% of the requests, want %.0f%% ± %.0f%% (answers: %v)", what, 100*got, 100*want, 100*weightTol, counts)
		}
	}
	check("service a (weight 70, 1 endpoint)", share("a0"), 0.70)
	check("service b (weight 30, 3 endpoints)", share("b0", "b1", "b2"), 0.30)
	for _, b := range []string{"b0", "b1", "b2"} {
		check("endpoint "+b+" of service b", share(b), 0.10)
	}
	if counts["z0"] != 0 {
		t.Errorf("service z (weight 0) got %d requests, want none", counts["z0"])
	}
	var unknown []string
	for name := range counts {
		if !slices.Contains([]string{"a0", "b0", "b1", "b2", "z0"}, name) {
			unknown = append(unknown, fmt.Sprintf("%q: %d", name, counts[name]))
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("answers from outside the Route's backends: %v", unknown)
	}
}

// fire sends n GETs for url from workers goroutines and counts the 200 answers per backend; other
// statuses and transport errors are returned as errors.
func fire(c *testkit.Client, url string, n, workers int) (map[string]int, []error) {
	var (
		mu     sync.Mutex
		counts = map[string]int{}
		errs   []error
		wg     sync.WaitGroup
	)
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				resp, err := c.Do(http.MethodGet, url, nil)
				if err == nil && resp.Status != http.StatusOK {
					err = fmt.Errorf("GET %s: status %d from %s", url, resp.Status, who(resp.Backend))
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					counts[resp.Backend]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return counts, errs
}
