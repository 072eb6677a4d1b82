package haproxy

import (
	"context"
	"fmt"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/apply"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
)

// adoptProbeTimeout bounds the probe that tells whether an HAProxy already runs.
const adoptProbeTimeout = time.Second

// Initial is a first configuration: the state HAProxy runs once it starts from Files.
type Initial struct {
	// State is the initial plan's Next: the desired state with its spare pool.
	State *model.Config
	// Files are State rendered for the Instance's directory, sorted by path.
	Files []render.File
}

// InitialFiles plans and renders the first configuration for desired (a Translate result): the plan
// from nothing (Initial), with the spare pool sized as an Update's reload would size it. It reads
// and writes nothing; `haroute render`, `haroute run --once` and `haroute run` all start from it, so
// they write the same files.
func (i *Instance) InitialFiles(desired *model.Config) (Initial, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.initialFiles(desired)
}

func (i *Instance) initialFiles(desired *model.Config) (Initial, error) {
	if desired == nil {
		return Initial{}, fmt.Errorf("initial configuration: no desired state")
	}
	next := i.initialPlan(desired)
	files, _, err := i.render(next)
	if err != nil {
		return Initial{}, fmt.Errorf("render the initial configuration: %w", err)
	}
	return Initial{State: next, Files: files}, nil
}

// initialPlan is the state HAProxy runs after a start from nothing for desired: the plan from nothing
// (Initial), its spare pool sized as an Update's reload would size it.
func (i *Instance) initialPlan(desired *model.Config) *model.Config {
	return plan.ComputeWith(nil, desired, i.planOptions(desired, i.now(), false)).Next
}

// WriteInitial writes the first configuration for desired (InitialFiles) into the directory, from
// which HAProxy starts, and records it as the state HAProxy runs — unless Adopt found an HAProxy
// that already ran. That one runs the files on disk, and they stay: the first Update reloads it with
// the new files, and if HAProxy refuses them (a sidecar without a binary learns it only from the
// master) the files it runs are the ones put back, so a restart of HAProxy still starts.
func (i *Instance) WriteInitial(desired *model.Config) (Initial, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	first, err := i.initialFiles(desired)
	if err != nil {
		return Initial{}, err
	}
	if i.adopted {
		return first, nil
	}
	if err := reload.WriteFiles(i.cfg.Dir, first.Files); err != nil {
		i.writer.Forget()
		return Initial{}, fmt.Errorf("write the initial configuration: %w", err)
	}
	i.writer.Known(first.Files)
	masks, err := i.renderer.Masks() // of first: initialFiles rendered it last
	if err != nil {
		return Initial{}, fmt.Errorf("render: %w", err)
	}
	// HAProxy starts every configured check: the first Update stops the ones first.State has off.
	i.applied, i.appliedMasks = plan.AsStarted(first.State), masks
	return first, nil
}

// StopDormantChecks stops, through r, the health checks HAProxy started from the files of state
// but state has off (plan.DormantChecks): what follows every start and reload from those files.
// dir is the HAProxy directory the files were rendered for.
func StopDormantChecks(ctx context.Context, r socket.Runner, state *model.Config, dir string) error {
	ops := plan.DormantChecks(state)
	if len(ops) == 0 {
		return nil
	}
	paths, err := render.PathsFor(state, dir)
	if err != nil {
		return fmt.Errorf("stop dormant checks: runtime paths: %w", err)
	}
	if _, err := apply.Apply(ctx, r, state, paths, dir, ops); err != nil {
		return fmt.Errorf("stop dormant checks: %w", err)
	}
	return nil
}

// Adopt tells whether an HAProxy already answers on the master socket (sidecar mode, before
// WriteInitial: haroute restarted next to a running HAProxy). Such an HAProxy runs files written
// before, so the Instance records nothing at WriteInitial and the first Update reloads it (Initial).
// An HAProxy that does not answer within a second is taken as not running.
func (i *Instance) Adopt(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, adoptProbeTimeout)
	defer cancel()
	probe := socket.NewMaster(i.cfg.MasterSocket, socket.Options{RetryFor: -1, Timeout: adoptProbeTimeout})
	if _, err := probe.ShowProc(ctx); err != nil {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.adopted = true
	i.forget(plan.Reason{Kind: plan.Initial, Detail: "HAProxy was running before haroute wrote its files"})
	return true
}
