package source

import (
	"context"

	"github.com/haroute/haroute/mapping"
)

// Source is where snapshots come from: a watched manifest folder (Folder) or the Kubernetes API
// (Cluster). The controller waits for HasSynced before its first translation, then takes a fresh
// Snapshot after every signal on Changes.
type Source interface {
	// Run watches until ctx ends (nil) or the source cannot work at all (an error).
	Run(ctx context.Context) error
	// Changes receives a value after the snapshot may have changed; values coalesce (buffer 1).
	Changes() <-chan struct{}
	// HasSynced reports whether the first complete snapshot is available.
	HasSynced() bool
	// Snapshot returns the current objects and the problems of the source itself (a broken manifest
	// file, with file and line), which are not per-Route problems. The caller may keep the objects
	// but never modifies them: they may be shared with the source's caches (Cluster), where an
	// object that changes is replaced, never modified in place.
	Snapshot() (mapping.Input, []FileError)
}

var _ Source = (*Folder)(nil)
