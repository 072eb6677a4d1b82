package render

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// TestRendererGivesTheSameFiles walks a seeded series of changes (server weights, states, additions
// and removals, backend options, backends added, retired and removed, settings) and checks after
// every step that a Renderer kept across steps gives byte-identical files and masks to a fresh
// render, and that every file whose content did not change keeps its Data (callers skip it by
// identity).
func TestRendererGivesTheSameFiles(t *testing.T) {
	f := newFixture(t)
	t.Run("default template", func(t *testing.T) { rendererWalk(t, f, defaultOpts(f, t)) })
	t.Run("custom copy of the default template", func(t *testing.T) {
		// Its haproxy.cfg asks for no backend block either: its backends go to the backend files.
		custom, err := ParseTemplate("copy", defaultTemplateText)
		if err != nil {
			t.Fatal(err)
		}
		opts := defaultOpts(f, t)
		opts.Template = custom
		rendererWalk(t, f, opts)
		files, err := Render(f.model(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(files, func(f File) bool { return f.Path == DefaultBackendFile }) {
			t.Error("a copy of the default template gets no backend files")
		}
	})
	t.Run("custom template", func(t *testing.T) {
		// The default template with its backends in haproxy.cfg, as a custom template renders them.
		custom, err := ParseTemplate("custom", defaultTemplateText+
			`{{ template "default-backends" . }}{{ range $b := .Config.Backends }}{{ backendBlock $b }}{{ end }}`)
		if err != nil {
			t.Fatal(err)
		}
		opts := defaultOpts(f, t)
		opts.Template = custom
		rendererWalk(t, f, opts)
	})
}

func rendererWalk(t *testing.T, f *fixture, opts Options) {
	cfg := f.model(t)
	r, err := NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := r.Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	const steps = 200

	mutations := []struct {
		name string
		do   func(c *model.Config) bool
	}{
		{"weight", func(c *model.Config) bool {
			b := c.Backends[rng.IntN(len(c.Backends))]
			if len(b.Servers) == 0 {
				return false
			}
			b.Servers[rng.IntN(len(b.Servers))].Weight = int32(rng.IntN(257))
			return true
		}},
		{"state", func(c *model.Config) bool {
			b := c.Backends[rng.IntN(len(c.Backends))]
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
			b := c.Backends[rng.IntN(len(c.Backends))]
			if b.Kind == model.KindReencrypt {
				return false // reencrypt servers need a verified host
			}
			addr := fmt.Sprintf("10.9.%d.%d", rng.IntN(256), 1+rng.IntN(254))
			b.Servers = append(b.Servers, model.Server{Name: "pod:x:svc:http:" + addr + ":8080", Addr: addr, Port: 8080, Weight: 1, State: model.StateReady})
			sortServers(b)
			return true
		}},
		{"remove server", func(c *model.Config) bool {
			b := c.Backends[rng.IntN(len(c.Backends))]
			if len(b.Servers) == 0 {
				return false
			}
			i := rng.IntN(len(b.Servers))
			b.Servers = append(b.Servers[:i:i], b.Servers[i+1:]...)
			return true
		}},
		{"backend option", func(c *model.Config) bool {
			b := c.Backends[rng.IntN(len(c.Backends))]
			b.TimeoutServer = fmt.Sprintf("%ds", 1+rng.IntN(90))
			return true
		}},
		{"settings", func(c *model.Config) bool {
			c.Settings.CheckInterval = fmt.Sprintf("%dms", 1000+rng.IntN(9000))
			return true
		}},
		{"add backend", func(c *model.Config) bool {
			b := c.Backends[rng.IntN(len(c.Backends))].Clone()
			if b.Route == "" {
				return false
			}
			b.Name = fmt.Sprintf("%s-%d", b.Name, rng.IntN(1000))
			for _, o := range c.Backends {
				if o.Name == b.Name {
					return false
				}
			}
			c.Backends = append(c.Backends, &b)
			sortBackends(c)
			return true
		}},
		{"remove backend", func(c *model.Config) bool {
			i := rng.IntN(len(c.Backends))
			for _, r := range c.Routes {
				if r.Backend == c.Backends[i].Name {
					return false
				}
			}
			c.Backends = append(c.Backends[:i:i], c.Backends[i+1:]...)
			return true
		}},
		{"retire backend", func(c *model.Config) bool {
			b := c.Backends[rng.IntN(len(c.Backends))]
			if b.Route == "" || b.Retired {
				return false
			}
			// A retired backend keeps its name but no servers; it stays in the config until a reload.
			b.Servers = nil
			return true
		}},
	}

	done, kept := 0, 0
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
			t.Fatalf("step %d (%s): Render: %v", step, m.name, err)
		}
		got, err := r.Render(next)
		if err != nil {
			t.Fatalf("step %d (%s): Renderer: %v", step, m.name, err)
		}
		sameFiles(t, fmt.Sprintf("step %d (%s)", step, m.name), got, want)
		kept += keptIdentity(t, fmt.Sprintf("step %d (%s)", step, m.name), prev, got)
		wantMasks := freshMasks(t, opts, next)
		gotMasks, err := r.Masks()
		if err != nil {
			t.Fatalf("step %d (%s): Masks: %v", step, m.name, err)
		}
		if len(gotMasks) != len(wantMasks) {
			t.Fatalf("step %d (%s): %d masks, want %d", step, m.name, len(gotMasks), len(wantMasks))
		}
		for p, w := range wantMasks {
			if !bytes.Equal(gotMasks[p], w) {
				t.Fatalf("step %d (%s): mask of %s differs from a fresh render's", step, m.name, p)
			}
		}
		cfg, prev = next, got
		done++
	}
	if done < steps/2 || kept == 0 {
		t.Fatalf("%d steps done, %d unchanged files kept: the walk tests too little", done, kept)
	}
	t.Logf("%d steps: %d unchanged files kept their data", done, kept)
}

