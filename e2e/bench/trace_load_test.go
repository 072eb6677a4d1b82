//go:build e2e

package bench

import (
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
)

// TestTraceLoadJudges: the load's rules for failed, wrong and stale answers and for the change →
// traffic times, on answers made up here (no network): what TestTraces' figures mean.
func TestTraceLoadJudges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	pod := func(name string, i int) *framework.Backend {
		return &framework.Backend{Name: name, IP: "198.18.0." + string(rune('0'+i)), Port: framework.BackendPort}
	}
	a, b, c, x := pod("a", 1), pod("b", 2), pod("c", 3), pod("x", 4)
	ok := func(sent, arrived int, backend string) answer {
		return answer{sent: at(sent), arrived: at(arrived), status: http.StatusOK, backend: backend}
	}
	gone := func(sent, arrived int) answer {
		return answer{sent: at(sent), arrived: at(arrived), status: http.StatusServiceUnavailable}
	}
	l := newTraceLoad()
	l.addRoute("web", false, "", a)
	web := l.targets["web"]
	if err := l.podsChanged(at(100), "web", []*framework.Backend{b}, nil); err != nil {
		t.Fatal(err)
	}
	l.judge(web, ok(50, 120, "a"))
	l.judge(web, ok(110, 180, "b")) // b seen 80 ms after its write
	l.judge(web, ok(150, 190, "x")) // never an endpoint: wrong
	if err := l.podsChanged(at(200), "web", nil, []*framework.Backend{a}); err != nil {
		t.Fatal(err)
	}
	l.judge(web, ok(190, 210, "a")) // sent before the removal: fine
	l.judge(web, ok(250, 260, "a")) // sent after: stale; the removal shows 60 ms after its write
	l.judge(web, ok(270, 280, "b"))
	// c comes and goes before any answer from it (between two reloads): no time for either change.
	if err := l.podsChanged(at(300), "web", []*framework.Backend{c}, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.podsChanged(at(400), "web", nil, []*framework.Backend{c}); err != nil {
		t.Fatal(err)
	}
	l.judge(web, gone(500, 510)) // a 503 for a Route that exists: failed

	// A new Route: 503 until its first 200, for requests sent before that 200 arrived.
	l.routeCreated(at(1000), "new", false, "", x)
	fresh := l.targets["new"]
	l.judge(fresh, gone(1010, 1020))
	l.judge(fresh, ok(1030, 1100, "x")) // served 100 ms after its create
	l.judge(fresh, gone(1050, 1110))    // sent before the first 200 arrived: expected
	l.judge(fresh, gone(1120, 1130))    // sent after: failed
	if err := l.routeDeleted(at(2000), "new"); err != nil {
		t.Fatal(err)
	}
	l.judge(fresh, ok(2010, 2020, "x")) // deleted before it was sent: stale
	l.judge(fresh, gone(2030, 2050))    // gone 50 ms after the delete; no longer requested
	for range 2 {
		if l.pick(false) != web {
			t.Errorf("the deleted Route seen gone is still requested")
		}
	}
	if u := l.unseen(); len(u) != 0 {
		t.Errorf("changes still awaited: %v", u)
	}
	if got := l.removedAddrs(); len(got) != 2 {
		t.Errorf("removed addresses %v, want a's and c's", got)
	}

	o := l.outcome()
	if o.requests != 13 || o.failed != 2 || o.wrong != 1 || o.stale != 2 {
		t.Errorf("requests %d, failed %d, wrong %d, stale %d; want 13, 2, 1, 2 (notes %v)", o.requests, o.failed, o.wrong, o.stale, o.notes)
	}
	want := []float64{0.080, 0.060, 0.100, 0.050}
	if len(o.latencies) != len(want) || o.unobserved != 2 {
		t.Fatalf("latencies %v (%d not observed), want %v (2 not observed)", o.latencies, o.unobserved, want)
	}
	for i := range want {
		if d := o.latencies[i] - want[i]; d < -1e-9 || d > 1e-9 {
			t.Errorf("latency %d = %v, want %v", i, o.latencies[i], want[i])
		}
	}

	// Balance by source: the first of balanceRun answers in a row from one pod.
	bl := newTraceLoad()
	bl.addRoute("bal", false, "", a, b)
	bal := bl.targets["bal"]
	if err := bl.balanceChanged(at(0), "bal"); err != nil {
		t.Fatal(err)
	}
	bl.judge(bal, ok(10, 20, "a"))
	bl.judge(bal, ok(30, 40, "b"))
	for i := range balanceRun {
		bl.judge(bal, ok(50+i, 300+i, "a"))
	}
	if o := bl.outcome(); len(o.latencies) != 1 || o.latencies[0] != 0.3 {
		t.Errorf("balance latencies %v, want [0.3]", o.latencies)
	}
}
