package haproxy_test

import (
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
)

// startInstance writes the initial configuration of desired into dir through a new Instance and
// starts the test HAProxy on it, the way `haroute run` starts one.
func startInstance(t testing.TB, dir string, ro render.Options, desired *model.Config) (*haproxy.Instance, *testbed.HAProxy) {
	t.Helper()
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: ro, Binary: testkit.HAProxyBinary()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.WriteInitial(desired); err != nil {
		t.Fatal(err)
	}
	return inst, testbed.Start(t, dir)
}
