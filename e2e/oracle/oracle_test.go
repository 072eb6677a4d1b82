package oracle

import (
	"flag"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/plan"
)

var (
	seedFlag  = flag.Uint64("oracle.seed", 20261103, "seed of the oracle's and the churn test's random walks")
	stepsFlag = flag.Int("oracle.steps", 200, "steps of the oracle's random walk (at least 1)")
	// settingsStepsFlag sizes TestOracleSettings's walk.
	settingsStepsFlag = flag.Int("oracle.settings-steps", 60, "steps of the oracle's walk under OpenShift's non-default settings (at least 1)")
	// headerStepsFlag sizes TestOracleHeaderActions's walk.
	headerStepsFlag = flag.Int("oracle.header-steps", 30, "steps of the oracle's walk that mostly changes header actions (at least 1)")
)

// The walks' lengths in short mode (`go test -short`, make quick) when their flag is not given: the
// same seeded walks, cut shorter. make unit and the matrix run them in full.
const (
	shortSteps         = 40
	shortHeaderSteps   = 30
	shortSettingsSteps = 20
	shortChurnSteps    = 100
)

// walkSteps is the length of a walk: the flag's value, or in short mode at most short unless the flag
// was given on the command line.
func walkSteps(name string, value, short int) int {
	if !testing.Short() {
		return value
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	if given {
		return value
	}
	return min(value, short)
}

// Sizes of the oracle.
const (
	httpBackends  = 48
	tlsBackends   = 24
	spareBackends = 2 // small, so that pool exhaustion happens now and then
	askWorkers    = 8
	maxShown      = 12 // differences shown per kind in a failure
)

// TestOracle is the equivalence oracle: after every step of a seeded random walk, HAProxy A (driven
// by runtime operations, reloaded only for structural plans) and a fresh HAProxy B (started from the
// rendered files of the same desired state) must hold the same state per Route and give the same
// answers, and A must have reloaded exactly on the structural steps.
func TestOracle(t *testing.T) {
	seed, steps := *seedFlag, walkSteps("oracle.steps", *stepsFlag, shortSteps)
	if steps < 1 {
		t.Fatalf("-oracle.steps=%d: want at least 1", steps)
	}
	t.Logf("seed %d (-oracle.seed), %d steps (-oracle.steps)", seed, steps)

	bed := NewBed(t, httpBackends, tlsBackends)
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = spareBackends
	wk := NewWalker(seed, NewWorld(bed.Addrs, string(bed.ServiceCA.PEM())), WalkOptionsFor(opts, bed.Issuer(t)))
	walkOracle(t, seed, steps, bed, opts, wk)
}

// TestOracleHeaderActions is the oracle on a walk that mostly changes the Routes' header actions
// (spec.httpHeaders.actions), among Routes coming and going: literal values change at runtime through
// haroute_header_values.map, the rest through reloads, and A must answer, with the same headers on
// both sides, as a fresh B at every step.
func TestOracleHeaderActions(t *testing.T) {
	seed, steps := *seedFlag, walkSteps("oracle.header-steps", *headerStepsFlag, shortHeaderSteps)
	if steps < 1 {
		t.Fatalf("-oracle.header-steps=%d: want at least 1", steps)
	}
	t.Logf("seed %d (-oracle.seed), %d steps (-oracle.header-steps)", seed, steps)
	bed := NewBed(t, httpBackends, tlsBackends)
	opts := testbed.RouterOptions(t)
	opts.SparePoolSize = spareBackends
	wopts := WalkOptionsFor(opts, bed.Issuer(t))
	wopts.Weights = map[MutationKind]int{MutHeaders: 55, MutAddRoute: 15, MutDeleteRoute: 10, MutScale: 10, MutHost: 5, MutPath: 5}
	wk := NewWalker(seed, NewWorld(bed.Addrs, string(bed.ServiceCA.PEM())), wopts)
	stats := walkOracle(t, seed, steps, bed, opts, wk)
	if ms := stats.ByMutation[MutHeaders]; steps >= 20 && (ms == nil || ms.Runtime == 0 || ms.Reloads == 0) {
		t.Errorf("header steps %+v: the walk must change header values at runtime and the actions through reloads", ms)
	}
}

// walkOracle runs the oracle's walk: seed Routes, then steps mutations of wk, each applied to A and
// compared with a fresh B. It returns the walk's figures.
func walkOracle(t *testing.T, seed uint64, steps int, bed *Bed, opts mapping.Options, wk *Walker) *Stats {
	t.Helper()
	ctx := t.Context()
	if err := SeedRoutes(wk); err != nil {
		t.Fatal(err)
	}
	drv := NewDriver(t, opts, bed.DefaultCertPEM)
	clientA := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, nil)
	stats := NewStats()
	feel := NewFeel(bed.Addrs)
	var freshTime, checkTime time.Duration

	for step := 0; step <= steps; step++ {
		m := Mutation{Kind: "seed", Detail: "initial routes"}
		if step > 0 {
			m = wk.Step()
		}
		in := wk.World.Input()
		res, err := drv.Step(ctx, in)
		stats.Record(m, res)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Logf("figures up to the failure: %s\n%s", stats.Summary(), feel.Stats.String())
			t.Fatalf("seed %d, step %d (%s)\nplan: %s\n"+format, append([]any{seed, step, m, DescribePlan(res.Plan, 40)}, args...)...)
		}
		if err != nil {
			fail("driver: %v", err)
		}
		if res.ApplyErr != nil {
			fail("runtime path failed: %v", res.ApplyErr)
		}
		if k := res.Reason.Kind; k == plan.TemplateChanged || k == plan.DiffRefused {
			// The default template renders nothing a runtime plan changes outside the server lines,
			// and matched states always have a runtime way: either reason is a bug.
			fail("reload for %v with the default template", res.Reason)
		}
		if !res.Started {
			want := 0
			if res.Plan.NeedsReload() {
				want = 1
			}
			if got := res.ReloadsAfter - res.ReloadsBefore; got != want {
				fail("A's reload counter rose by %d (%d → %d), want %d", got, res.ReloadsBefore, res.ReloadsAfter, want)
			}
		}

		if res.Plan.NeedsReload() && step > 0 {
			t.Logf("step %d (%s): reload: %v", step, m, res.Plan.Structural)
		}

		began := time.Now()
		scope := NewScope(t)
		b, err := StartFresh(scope, in, opts, bed.DefaultCertPEM)
		if err != nil {
			fail("start B: %v", err)
		}
		freshTime += time.Since(began)
		began = time.Now()
		chk, err := CheckStep(ctx, drv, clientA, b, wk.World.Owners(), askWorkers, feel, m.Route)
		checkTime += time.Since(began)
		scope.Close()
		if err != nil {
			fail("%v", err)
		}
		stats.Requests += chk.Requests
		if chk.Failed() {
			fail("%s", chk.Describe(maxShown))
		}
	}
	t.Logf("oracle: %s\nwhat users feel: %s\ntime starting B: %v; observing and asking: %v", stats.Summary(), feel.Stats.String(), freshTime.Round(time.Millisecond), checkTime.Round(time.Millisecond))
	// The controller plans most changes from the last desired state (plan.ComputeDelta): a walk
	// that never does proves nothing about that path.
	if steps >= 20 && stats.Delta == 0 {
		t.Errorf("no step of %d was planned from the last desired state", steps)
	}
	return stats
}

