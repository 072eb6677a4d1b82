// Package observe reads what a running HAProxy really serves — servers, map entries, certificates,
// the crt-list, CA files — into a model.Config, compares it with the applied state (typed Drift), and
// plans the runtime operations that repair the difference. It is the check behind `haroute state`,
// `haroute diff` and the controller's periodic drift repair.
package observe

import (
	"context"
	"errors"
	"fmt"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// ErrStructuralDrift reports that HAProxy lacks a backend or map file of the applied state, which no
// runtime command can create: a reload is needed.
var ErrStructuralDrift = errors.New("structural drift: a reload is needed")

// Observe returns the live state of the HAProxy behind r as a model: a copy of applied in which, for
// every backend, the servers are the ones HAProxy reports (name, address, port, user weight, admin
// state), every map holds its live entries (sorted by key; a key HAProxy holds twice appears twice),
// the certificates are those of the live crt-list (with its SNI filters and ALPN; a live certificate
// whose SHA-1 differs from the applied PEM's leaf gets a marker instead of its PEM), and the CA files
// that servers use are those HAProxy has loaded (a marker replaces the PEM when the number of
// certificates differs). What HAProxy does not show (settings, frontends, backend options, the
// service and verified host of a known server) is copied from applied. paths are the runtime paths of
// the applied render (render.PathsFor).
//
// A backend or map file of applied that HAProxy does not know gives an error wrapping
// ErrStructuralDrift.
func Observe(ctx context.Context, r socket.Runner, applied *model.Config, paths render.RuntimePaths) (*model.Config, error) {
	if applied == nil {
		return nil, errors.New("observe: nil applied config")
	}
	obs := applied.Clone()
	if err := observeServers(ctx, r, obs); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	if err := observeMaps(ctx, r, obs, paths); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	if err := observeCertificates(ctx, r, obs, paths); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	if err := observeCAFiles(ctx, r, obs, paths); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	if err := observeListener(ctx, r, obs, paths); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	return obs, nil
}

// Repair returns the runtime operations that bring the observed HAProxy back to applied:
// plan.Diff(observed, applied). Observed must come from Observe on applied (same backends and map
// files); apply the operations while holding the reloader's ops (reload.Reloader.HoldOps).
func Repair(applied, observed *model.Config) ([]plan.Op, error) {
	ops, err := plan.Diff(observed, applied)
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	return ops, nil
}
