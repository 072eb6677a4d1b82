package oracle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
	"github.com/haroute/haroute/sync/source"
)

// Driver drives HAProxy A the way `haroute run` does, through a runtime/haproxy Instance: the first
// step writes the initial configuration and starts HAProxy; every later step is an Update (plan,
// write-through render, runtime ops, or a validated reload for structural plans and as the fallback
// of a failed op).
type Driver struct {
	t       testing.TB
	Opts    mapping.Options
	Dir     string
	HAProxy *testbed.HAProxy
	Admin   *socket.Admin
	Master  *socket.Master
	// Updater is the Instance that keeps A in step; nil until A runs.
	Updater *haproxy.Instance
	// Applied is what A runs (the Instance's applied state); nil before the first step.
	Applied *model.Config
	Paths   render.RuntimePaths

	defaultCertPEM []byte
	// stable and tr give A's steps what the controller has: snapshots that keep unchanged objects'
	// pointers, translated incrementally (B translates afresh).
	stable source.Stable
	tr     *mapping.Translator
}

// NewDriver returns a driver for an HAProxy that the first Step starts in a new directory.
func NewDriver(t testing.TB, opts mapping.Options, defaultCertPEM []byte) *Driver {
	return &Driver{t: t, Opts: opts, Dir: testkit.TempDir(t), defaultCertPEM: defaultCertPEM, tr: mapping.NewTranslator(opts)}
}

// StepResult is what one driver step did.
type StepResult struct {
	Desired  *model.Config
	Problems []mapping.Problem
	Plan     plan.Plan
	// Reason is the one reason of the step's reload (zero when it reloaded nothing).
	Reason plan.Reason
	// Started is true for the step that started HAProxy (the Initial plan).
	Started bool
	// Reloads is the master's reload counter before and after the step (after start for the first).
	ReloadsBefore, ReloadsAfter int
	// Ops counts the ops applied per type; Deferred the deletions left for later (servers kept in
	// maint in the applied state); Retried the earlier deferred deletions that went through.
	Ops map[string]int
	// Delta: the Instance planned only what changed since the last step (plan.ComputeDelta).
	Delta    bool
	Deferred int
	Retried  int
	// ApplyErr is the runtime path's error (the Updater fell back to a reload; the test fails on it).
	ApplyErr error
	Duration time.Duration
}

// maxDrainPlans bounds the plans a step makes after its own while backends drain (plan.Draining).
const maxDrainPlans = 4