// sameFiles fails unless got and want are the same files, byte for byte.
func sameFiles(t *testing.T, what string, got, want []File) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d files, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Path != want[i].Path || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("%s: %s differs from a fresh render's (got path %s)", what, want[i].Path, got[i].Path)
		}
	}
}

// keptIdentity fails when a file of next has the content it had in prev but not the same Data, and
// returns how many non-empty files kept theirs.
func keptIdentity(t *testing.T, what string, prev, next []File) int {
	t.Helper()
	old := map[string][]byte{}
	for _, f := range prev {
		old[f.Path] = f.Data
	}
	kept := 0
	for _, f := range next {
		o, ok := old[f.Path]
		if !ok || !bytes.Equal(o, f.Data) || len(f.Data) == 0 {
			continue
		}
		if &o[0] != &f.Data[0] {
			t.Fatalf("%s: %s did not change but was made again", what, f.Path)
		}
		kept++
	}
	return kept
}

// freshMasks returns the masks of a fresh Renderer's render of cfg.
func freshMasks(t *testing.T, opts Options, cfg *model.Config) map[string][]byte {
	t.Helper()
	r, err := NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render(cfg); err != nil {
		t.Fatal(err)
	}
	m, err := r.Masks()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sortBackends(c *model.Config) {
	for i := 1; i < len(c.Backends); i++ {
		for j := i; j > 0 && c.Backends[j].Name < c.Backends[j-1].Name; j-- {
			c.Backends[j], c.Backends[j-1] = c.Backends[j-1], c.Backends[j]
		}
	}
}

// TestRendererAfterFailure: after a render that fails, the next one still gives the files of a fresh
// render.
func TestRendererAfterFailure(t *testing.T) {
	f := newFixture(t)
	opts := defaultOpts(f, t)
	cfg := f.model(t)
	r, err := NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render(cfg); err != nil {
		t.Fatalf("Render: %v", err)
	}
	bad := cfg.Clone()
	bad.Backends[0].Servers[0].State = "weird"
	if _, err := r.Render(bad); err == nil {
		t.Fatal("Render of a server state HAProxy cannot express: no error")
	}
	next := cfg.Clone()
	next.Backends[0].Servers[0].Weight = 7
	want, err := Render(next, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	got, err := r.Render(next)
	if err != nil {
		t.Fatalf("Renderer: %v", err)
	}
	sameFiles(t, "after a failed render", got, want)
}

func sortServers(b *model.Backend) {
	for i := 1; i < len(b.Servers); i++ {
		for j := i; j > 0 && b.Servers[j].Name < b.Servers[j-1].Name; j-- {
			b.Servers[j], b.Servers[j-1] = b.Servers[j-1], b.Servers[j]
		}
	}
}
