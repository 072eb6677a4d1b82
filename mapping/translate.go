package mapping

import "github.com/haroute/haroute/mapping/model"

// Translate turns a snapshot into the desired HAProxy state and the per-Route problems. It is pure and
// deterministic. Options are assumed valid (Options.Validate).
func Translate(in Input, opts Options) (*model.Config, []Problem) {
	panic("not implemented")
}
