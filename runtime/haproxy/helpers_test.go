package haproxy_test

import (
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
)

// startInstance writes the initial configuration of desired into dir through a new Instance (tuned
// by tune, when not nil) and starts the test HAProxy on it, the way `haroute run` starts one.
func startInstance(t testing.TB, dir string, ro render.Options, desired *model.Config, tune func(*haproxy.Config)) (*haproxy.Instance, haproxy.Initial, *testbed.HAProxy) {
	t.Helper()
	c := haproxy.Config{Dir: dir, Render: ro, Binary: testbed.HAProxyBinary()}
	if tune != nil {
		tune(&c)
	}
	inst, err := haproxy.New(c)
	if err != nil {
		t.Fatal(err)
	}
	first, err := inst.WriteInitial(desired)
	if err != nil {
		t.Fatal(err)
	}
	return inst, first, testbed.Start(t, dir)
}