// Step brings A to the translation of in. An error means the step could not be carried out.
func (d *Driver) Step(ctx context.Context, in mapping.Input) (StepResult, error) {
	start := time.Now()
	var res StepResult
	res.Desired, res.Problems = d.tr.Translate(d.stable.Input(in))
	if err := res.Desired.Validate(); err != nil {
		return res, fmt.Errorf("translate gave an invalid config: %w", err)
	}
	if d.HAProxy == nil {
		return d.start(ctx, res, start)
	}
	before := d.DeferredKeys()
	var err error
	if res.ReloadsBefore, err = d.Reloads(ctx); err != nil {
		return res, err
	}
	out, err := d.Updater.Update(ctx, res.Desired)
	res.Plan, res.Reason, res.Ops, res.ApplyErr, res.Delta = out.Plan, out.Reason, out.Result.Counts, out.Fallback, out.Delta
	if err != nil {
		return res, fmt.Errorf("update: %w", err)
	}
	if err := d.setApplied(); err != nil {
		return res, err
	}
	// Backends that lost their Route keep their servers until the next plan (plan.Draining), which
	// `haroute run` makes soon after: so does the step, before A is compared with a fresh B. On
	// HAProxy 3.4 a profile hand-over takes up to three such plans (the old backend deleted, the
	// Route's own added back, the hand-over backend deleted).
	for range maxDrainPlans {
		if out.Plan.NeedsReload() {
			break
		}
		draining := plan.Draining(d.Applied)
		if len(draining) == 0 {
			break
		}
		again, err := d.Updater.Update(ctx, res.Desired)
		if err != nil {
			return res, fmt.Errorf("update after %v drained: %w", draining, err)
		}
		if again.Plan.NeedsReload() || again.Fallback != nil {
			return res, fmt.Errorf("removing the servers of %v: reload %v, fallback %v", draining, again.Plan.Structural, again.Fallback)
		}
		if res.Ops == nil {
			res.Ops = map[string]int{}
		}
		for k, n := range again.Result.Counts {
			res.Ops[k] += n
		}
		if err := d.setApplied(); err != nil {
			return res, err
		}
	}
	after := d.DeferredKeys()
	for k := range before {
		if !after[k] {
			res.Retried++
		}
	}
	res.Deferred = len(after)
	if res.ReloadsAfter, err = d.Reloads(ctx); err != nil {
		return res, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// start writes the initial configuration through a new Instance (as `haroute run` does), starts A
// from it and keeps the Instance for the later steps.
func (d *Driver) start(ctx context.Context, res StepResult, began time.Time) (StepResult, error) {
	inst, err := haproxy.New(haproxy.Config{
		Dir:    d.Dir,
		Render: render.Options{DefaultCertificatePEM: d.defaultCertPEM},
		Binary: testkit.HAProxyBinary(),
	})
	if err != nil {
		return res, err
	}
	first, err := inst.WriteInitial(res.Desired)
	if err != nil {
		return res, fmt.Errorf("the initial configuration: %w", err)
	}
	res.Plan = plan.Plan{Next: first.State, Structural: []plan.Reason{{Kind: plan.Initial}}}
	d.HAProxy = testbed.Start(d.t, d.Dir)
	d.Admin = socket.NewAdmin(d.HAProxy.AdminSocket, socket.Options{})
	d.Master = socket.NewMaster(d.HAProxy.MasterSocket, socket.Options{})
	d.Updater = inst
	// `haroute run` syncs once HAProxy has started: that stops the checks HAProxy started but the
	// state has off, and is no reload.
	out, err := inst.Update(ctx, res.Desired)
	if err != nil {
		return res, fmt.Errorf("first sync: %w", err)
	}
	if out.Plan.NeedsReload() || out.Fallback != nil {
		return res, fmt.Errorf("first sync after the start: reload %v, fallback %v", out.Plan.Structural, out.Fallback)
	}
	if err := d.setApplied(); err != nil {
		return res, err
	}
	res.Started = true
	if res.ReloadsAfter, err = d.Reloads(ctx); err != nil {
		return res, err
	}
	res.ReloadsBefore = res.ReloadsAfter
	res.Duration = time.Since(began)
	return res, nil
}

// setApplied mirrors the Updater's applied state and its runtime paths.
func (d *Driver) setApplied() error {
	d.Applied = d.Updater.Applied()
	if d.Applied == nil {
		return errors.New("the Updater lost track of A's state")
	}
	paths, err := render.PathsFor(d.Applied, d.Dir)
	if err != nil {
		return fmt.Errorf("runtime paths: %w", err)
	}
	d.Paths = paths
	return nil
}

// DeferredKeys returns the deletions HAProxy deferred, as "backend/server": the servers the applied
// state keeps in maint (Translate never asks for maint, so only deferred deletions are).
func (d *Driver) DeferredKeys() map[string]bool {
	out := map[string]bool{}
	if d.Applied == nil {
		return out
	}
	for _, b := range d.Applied.Backends {
		for _, s := range b.Servers {
			if s.State == model.StateMaint {
				out[ServerKey(b.Name, s.Name)] = true
			}
		}
	}
	return out
}

// Reloads returns A's reload counter (the master's, from show proc).
func (d *Driver) Reloads(ctx context.Context) (int, error) {
	ps, err := d.Master.ShowProc(ctx)
	if err != nil {
		return 0, fmt.Errorf("show proc: %w", err)
	}
	return ps.Master.Reloads, nil
}

// DescribePlan formats a plan's reasons and ops for a failure message (at most maxOps ops).
func DescribePlan(p plan.Plan, maxOps int) string {
	var b strings.Builder
	if p.NeedsReload() {
		b.WriteString("structural:")
		for _, r := range p.Structural {
			b.WriteString("\n    " + r.String())
		}
		return b.String()
	}
	fmt.Fprintf(&b, "runtime, %d ops:", len(p.Ops))
	for i, op := range p.Ops {
		if i == maxOps {
			fmt.Fprintf(&b, "\n    ... %d more", len(p.Ops)-maxOps)
			break
		}
		b.WriteString("\n    " + op.String())
	}
	return b.String()
}
