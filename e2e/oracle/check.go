package oracle

import (
	"context"
	"fmt"
	"strings"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/runtime/observe"
)

// StepCheck is the oracle's verdict on one step.
type StepCheck struct {
	// ViewDiffs: A's and B's observed states differ per Route (or one of them is inconsistent).
	ViewDiffs []string
	// DriftA: A's observed state differs from what the driver believes it applied; DriftB: B's from
	// the files it was started with.
	DriftA, DriftB []string
	// Mismatches: A and B answered a request differently.
	Mismatches []Exchange
	// Unserved: B did not serve a Route's own URL from the Route although it should.
	Unserved []Exchange
	// Feel: what a user would notice that the answers do not show (load spread, connection reuse,
	// cookies, stickiness, the backend name a Route is served under); see Feel.
	Feel     []string
	Requests int
}

// Failed reports whether the step broke equivalence.
func (c StepCheck) Failed() bool {
	return len(c.ViewDiffs)+len(c.DriftA)+len(c.DriftB)+len(c.Mismatches)+len(c.Unserved)+len(c.Feel) > 0
}

// Describe formats the first limit differences of each kind.
func (c StepCheck) Describe(limit int) string {
	var b strings.Builder
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s (%d):\n", title, len(lines))
		for i, l := range lines {
			if i == limit {
				fmt.Fprintf(&b, "  ... %d more\n", len(lines)-limit)
				break
			}
			b.WriteString("  " + l + "\n")
		}
	}
	exchanges := func(xs []Exchange) []string {
		var out []string
		for _, x := range xs {
			out = append(out, fmt.Sprintf("GET %s (route %q): A %s; B %s", x.URL, x.Route, x.A, x.B))
		}
		return out
	}
	section("observed state A vs B", c.ViewDiffs)
	section("drift of A from its applied state", c.DriftA)
	section("drift of B from its files", c.DriftB)
	section("different answers", exchanges(c.Mismatches))
	section("routes B does not serve", exchanges(c.Unserved))
	section("what users feel", c.Feel)
	return b.String()
}

// CheckStep compares A (driven by d, reached through clientA) with B after a step: observed states
// per Route, each against its own applied state, the answers to the corpus of B's desired state and,
// with feel, what users feel (mutated names the Route the step changed). owners maps backend names to
// Routes for this step.
func CheckStep(ctx context.Context, d *Driver, clientA *testkit.Client, b *Fresh, owners map[string]string, workers int, feel *Feel, mutated string) (StepCheck, error) {
	var c StepCheck
	obsA, err := observe.Observe(ctx, d.Admin, d.Applied, d.Paths)
	if err != nil {
		return c, fmt.Errorf("observe A: %w", err)
	}
	obsB, err := b.Observe(ctx)
	if err != nil {
		return c, fmt.Errorf("observe B: %w", err)
	}
	skip := d.DeferredKeys()
	c.ViewDiffs = DiffViews(NewView(obsA, skip), NewView(obsB, nil))
	for _, dr := range observe.Compare(d.Applied, obsA) {
		if dr.Kind == observe.ExtraServer && skip[dr.Subject] {
			continue
		}
		c.DriftA = append(c.DriftA, dr.String())
	}
	for _, dr := range observe.Compare(b.Config, obsB) {
		c.DriftB = append(c.DriftB, dr.String())
	}
	// B's connections are all new; A's must be too, or a kept-alive TLS connection would show the
	// certificate of an earlier step.
	clientA.CloseIdleConnections()
	corpus := BuildCorpus(b.Desired)
	xs := AskBoth(clientA, b.Client, corpus, owners, workers)
	c.Requests = 2 * len(xs)
	c.Mismatches = Mismatches(xs)
	c.Unserved = Unserved(xs, b.Desired)
	if feel != nil {
		before := feel.Stats.Requests + feel.Stats.StickyChecks
		if c.Feel, err = feel.Check(ctx, d, clientA, b, xs, mutated); err != nil {
			return c, fmt.Errorf("probes: %w", err)
		}
		c.Requests += feel.Stats.Requests + feel.Stats.StickyChecks - before
	}
	return c, nil
}
