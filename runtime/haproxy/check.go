package haproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
)

// ErrNoCheck is returned by Check when the Instance has no HAProxy binary to check with (a sidecar
// without a local haproxy, --check-binary=none): only the master's reload can then tell.
var ErrNoCheck = errors.New("no haproxy binary to check a configuration with")

// checkDir is the scratch directory, under the HAProxy directory, where Check renders a state.
const checkDir = ".check"

// Check tells whether HAProxy would start from desired: it renders desired as a fresh start writes it
// (InitialFiles, the spare pool included) into a scratch directory under the HAProxy directory, runs
// `haproxy -c` on it and removes it. nil: HAProxy accepts it. A refusal returns a *reload.CheckError
// (wrapping reload.ErrInvalidConfig) and the Routes HAProxy's message names (none when it names none).
// Check touches neither the files HAProxy runs nor the applied state.
func (i *Instance) Check(ctx context.Context, desired *model.Config) ([]Refused, error) {
	if i.cfg.Binary == "" {
		return nil, ErrNoCheck
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if desired == nil {
		return nil, fmt.Errorf("check: no desired state")
	}
	scratch := filepath.Join(i.cfg.Dir, checkDir)
	if err := os.RemoveAll(scratch); err != nil {
		return nil, fmt.Errorf("check: clear %s: %w", scratch, err)
	}
	defer func() {
		if err := os.RemoveAll(scratch); err != nil {
			i.cfg.Log.Warn("removing the check directory", "dir", scratch, "error", err)
		}
	}()
	ro := i.cfg.Render
	ro.Dir = scratch
	first := i.initialPlan(desired)
	files, err := render.Render(first, ro)
	if err != nil {
		return nil, fmt.Errorf("check: render: %w", err)
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	files = realSockets(files, scratch, i.cfg.Dir)
	if err := reload.WriteFiles(scratch, files); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	err = reload.Check(ctx, i.cfg.Binary, scratch)
	var refused *reload.CheckError
	if errors.As(err, &refused) {
		return blame(refused.Output, files, first), err
	}
	return nil, err
}

// RefusalText returns HAProxy's output when err is a configuration HAProxy refused (Check, or an
// Update whose `haproxy -c` failed), and false for any other error.
func RefusalText(err error) (string, bool) {
	var refused *reload.CheckError
	if errors.As(err, &refused) {
		return refused.Output, true
	}
	return "", false
}

// realSockets points the configuration's UNIX sockets, rendered under scratch, back to the HAProxy
// directory dir: HAProxy refuses a socket path longer than 97 bytes while it parses (even with -c,
// which binds nothing), and the scratch directory's longer prefix must not make it refuse a
// configuration it would take from dir.
func realSockets(files []render.File, scratch, dir string) []render.File {
	from, to := scratch+"/run/", dir+"/run/"
	out := slices.Clone(files)
	for k, f := range out {
		if f.Path == layout.Config {
			out[k].Data = bytes.ReplaceAll(f.Data, []byte(from), []byte(to))
		}
	}
	return out
}
