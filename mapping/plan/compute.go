package plan

import "github.com/haroute/haroute/mapping/model"

// Compute plans the way from applied (nil: nothing known, e.g. first start) to desired (a Translate
// result, without pool). It never modifies its arguments.
func Compute(applied, desired *model.Config) Plan {
	panic("not implemented")
}

// WithPool returns desired as a reload installs it: every backend under its own name, no retired
// backends, and a full spare pool (Settings.SparePoolSize per kind and balance variant).
func WithPool(desired *model.Config) *model.Config {
	panic("not implemented")
}

// Simulate applies ops to a copy of applied the way HAProxy would, for tests and for the equivalence
// property Simulate(applied, Compute(applied, desired).Ops) == Compute(...).Next. It returns an error
// where HAProxy would refuse an op (unknown backend or server, duplicate server, key not found...).
func Simulate(applied *model.Config, ops []Op) (*model.Config, error) {
	panic("not implemented")
}
