package plan

import (
	"math"
	"time"
)

// Defaults of a Demand.
const (
	// DefaultDemandWindow is how far back claims count towards the rate.
	DefaultDemandWindow = 30 * time.Second
	// DefaultDemandHorizon is how much demand, at the current rate, a grown pool covers.
	DefaultDemandHorizon = 30 * time.Second
	// DefaultDemandIdle is how long a grown pool waits without a claim before a reload shrinks it back
	// to its base size (it never reloads for that alone).
	DefaultDemandIdle = 10 * time.Minute
	// DefaultDemandMax caps one pool. A spare backend costs HAProxy about 10 kB of memory (measured
	// with the default template on 2.6.12: 800 spares, 8.3 MB), so a full pool of 250 costs 2.5 MB.
	DefaultDemandMax = 250
)

// Demand sizes the spare pools from how fast new Routes claim spares, so that a burst of new Routes
// finds spares (no reload each) without keeping a large pool in memory the rest of the time. The
// caller records the claims its runtime plans make (Record) and, after each update, asks whether a
// pool runs low for the rate it sees (Low) — then it asks for a refill (Options.Refill) — and gives
// every plan the sizes of Sizes. A grown pool stays grown while claims keep coming and shrinks back to
// Base at the first reload after Idle without one. Demand holds no clock: every time comes from the caller. The
// zero durations take the defaults above.
type Demand struct {
	// Base is the smallest pool size (Settings.SparePoolSize).
	Base int
	// Window, Horizon, Idle and Max: see the defaults.
	Window, Horizon, Idle time.Duration
	Max                   int

	claims map[PoolKey][]claim
	grown  map[PoolKey]claim // the largest size the rate called for, and when
}

// claim is n spares of one pool claimed at a time (or, in Demand.grown, a size reached at a time).
type claim struct {
	at time.Time
	n  int
}

// NewDemand returns a Demand with the default timing over pools of base spares.
func NewDemand(base int) *Demand {
	return &Demand{Base: base}
}

func (d *Demand) window() time.Duration  { return orDefault(d.Window, DefaultDemandWindow) }
func (d *Demand) horizon() time.Duration { return orDefault(d.Horizon, DefaultDemandHorizon) }
func (d *Demand) idle() time.Duration    { return orDefault(d.Idle, DefaultDemandIdle) }

func (d *Demand) max() int {
	if d.Max > 0 {
		return max(d.Max, d.Base)
	}
	return max(DefaultDemandMax, d.Base)
}

func orDefault(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// Record notes that n spares of pool k were claimed at at, and grows the size the next reload gives
// k when the rate calls for more. A growth lasts while claims keep coming, and lapses after Idle.
func (d *Demand) Record(k PoolKey, n int, at time.Time) {
	if n <= 0 {
		return
	}
	if d.claims == nil {
		d.claims, d.grown = map[PoolKey][]claim{}, map[PoolKey]claim{}
	}
	d.claims[k] = append(d.prune(k, at), claim{at: at, n: n})
	want := min(d.max(), int(math.Ceil(d.Rate(k, at)*d.horizon().Seconds())))
	g := d.grown[k]
	if at.Sub(g.at) > d.idle() {
		g.n = 0
	}
	d.grown[k] = claim{at: at, n: max(g.n, want)}
}

// prune drops the claims of k older than the window before now and returns the rest.
func (d *Demand) prune(k PoolKey, now time.Time) []claim {
	cs := d.claims[k]
	i := 0
	for i < len(cs) && now.Sub(cs[i].at) > d.window() {
		i++
	}
	return cs[i:]
}

// Rate returns the claims per second of pool k over the window before now, counted from the first
// claim in it (at least one second): a burst shows its own rate rather than one spread over the
// whole window.
func (d *Demand) Rate(k PoolKey, now time.Time) float64 {
	cs := d.prune(k, now)
	if len(cs) == 0 {
		return 0
	}
	total := 0
	for _, c := range cs {
		total += c.n
	}
	span := max(now.Sub(cs[0].at), time.Second)
	return float64(total) / span.Seconds()
}

// Size returns the free spares the next reload should give pool k: Base, or more while new Routes
// keep claiming spares of k (enough for Horizon at the rate seen, at most Max).
func (d *Demand) Size(k PoolKey, now time.Time) int {
	g, ok := d.grown[k]
	if !ok || now.Sub(g.at) > d.idle() {
		return d.Base
	}
	return max(d.Base, g.n)
}

// Sizes returns the pool sizes for a reload at now.
func (d *Demand) Sizes(now time.Time) PoolSizes {
	return func(k PoolKey) int { return d.Size(k, now) }
}

// Low reports whether pool k, with free spares left, runs out before a refill can land at the rate
// of claims seen: lead is how long a refill takes (the time until a reload may be sent, plus the
// reload itself). A pool nobody claims from is never low: it refills at the next reload there is
// anyway, or when a new Route finds it empty (PoolExhausted). Nor is a pool that a refill would not
// grow (free already at Size), however long a reload takes.
func (d *Demand) Low(k PoolKey, free int, now time.Time, lead time.Duration) bool {
	rate := d.Rate(k, now)
	return rate > 0 && float64(free) < rate*lead.Seconds()+1 && free < d.Size(k, now)
}
