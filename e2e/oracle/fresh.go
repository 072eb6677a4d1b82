package oracle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/observe"
	"github.com/haroute/haroute/runtime/socket"
)

// freshStopChecksTimeout bounds stopping B's dormant checks.
const freshStopChecksTimeout = 10 * time.Second

// Fresh is HAProxy B of one step: started from the rendered files of plan.WithPool(desired), on
// ports of its own, in a directory of its own. It is stopped when t's cleanups run (a Scope).
type Fresh struct {
	HAProxy *testbed.HAProxy
	// Desired is the translation with B's ports; Config is plan.WithPool(Desired), what B runs.
	Desired, Config *model.Config
	Paths           render.RuntimePaths
	Admin           *socket.Admin
	Client          *testkit.Client
}

// StartFresh translates in with opts on new free ports and starts B.
func StartFresh(t testing.TB, in mapping.Input, opts mapping.Options, defaultCertPEM []byte) (*Fresh, error) {
	ports := testkit.ListenPorts(t, 2)
	opts.HTTPPort, opts.HTTPSPort = ports[0], ports[1]
	desired, _ := mapping.Translate(in, opts)
	cfg := plan.WithPool(desired)
	dir := testkit.TempDir(t)
	files, err := render.Render(cfg, render.Options{Dir: dir, DefaultCertificatePEM: defaultCertPEM})
	if err != nil {
		return nil, fmt.Errorf("render B: %w", err)
	}
	paths, err := render.PathsFor(cfg, dir)
	if err != nil {
		return nil, fmt.Errorf("runtime paths of B: %w", err)
	}
	h := testbed.StartHAProxy(t, dir, files)
	f := &Fresh{
		HAProxy: h,
		Desired: desired,
		Config:  cfg,
		Paths:   paths,
		Admin:   socket.NewAdmin(h.AdminSocket, socket.Options{}),
		Client:  testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, nil),
	}
	// A reload is followed by stopping the checks of single-endpoint backends.
	ctx, cancel := context.WithTimeout(context.Background(), freshStopChecksTimeout)
	defer cancel()
	if err := haproxy.StopDormantChecks(ctx, f.Admin, cfg, dir); err != nil {
		return nil, fmt.Errorf("start B: %w", err)
	}
	return f, nil
}

// Observe returns B's live state.
func (f *Fresh) Observe(ctx context.Context) (*model.Config, error) {
	return observe.Observe(ctx, f.Admin, f.Config, f.Paths)
}
