package traffic

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

const (
	benchServices    = 4 // loopback backends every Route points at (their count does not matter)
	benchParallelism = 4 // clients per GOMAXPROCS (b.SetParallelism)
	benchSeed        = 2026
	// benchCheckInterval keeps 10,000 servers' health checks from loading the backends during the run.
	benchCheckInterval = "1h"
)

// benchPathSets are the Route paths of a host with one, two or three Routes.
var benchPathSets = [][]string{{"/"}, {"/", "/api"}, {"/", "/api", "/api/v2/"}}

// BenchmarkRequests measures requests per second through HAProxy at 10 and 10,000 Routes spread over
// many hosts with one to three paths each. Every request has a host and path of its own (the Route's
// path plus a unique suffix), so HAProxy's pattern cache misses and each lookup really searches the
// maps; every answer is checked for status and backend. N parallel keep-alive clients send them.
//
// srvconns/req is the number of connections the backends accepted per request: HAProxy reuses idle
// server connections per server, and every Route has servers of its own, so at 10,000 Routes nearly
// every request opens a new backend connection, which costs more than the map lookups. Each such
// connection leaves a socket in TIME_WAIT: keep -benchtime to a few thousand requests (5000x).
//
// routes=10000/mix=10 loads 10,000 Routes but sends the request mix of routes=10 (the first ten Routes
// are the same in both): the difference to routes=10 is the cost of the bigger maps alone.
func BenchmarkRequests(b *testing.B) {
	for _, c := range []struct{ routes, mix int }{{10, 10}, {10000, 10000}, {10000, 10}} {
		var env *benchEnv
		name := fmt.Sprintf("routes=%d", c.routes)
		if c.mix != c.routes {
			name += fmt.Sprintf("/mix=%d", c.mix)
		}
		b.Run(name, func(sb *testing.B) {
			// A sub-benchmark runs more than once while b.N ramps up: set up HAProxy on the first
			// run and keep it until the parent benchmark ends.
			if env == nil {
				env = newBenchEnv(ownedBy{TB: sb, owner: b}, c.routes, c.mix)
			}
			env.run(sb)
		})
	}
}

// benchTarget is one request of the corpus and the backend that must answer it.
type benchTarget struct {
	host, prefix, backend string
}

type benchEnv struct {
	router   *testbed.StaticHAProxy
	backends []*testkit.Backend
	corpus   []benchTarget
}

// newBenchEnv starts HAProxy with routes Routes; the request corpus covers the first mix of them.
func newBenchEnv(t testing.TB, routes, mix int) *benchEnv {
	t.Helper()
	var m testbed.Manifests
	env := &benchEnv{}
	for i := range benchServices {
		be := testkit.StartHTTPBackend(t, fmt.Sprintf("127.0.0.%d", 10+i), fmt.Sprintf("b%d", i))
		m.Service("bench", be.Name, be)
		env.backends = append(env.backends, be)
	}
	for host, made := 0, 0; made < routes; host++ {
		paths := benchPathSets[host%len(benchPathSets)]
		h := fmt.Sprintf("h%05d.bench.example.com", host)
		for _, p := range paths {
			if made == routes {
				break
			}
			svc := fmt.Sprintf("b%d", made%benchServices)
			m.Route("bench", fmt.Sprintf("r%05d", made), h, p, svc,
				testbed.Annotate("router.openshift.io/haproxy.health.check.interval", benchCheckInterval))
			env.corpus = append(env.corpus, benchTarget{host: h, prefix: strings.TrimSuffix(p, "/"), backend: svc})
			made++
		}
	}
	env.corpus = env.corpus[:mix]
	// Varied order, so consecutive requests hit different hosts and map branches.
	rng := rand.New(rand.NewPCG(benchSeed, benchSeed))
	rng.Shuffle(len(env.corpus), func(i, j int) { env.corpus[i], env.corpus[j] = env.corpus[j], env.corpus[i] })

	ca := testkit.NewCA(t, "bench CA")
	env.router = testbed.StartStaticHAProxy(t, m.Objects(), testbed.RouterOptions(t), ca.IssueBundle(t, defaultCertName), ca.Pool())
	env.router.RequireAdmitted(t)
	return env
}

func (e *benchEnv) run(b *testing.B) {
	var (
		seq      atomic.Int64
		failures atomic.Int64
		first    sync.Once
		firstErr error
	)
	conns := func() (n int64) {
		for _, be := range e.backends {
			n += be.Conns()
		}
		return n
	}
	connsBefore := conns()
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		header := http.Header{}
		for pb.Next() {
			i := seq.Add(1)
			tg := e.corpus[int(i)%len(e.corpus)]
			// One URL host for all requests, so each client keeps its connection; Host varies.
			header.Set("Host", tg.host)
			url := "http://bench" + tg.prefix + "/q" + strconv.FormatInt(i, 10)
			resp, err := e.router.Client.Do(http.MethodGet, url, header)
			if err == nil && (resp.Status != http.StatusOK || resp.Backend != tg.backend) {
				err = fmt.Errorf("GET %s (Host %s): %d from %s, want 200 from backend %s", url, tg.host, resp.Status, who(resp.Backend), tg.backend)
			}
			if err != nil {
				failures.Add(1)
				first.Do(func() { firstErr = err })
			}
		}
	})
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Errorf("%d of %d requests failed; first: %v", n, b.N, firstErr)
	}
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "req/s")
	}
	// Each Route has servers of its own and HAProxy reuses idle server connections per server only,
	// so with many Routes most requests open a new backend connection; this shows how many.
	b.ReportMetric(float64(conns()-connsBefore)/float64(b.N), "srvconns/req")
}

// ownedBy is a testing.TB for set-up that outlives one run of a sub-benchmark: failures during set-up
// stop the sub-benchmark (its own goroutine), while cleanups, later errors and logs belong to owner.
type ownedBy struct {
	testing.TB
	owner testing.TB
}

func (o ownedBy) Cleanup(f func())                  { o.owner.Cleanup(f) }
func (o ownedBy) Errorf(format string, args ...any) { o.owner.Errorf(format, args...) }
func (o ownedBy) Logf(format string, args ...any)   { o.owner.Logf(format, args...) }
func (o ownedBy) Failed() bool                      { return o.owner.Failed() || o.TB.Failed() }
