package mapping

import (
	"fmt"
	"slices"
	"testing"
)

// BenchmarkTranslator measures one sync after one EndpointSlice changed: at 1k, 10k and 20k Routes of
// benchInput (10 endpoints each), every iteration translates a snapshot where the slice of the middle
// Route alternates between two versions (one address differs), with a Translator (the fast path) and
// with Translate. TranslatorRouteChanged alternates the middle Route too (a copy of it in the second
// snapshot), which takes the Translator's normal path.
func BenchmarkTranslator(b *testing.B) {
	for _, n := range []int{1000, 10000, 20000} {
		inputs := alternatingSliceInputs(n)
		opts := DefaultOptions()
		run := func(inputs [2]Input) func(b *testing.B) {
			return func(b *testing.B) {
				tr := NewTranslator(opts)
				tr.Translate(inputs[1])
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					cfg, _ := tr.Translate(inputs[i%2])
					i++
					if len(cfg.Backends) != n {
						b.Fatalf("%d backends, want %d", len(cfg.Backends), n)
					}
				}
			}
		}
		b.Run(fmt.Sprintf("routes=%d/Translator", n), run(inputs))
		routeChanged := inputs
		routeChanged[1].Routes = slices.Clone(inputs[1].Routes)
		routeChanged[1].Routes[n/2] = routeChanged[1].Routes[n/2].DeepCopy()
		b.Run(fmt.Sprintf("routes=%d/TranslatorRouteChanged", n), run(routeChanged))
		b.Run(fmt.Sprintf("routes=%d/Translate", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				cfg, _ := Translate(inputs[i%2], opts)
				i++
				if len(cfg.Backends) != n {
					b.Fatalf("%d backends, want %d", len(cfg.Backends), n)
				}
			}
		})
	}
}

// alternatingSliceInputs returns two snapshots of benchInput(n, 10) that differ only in the
// EndpointSlice of Route n/2: the second has a copy of it with its first address changed.
func alternatingSliceInputs(n int) [2]Input {
	a := benchInput(n, 10)
	b := a
	b.EndpointSlices = slices.Clone(a.EndpointSlices)
	k := n / 2
	s := a.EndpointSlices[k].DeepCopy()
	s.Endpoints[0].Addresses = []string{"10.255.255.254"}
	b.EndpointSlices[k] = s
	return [2]Input{a, b}
}
