package oracle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
)

// Driver drives HAProxy A the way `haroute run` does, kept small: translate, plan against what runs,
// render, then either a reload (the first step starts HAProxy instead) or write-through files plus
// runtime operations. Deletions HAProxy defers (connections still attached) are retried at the next
// step.
type Driver struct {
	t       testing.TB
	Opts    mapping.Options
	Dir     string
	HAProxy *testbed.HAProxy
	Admin   *socket.Admin
	Master  *socket.Master
	// Reloader reloads A; nil until A runs.
	Reloader *reload.Reloader
	// Applied is what A runs (the last plan's Next); nil before the first step.
	Applied *model.Config
	Paths   render.RuntimePaths
	// Deferred are the deletions HAProxy refused for now, by "backend/server".
	Deferred map[string]plan.DelServer

	defaultCertPEM []byte
}

// NewDriver returns a driver for an HAProxy that the first Step starts in a new directory.
func NewDriver(t testing.TB, opts mapping.Options, defaultCertPEM []byte) *Driver {
	return &Driver{t: t, Opts: opts, Dir: testbed.TempDir(t), Deferred: map[string]plan.DelServer{}, defaultCertPEM: defaultCertPEM}
}

// StepResult is what one driver step did.
type StepResult struct {
	Desired  *model.Config
	Problems []mapping.Problem
	Plan     plan.Plan
	// Started is true for the step that started HAProxy (the Initial plan).
	Started bool
	// Reloads is the master's reload counter before and after the step (after start for the first).
	ReloadsBefore, ReloadsAfter int
	// Ops counts the ops applied per type; Deferred the deletions left for later (this step's and
	// retried ones still refused); Retried the earlier deferred deletions that went through.
	Ops      map[string]int
	Deferred int
	Retried  int
	// ApplyErr is the runtime path's error (the test fails on it).
	ApplyErr error
	Duration time.Duration
}

// Step brings A to the translation of in. An error means the step could not be carried out.
func (d *Driver) Step(ctx context.Context, in mapping.Input) (StepResult, error) {
	start := time.Now()
	var res StepResult
	res.Desired, res.Problems = mapping.Translate(in, d.Opts)
	if err := res.Desired.Validate(); err != nil {
		return res, fmt.Errorf("translate gave an invalid config: %w", err)
	}
	res.Plan = plan.Compute(d.Applied, res.Desired)
	next := res.Plan.Next
	if err := next.Validate(); err != nil {
		return res, fmt.Errorf("plan.Next is invalid: %w", err)
	}
	files, err := render.Render(next, render.Options{Dir: d.Dir, DefaultCertificatePEM: d.defaultCertPEM})
	if err != nil {
		return res, fmt.Errorf("render plan.Next: %w", err)
	}
	paths, err := render.PathsFor(next, d.Dir)
	if err != nil {
		return res, fmt.Errorf("runtime paths: %w", err)
	}

	if d.HAProxy == nil {
		if !res.Plan.NeedsReload() {
			return res, errors.New("the first plan is not structural")
		}
		d.HAProxy = testbed.StartHAProxy(d.t, d.Dir, files)
		d.Admin = socket.NewAdmin(d.HAProxy.AdminSocket, socket.Options{})
		d.Master = socket.NewMaster(d.HAProxy.MasterSocket, socket.Options{})
		d.Reloader = reload.New(testbed.HAProxyBinary, d.Dir, d.Master)
		d.Reloader.MinInterval = 0
		res.Started = true
		if res.ReloadsAfter, err = d.Reloads(ctx); err != nil {
			return res, err
		}
		res.ReloadsBefore = res.ReloadsAfter
		d.Applied, d.Paths = next, paths
		res.Duration = time.Since(start)
		return res, nil
	}

	if res.ReloadsBefore, err = d.Reloads(ctx); err != nil {
		return res, err
	}
	if res.Plan.NeedsReload() {
		if _, err := d.Reloader.Reload(ctx, files); err != nil {
			return res, fmt.Errorf("reload: %w", err)
		}
		// A reload drops every runtime change: the new worker has exactly the files.
		clear(d.Deferred)
	} else {
		res.ApplyErr = d.applyRuntime(ctx, files, next, paths, &res)
	}
	// Applied follows the plan even when an apply failed: the files are the target and the test
	// fails on the error anyway.
	d.Applied, d.Paths = next, paths
	if res.ReloadsAfter, err = d.Reloads(ctx); err != nil {
		return res, err
	}
	res.Deferred = len(d.Deferred)
	res.Duration = time.Since(start)
	return res, nil
}

// applyRuntime writes the files through and applies the plan's ops while holding off reloads, after
// retrying the deletions HAProxy deferred before.
func (d *Driver) applyRuntime(ctx context.Context, files []render.File, next *model.Config, paths render.RuntimePaths, res *StepResult) error {
	release := d.Reloader.HoldOps()
	defer release()
	if err := reload.WriteFiles(d.Dir, files); err != nil {
		return fmt.Errorf("write files: %w", err)
	}
	if len(d.Deferred) > 0 {
		var retry []plan.Op
		for _, key := range sortedKeys(d.Deferred) {
			retry = append(retry, d.Deferred[key])
		}
		clear(d.Deferred)
		r, err := apply.Apply(ctx, d.Admin, next, paths, d.Dir, retry)
		res.Retried = r.Applied
		d.postpone(r.Deferred)
		if err != nil {
			return fmt.Errorf("retry deferred deletions: %w", err)
		}
	}
	r, err := apply.Apply(ctx, d.Admin, next, paths, d.Dir, res.Plan.Ops)
	res.Ops = r.Counts
	d.postpone(r.Deferred)
	return err
}

// postpone records deletions HAProxy refused for now.
func (d *Driver) postpone(ops []plan.DelServer) {
	for _, op := range ops {
		d.Deferred[ServerKey(op.Backend, op.Server)] = op
	}
}

// DeferredKeys returns the deferred deletions as a set of "backend/server".
func (d *Driver) DeferredKeys() map[string]bool {
	out := map[string]bool{}
	for k := range d.Deferred {
		out[k] = true
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
