package plan_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// TestComputeDeltaWalk walks the random world of TestRandomWalk and plans every step twice: with
// ComputeWith, and with ComputeDelta from the previous desired state, the desired state sharing
// what did not change with it (as mapping.Translator hands it on). Wherever ComputeDelta takes the
// step, both plans must be the same; and it must take most endpoint changes.
func TestComputeDeltaWalk(t *testing.T) {
	certs := loadCerts(t)
	for _, tc := range []struct {
		seed int64
		o    plan.Options
	}{
		{seed: 1},
		{seed: 2, o: plan.Options{ReloadEveryChange: true}},
		{seed: 3, o: plan.Options{Refill: true, PoolSizes: func(plan.PoolKey) int { return 2 }}},
		{seed: 4},
	} {
		t.Run(fmt.Sprintf("seed-%d", tc.seed), func(t *testing.T) {
			w := newWalkWorld(tc.seed, certs)
			base := translate(t, w.input(), w.opts)
			applied := plan.ComputeWith(nil, base, tc.o).Next
			taken := 0
			for i := 0; i < walkSteps; i++ {
				kind, _ := w.step(applied)
				d := shareWith(base, translate(t, w.input(), w.opts))
				full := plan.ComputeWith(applied, d, tc.o)
				var dirty map[string]bool
				for _, name := range plan.Draining(applied) {
					if dirty == nil {
						dirty = map[string]bool{}
					}
					dirty[name] = true
				}
				delta, ok := plan.ComputeDelta(applied, base, d, dirty, tc.o)
				if ok {
					taken++
					if !reflect.DeepEqual(delta.Structural, full.Structural) || !reflect.DeepEqual(delta.Ops, full.Ops) {
						t.Fatalf("step %d (%s): delta plan\n  reasons %v ops %v\nfull plan\n  reasons %v ops %v",
							i, kind, delta.Structural, delta.Ops, full.Structural, full.Ops)
					}
					if !reflect.DeepEqual(delta.Next, full.Next) {
						t.Fatalf("step %d (%s): the delta plan's Next differs from the full plan's", i, kind)
					}
				}
				applied, base = full.Next, d
			}
			t.Logf("seed %d: ComputeDelta took %d of %d steps", tc.seed, taken, walkSteps)
			if taken < walkSteps/10 {
				t.Errorf("ComputeDelta took only %d of %d steps: the walk does not exercise it", taken, walkSteps)
			}
		})
	}
}

// TestComputeDeltaDeclines: ComputeDelta leaves to ComputeWith what it cannot plan alone.
func TestComputeDeltaDeclines(t *testing.T) {
	certs := loadCerts(t)
	w := newWalkWorld(5, certs)
	base := translate(t, w.input(), w.opts)
	applied := plan.Compute(nil, base).Next
	for i := 0; i < 100 && len(base.Backends) < 3; i++ {
		w.step(applied)
		base = translate(t, w.input(), w.opts)
		applied = plan.Compute(nil, base).Next
	}
	if len(base.Backends) < 3 {
		t.Fatalf("the world has %d backends after 100 steps", len(base.Backends))
	}
	if _, ok := plan.ComputeDelta(applied, base, base, nil, plan.Options{}); !ok {
		t.Fatal("no change: ComputeDelta declined")
	}
	fresh := translate(t, w.input(), w.opts) // equal, but shares nothing
	if _, ok := plan.ComputeDelta(applied, base, fresh, nil, plan.Options{}); ok {
		t.Error("a desired state with other map lists: ComputeDelta took it")
	}
	for name, change := range map[string]func(c *model.Config){
		"settings": func(c *model.Config) { c.Settings.MaxConnections++ },
		"a backend less": func(c *model.Config) {
			c.Backends = slices.Clone(c.Backends[1:])
		},
		"options": func(c *model.Config) {
			c.Backends = slices.Clone(c.Backends)
			b := *c.Backends[0]
			b.Balance = "leastconn"
			c.Backends[0] = &b
		},
	} {
		c := *base
		change(&c)
		if _, ok := plan.ComputeDelta(applied, base, &c, nil, plan.Options{}); ok {
			t.Errorf("%s: ComputeDelta took it", name)
		}
	}
	if _, ok := plan.ComputeDelta(applied, base, base, map[string]bool{"gone": true}, plan.Options{}); ok {
		t.Error("a dirty backend desired lacks: ComputeDelta took it")
	}
	if _, ok := plan.ComputeDelta(nil, base, base, nil, plan.Options{}); ok {
		t.Error("unknown applied state: ComputeDelta took it")
	}
}

// shareWith returns d with every backend equal to prev's of the same name replaced by prev's, and
// every list equal to prev's replaced by prev's: what mapping.Translator returns.
func shareWith(prev, d *model.Config) *model.Config {
	out := *d
	out.Backends = slices.Clone(d.Backends)
	for j := range out.Backends {
		if p := prev.Backend(out.Backends[j].Name); p != nil && p.Equal(out.Backends[j]) {
			out.Backends[j] = p
		}
	}
	if reflect.DeepEqual(d.Maps, prev.Maps) {
		out.Maps = prev.Maps
	}
	if reflect.DeepEqual(d.Routes, prev.Routes) {
		out.Routes = prev.Routes
	}
	if reflect.DeepEqual(d.Certificates, prev.Certificates) {
		out.Certificates = prev.Certificates
	}
	if reflect.DeepEqual(d.CAFiles, prev.CAFiles) {
		out.CAFiles = prev.CAFiles
	}
	return &out
}
