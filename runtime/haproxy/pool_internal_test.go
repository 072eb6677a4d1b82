package haproxy

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// TestFreeSparesFollowsChanges: the free spares counted from the last state by pointer differences
// are plan.FreeSpares of every state, whatever changes between states.
func TestFreeSparesFollowsChanges(t *testing.T) {
	desired := &model.Config{Settings: model.Settings{SparePoolSize: 3, LoadBalanceAlgorithm: "random"}}
	for _, n := range []string{"a", "b", "c"} {
		desired.Backends = append(desired.Backends, &model.Backend{Name: "be_http:ns:" + n, Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", Route: "ns/" + n})
	}
	state := plan.WithPool(desired)
	var i Instance
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 200 {
		next := *state
		next.Backends = slices.Clone(state.Backends)
		k := rng.IntN(len(next.Backends))
		b := *next.Backends[k]
		switch rng.IntN(4) {
		case 0: // a spare claimed or released
			if b.Spare {
				if b.Route == "" {
					b.Route = "ns/new"
				} else {
					b.Route = ""
				}
			}
		case 1: // another change of any backend
			b.Servers = []model.Server{{Name: "s", ID: 1}}
		case 2: // a backend more (a reload)
			next.Backends = append(next.Backends, &model.Backend{Name: "zz", Spare: rng.IntN(2) == 0, Kind: model.KindEdge, Balance: "random"})
		case 3: // nothing
		}
		next.Backends[k] = &b
		got, want := i.freeSpares(&next), plan.FreeSpares(&next)
		if !maps.Equal(got, want) {
			t.Fatalf("step %d: free spares %v, want %v", step, got, want)
		}
		got[plan.PoolKey{Kind: model.KindHTTP, Balance: "random"}] += 100 // the caller's copy
		state = &next
	}
}
