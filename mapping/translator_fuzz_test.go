package mapping_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/mappingtest"
)

// FuzzTranslator runs a Translator over a short sequence derived from one test case (an optional
// "# env:" line, then YAML manifests, as FuzzTranslateRender reads them): the input, the same input
// again, a deep copy, the lists reversed, every other Route and EndpointSlice left out, one object of
// each kind replaced by a copy, and the input once more. At every step the result must be exactly
// Translate's. The seeds are the test cases and examples (go test runs them all).
func FuzzTranslator(f *testing.F) {
	for _, seed := range translateSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzManifest {
			t.Skip("input too large")
		}
		in, opts, err := mappingtest.ParseCase(data, "fuzz")
		if err != nil {
			return
		}
		tr := mapping.NewTranslator(opts)
		for step, next := range translatorSequence(in) {
			got, gotProblems := tr.Translate(next)
			want, wantProblems := mapping.Translate(next, opts)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotProblems, wantProblems) {
				t.Fatalf("step %d: the Translator's result differs from Translate's\n got %+v %v\nwant %+v %v", step, got, gotProblems, want, wantProblems)
			}
		}
	})
}

// translatorSequence returns the snapshots FuzzTranslator goes through.
func translatorSequence(in mapping.Input) []mapping.Input {
	reversed := mapping.Input{
		Routes:         reversedList(in.Routes),
		Services:       reversedList(in.Services),
		EndpointSlices: reversedList(in.EndpointSlices),
		Namespaces:     reversedList(in.Namespaces),
		Secrets:        reversedList(in.Secrets),
	}
	halved := in
	halved.Routes, halved.EndpointSlices = everyOther(in.Routes), everyOther(in.EndpointSlices)
	copied := in
	copied.Routes, copied.Services, copied.EndpointSlices = slices.Clone(in.Routes), slices.Clone(in.Services), slices.Clone(in.EndpointSlices)
	copied.Secrets = slices.Clone(in.Secrets)
	if n := len(copied.Routes); n > 0 {
		copied.Routes[n/2] = copied.Routes[n/2].DeepCopy()
	}
	if n := len(copied.Services); n > 0 {
		copied.Services[n/2] = copied.Services[n/2].DeepCopy()
	}
	if n := len(copied.EndpointSlices); n > 0 {
		copied.EndpointSlices[n/2] = copied.EndpointSlices[n/2].DeepCopy()
	}
	if n := len(copied.Secrets); n > 0 {
		copied.Secrets[n/2] = copied.Secrets[n/2].DeepCopy()
	}
	return []mapping.Input{in, in, in.DeepCopy(), reversed, halved, in, copied, in}
}

func reversedList[T any](list []T) []T {
	out := slices.Clone(list)
	slices.Reverse(out)
	return out
}

func everyOther[T any](list []T) []T {
	var out []T
	for i, v := range list {
		if i%2 == 0 {
			out = append(out, v)
		}
	}
	return out
}
