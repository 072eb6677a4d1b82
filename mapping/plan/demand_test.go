package plan_test

import (
	"testing"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// TestDemandBurst replays the burst the pool is sized for — 100 new Routes 200 ms apart on a pool of
// 10 — with the refill rule the Updater applies (a refill reload installs Sizes when Low), and counts
// the refills: one, early, and the pool never runs dry.
func TestDemandBurst(t *testing.T) {
	k := plan.PoolKey{Kind: model.KindHTTP, Balance: "random"}
	d := plan.NewDemand(10)
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	free, refills, firstRefill := 10, 0, -1
	const lead = time.Second
	for i := range 100 {
		now := t0.Add(time.Duration(i) * 200 * time.Millisecond)
		if free == 0 {
			t.Fatalf("route %d found the pool empty", i)
		}
		free--
		d.Record(k, 1, now)
		if d.Low(k, free, now, lead) {
			refills++
			if firstRefill < 0 {
				firstRefill = i
			}
			free = d.Size(k, now) // the reload renames the claimed spares and refills
		}
	}
	if refills != 1 || firstRefill > 10 {
		t.Fatalf("%d refills (the first at route %d), want 1 within the base pool", refills, firstRefill)
	}
	end := t0.Add(20 * time.Second)
	if got := d.Size(k, end); got < 100 || got > plan.DefaultDemandMax {
		t.Fatalf("size after the burst %d", got)
	}
	// No claims: no refill, and after Idle the next reload shrinks the pool back.
	if d.Low(k, 0, end.Add(plan.DefaultDemandWindow+time.Second), lead) {
		t.Fatal("a pool nobody claims from is low")
	}
	if got := d.Size(k, end.Add(plan.DefaultDemandIdle+time.Second)); got != 10 {
		t.Fatalf("size after idle %d, want the base 10", got)
	}
	// A pool at its size is not low, however long a refill would take (no refill that adds nothing).
	burst := end.Add(-time.Second)
	if size := d.Size(k, burst); d.Low(k, size, burst, time.Hour) || !d.Low(k, size-1, burst, time.Hour) {
		t.Fatal("Low does not follow the pool size")
	}
	// Other pools are not touched.
	if got := d.Size(plan.PoolKey{Kind: model.KindEdge, Balance: "random"}, end); got != 10 {
		t.Fatalf("an unclaimed pool grew to %d", got)
	}
	// Growth is capped.
	for i := range 5000 {
		d.Record(k, 1, end.Add(time.Duration(i)*time.Millisecond))
	}
	if got := d.Size(k, end.Add(5*time.Second)); got != plan.DefaultDemandMax {
		t.Fatalf("size under a flood %d, want the cap %d", got, plan.DefaultDemandMax)
	}
}

// TestComputeRefill: with Refill, a pool below its size makes a PoolRefill reload whose Next has the
// sizes asked for; without it, nothing but the change.
func TestComputeRefill(t *testing.T) {
	in := baseInput(loadCerts(t))
	opts := testOptions(2)
	d := translate(t, in, opts)
	applied := plan.WithPool(d)
	http := plan.PoolKey{Kind: model.KindHTTP, Balance: "random"}
	sizes := plan.PoolSizes(func(k plan.PoolKey) int {
		if k == http {
			return 5
		}
		return 0
	})
	if p := plan.ComputeWith(applied, d, plan.Options{PoolSizes: sizes}); p.NeedsReload() || len(p.Ops) != 0 {
		t.Fatalf("without Refill: %v %v", p.Structural, p.Ops)
	}
	p := plan.ComputeWith(applied, d, plan.Options{PoolSizes: sizes, Refill: true})
	if len(p.Structural) != 1 || p.Structural[0].Kind != plan.PoolRefill || p.Structural[0].Subject != "http/random" {
		t.Fatalf("reasons %v", p.Structural)
	}
	if free := plan.FreeSpares(p.Next); free[http] != 5 || free[plan.PoolKey{Kind: model.KindEdge, Balance: "random"}] != 2 {
		t.Fatalf("free spares after the refill %v", free)
	}
	if again := plan.ComputeWith(p.Next, d, plan.Options{PoolSizes: sizes, Refill: true}); again.NeedsReload() || len(again.Ops) != 0 {
		t.Fatalf("a full pool refills again: %v", again.Structural)
	}
}