// settingsEnv is the non-default set of OpenShift's settings TestOracleSettings walks under: the TLS
// profile, HTTP/2 off, the IngressController's HTTP options, header actions, mutual TLS (optional, so
// that the corpus's clients without a certificate are served) and unmatched requests answered 404.
var settingsEnv = map[string]string{
	"SSL_MIN_VERSION": "TLSv1.2", "ROUTER_CIPHERS": "modern", "ROUTER_CIPHERSUITES": "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384",
	"ROUTER_CURVES": "X25519:secp256r1:secp384r1", "ROUTER_DISABLE_HTTP2": "true",
	"ROUTER_HTTP_IGNORE_PROBES": "true", "ROUTER_IDLE_CLOSE_ON_RESPONSE": "true", "ROUTER_ABORT_ON_CLOSE": "true",
	"ROUTER_HAPROXY_CONTSTATS": "true", "ROUTER_ENABLE_COMPRESSION": "true", "ROUTER_COMPRESSION_MIME": "text/html text/plain",
	"ROUTER_UNIQUE_ID_HEADER_NAME": "X-Request-ID", "ROUTER_UNIQUE_ID_FORMAT": `"%{+X}o %ci:%cp_%fi:%fp_%Ts_%rt:%pid"`,
	"ROUTER_H1_CASE_ADJUST": "X-Oracle", "ROUTER_HTTP_REQUEST_HEADERS": "X-Oracle:walk:Set,X-Drop-Me:Delete",
	"ROUTER_HTTP_RESPONSE_HEADERS": "X-Served-By:oracle:Set", "ROUTER_MUTUAL_TLS_AUTH": "optional",
	"ROUTER_MUTUAL_TLS_HEADER_FILTER": "false", "ROUTER_ERRORFILE_404": "/dev/null", "ROUTER_SET_FORWARDED_HEADERS": "replace",
	"ROUTER_LOAD_BALANCE_ALGORITHM": "leastconn", "ROUTER_MAX_REWRITE_SIZE": "4096",
}

