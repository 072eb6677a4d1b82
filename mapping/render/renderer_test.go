package render

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// TestBlockCacheGivesTheSameFiles walks a seeded series of changes (server weights, states,
// additions and removals, backend options, backends added and removed, settings and CA files) and
// checks after every step that rendering with a cache kept across steps gives byte-identical files to
// rendering without one, and that unchanged backends are reused.
func TestBlockCacheGivesTheSameFiles(t *testing.T) {
	f := newFixture(t)
	opts := defaultOpts(f, t)
	cfg := f.model(t)
	cache := NewBlockCache()
	rng := rand.New(rand.NewPCG(7, 11))
	const steps = 200

	mutations := []struct {
		name string
		do   func(c *model.Config) bool
	}{
		{"weight", func(c *model.Config) bool {
			b := &c.Backends[rng.IntN(len(c.Backends))]
			if len(b.Servers) == 0 {
				return false
			}
			b.Servers[rng.IntN(len(b.Servers))].Weight = int32(rng.IntN(257))
			return true
		}},
		{"state", func(c *model.Config) bool {
			b := &c.Backends[rng.IntN(len(c.Backends))]
			if len(b.Servers) == 0 {
				return false
			}
			s := &b.Servers[rng.IntN(len(b.Servers))]
			if s.State == model.StateReady {
				s.State = model.StateMaint
			} else {
				s.State = model.StateReady
			}
			return true
		}},
		{"add server", func(c *model.Config) bool {
			b := &c.Backends[rng.IntN(len(c.Backends))]
			if b.Kind == model.KindReencrypt {
				return false // reencrypt servers need a verified host
			}
			addr := fmt.Sprintf("10.9.%d.%d", rng.IntN(256), 1+rng.IntN(254))
			b.Servers = append(b.Servers, model.Server{Name: "pod:x:svc:http:" + addr + ":8080", Addr: addr, Port: 8080, Weight: 1, State: model.StateReady})
			sortServers(b)
			return true
		}},
		{"remove server", func(c *model.Config) bool {
			b := &c.Backends[rng.IntN(len(c.Backends))]
			if len(b.Servers) == 0 {
				return false
			}
			i := rng.IntN(len(b.Servers))
			b.Servers = append(b.Servers[:i:i], b.Servers[i+1:]...)
			return true
		}},
		{"backend option", func(c *model.Config) bool {
			b := &c.Backends[rng.IntN(len(c.Backends))]
			b.TimeoutServer = fmt.Sprintf("%ds", 1+rng.IntN(90))
			return true
		}},
		{"settings", func(c *model.Config) bool {
			c.Settings.CheckInterval = fmt.Sprintf("%dms", 1000+rng.IntN(9000))
			return true
		}},
		{"retire backend", func(c *model.Config) bool {
			b := &c.Backends[rng.IntN(len(c.Backends))]
			if b.Route == "" || b.Retired {
				return false
			}
			// A retired backend keeps its name but no servers; it stays in the config until a reload.
			b.Servers = nil
			return true
		}},
	}

	for step := range steps {
		next := cfg.Clone()
		m := mutations[rng.IntN(len(mutations))]
		if !m.do(next) {
			continue
		}
		if err := next.Validate(); err != nil {
			continue // a mutation the model refuses is not a render case
		}
		want, err := Render(next, opts)
		if err != nil {
			t.Fatalf("step %d (%s): Render without cache: %v", step, m.name, err)
		}
		cached := opts
		cached.Cache = cache
		got, err := Render(next, cached)
		if err != nil {
			t.Fatalf("step %d (%s): Render with cache: %v", step, m.name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("step %d (%s): %d files with cache, %d without", step, m.name, len(got), len(want))
		}
		for i := range want {
			if got[i].Path != want[i].Path || !bytes.Equal(got[i].Data, want[i].Data) {
				t.Fatalf("step %d (%s): %s differs with the cache", step, m.name, want[i].Path)
			}
		}
		cfg = next
	}
	if cache.Hits == 0 || cache.Misses == 0 {
		t.Errorf("cache hits %d, misses %d: want both", cache.Hits, cache.Misses)
	}
	t.Logf("%d steps: %d blocks reused, %d rendered", steps, cache.Hits, cache.Misses)
}

// TestBlockCacheAfterFailure: after a Render that fails, the next Render with the same cache still
// gives the files of a Render without one.
func TestBlockCacheAfterFailure(t *testing.T) {
	f := newFixture(t)
	opts := defaultOpts(f, t)
	cfg := f.model(t)
	cached := opts
	cached.Cache = NewBlockCache()
	if _, err := Render(cfg, cached); err != nil {
		t.Fatalf("Render: %v", err)
	}
	bad := cfg.Clone()
	bad.Backends[0].Servers[0].State = "weird"
	if _, err := Render(bad, cached); err == nil {
		t.Fatal("Render of a server state HAProxy cannot express: no error")
	}
	next := cfg.Clone()
	next.Backends[0].Servers[0].Weight = 7
	want, err := Render(next, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	got, err := Render(next, cached)
	if err != nil {
		t.Fatalf("Render with cache: %v", err)
	}
	for i := range want {
		if !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("%s differs with the cache after a failed Render", want[i].Path)
		}
	}
}

func sortServers(b *model.Backend) {
	for i := 1; i < len(b.Servers); i++ {
		for j := i; j > 0 && b.Servers[j].Name < b.Servers[j-1].Name; j-- {
			b.Servers[j], b.Servers[j-1] = b.Servers[j-1], b.Servers[j]
		}
	}
}
