package observe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// observeMaps replaces the entries of every map of obs with the live ones, sorted by key (stable, so
// duplicate keys keep HAProxy's order).
func observeMaps(ctx context.Context, r socket.Runner, obs *model.Config, paths render.RuntimePaths) error {
	for i := range obs.Maps {
		m := &obs.Maps[i]
		p, ok := paths.Maps[m.Name]
		if !ok {
			return fmt.Errorf("map %s: no runtime path", m.Name)
		}
		live, err := socket.ShowMap(ctx, r, p)
		if errors.Is(err, socket.ErrNotFound) {
			return fmt.Errorf("%w: HAProxy has no map %s: %v", ErrStructuralDrift, p, err)
		}
		if err != nil {
			return fmt.Errorf("map %s: %w", m.Name, err)
		}
		entries := make([]model.MapEntry, len(live))
		for j, e := range live {
			entries[j] = model.MapEntry{Key: e.Key, Value: e.Value}
		}
		slices.SortStableFunc(entries, func(a, b model.MapEntry) int { return cmp.Compare(a.Key, b.Key) })
		m.Entries = entries
	}
	return nil
}