// TestOracleSettings is the oracle under settingsEnv, with the router's own TLS files in the walk:
// the default certificate and the client CRLs rotate at runtime, the client CA now and then (a
// reload). Runtime and fresh reload must agree at every step, served certificates included.
func TestOracleSettings(t *testing.T) {
	seed, steps := *seedFlag, walkSteps("oracle.settings-steps", *settingsStepsFlag, shortSettingsSteps)
	if steps < 1 {
		t.Fatalf("-oracle.settings-steps=%d: want at least 1", steps)
	}
	t.Logf("seed %d (-oracle.seed), %d steps (-oracle.settings-steps)", seed, steps)
	bed := NewBed(t, httpBackends, tlsBackends)
	opts, err := mapping.FromEnv(func(k string) string { return settingsEnv[k] })
	if err != nil {
		t.Fatal(err)
	}
	base := testbed.RouterOptions(t)
	opts.HTTPPort, opts.HTTPSPort, opts.BindAddress = base.HTTPPort, base.HTTPSPort, base.BindAddress
	opts.AllowLoopbackEndpoints, opts.AllowWildcardRoutes, opts.MaxConnections = true, true, base.MaxConnections
	opts.SparePoolSize = spareBackends

	clients1, clients2 := testkit.NewCA(t, "oracle clients 1"), testkit.NewCA(t, "oracle clients 2")
	revoked, _ := clients1.Issue(t, "revoked.clients.test")
	pool := &ListenerPool{
		DefaultCertificates: []string{string(bed.DefaultCertPEM), string(bed.RouterCA.IssueBundle(t, defaultCertName)),
			string(bed.RouterCA.IssueBundle(t, defaultCertName))},
		ClientCAs: []ClientCA{
			{PEM: string(clients1.PEM()), CRLs: []string{string(clients1.RevocationList(t, 1)), string(clients1.RevocationList(t, 2, revoked))}},
			{PEM: string(clients2.PEM()), CRLs: []string{string(clients2.RevocationList(t, 1))}},
		},
	}
	wopts := WalkOptionsFor(opts, bed.Issuer(t))
	wopts.Listener = pool
	wopts.Weights[MutListener] = 10
	world := NewWorld(bed.Addrs, string(bed.ServiceCA.PEM()))
	world.Listener = pool.Files()
	walkOracle(t, seed, steps, bed, opts, NewWalker(seed, world, wopts))
}
