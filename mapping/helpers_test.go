package mapping

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/routetest"
)

// Builders for the unit tests of this package (the golden tests use YAML cases instead).

// The builders of mapping/routetest, under this package's short names.
type routeOpt = routetest.Opt

var (
	newRoute       = routetest.Route
	withPath       = routetest.Path
	withService    = routetest.To
	withAlternate  = routetest.Alternate
	withTLS        = routetest.TLS
	withWildcard   = routetest.Wildcard
	withAnnotation = routetest.Annotation
	withLabel      = routetest.Label
	newService     = routetest.Service
	newSlice       = routetest.Slice
)

func ptr[T any](v T) *T { return &v }

// testOptions returns the defaults with loopback endpoints allowed.
func testOptions() Options {
	o := DefaultOptions()
	o.AllowLoopbackEndpoints = true
	return o
}

// translate runs Translate and fails the test when the model does not validate.
func translate(t testing.TB, in Input, opts Options) (*model.Config, []Problem) {
	t.Helper()
	cfg, problems := Translate(in, opts)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Translate produced an invalid model: %v", err)
	}
	return cfg, problems
}

// readTestdata returns a file of testdata/certs.
func readCert(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "certs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// problemFor returns the non-warning problem of ns/name, or nil.
func problemFor(ps []Problem, ns, name string) *Problem {
	for i := range ps {
		if ps[i].Namespace == ns && ps[i].Name == name && !ps[i].Warning {
			return &ps[i]
		}
	}
	return nil
}

// mapEntries returns the entries of a map as key → value.
func mapEntries(cfg *model.Config, name string) map[string]string {
	out := map[string]string{}
	if m := cfg.Map(name); m != nil {
		for _, e := range m.Entries {
			out[e.Key] = e.Value
		}
	}
	return out
}
