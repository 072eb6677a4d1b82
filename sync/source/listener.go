package source

import (
	"context"
	"errors"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// ListenerFiles is where the router's own TLS files come from (sync/listener.Watcher): the default
// certificate, the client CA and its CRLs.
type ListenerFiles interface {
	// Files returns the current files.
	Files() model.ListenerFiles
	// Changes receives a value after the files changed; values coalesce.
	Changes() <-chan struct{}
	// Run keeps the files until ctx ends.
	Run(ctx context.Context) error
}

// WithListener returns src with the listener files of l in every snapshot (mapping.Input.Listener):
// a change of either is a change of the result.
func WithListener(src Source, l ListenerFiles) Source {
	return &withListener{Source: src, l: l, changes: make(chan struct{}, 1)}
}

type withListener struct {
	Source
	l       ListenerFiles
	changes chan struct{}
}

// Run runs the source and the listener files, forwarding both's changes, until ctx ends or either
// fails (its error, once the other has stopped).
func (w *withListener) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- w.Source.Run(ctx) }()
	go func() { errs <- w.l.Run(ctx) }()
	src, lst := w.Source.Changes(), w.l.Changes()
	var first error
	for done := 0; done < 2; {
		select {
		case <-src:
			w.signal()
		case <-lst:
			w.signal()
		case err := <-errs:
			done++
			if err != nil && first == nil {
				first = err
			}
			cancel()
		}
	}
	if first != nil && !errors.Is(first, context.Canceled) {
		return first
	}
	return nil
}

func (w *withListener) signal() {
	select {
	case w.changes <- struct{}{}:
	default:
	}
}

// Changes receives a value after the source's objects or the listener files changed.
func (w *withListener) Changes() <-chan struct{} { return w.changes }

// Snapshot is the source's snapshot with the current listener files.
func (w *withListener) Snapshot() (mapping.Input, []FileError) {
	in, errs := w.Source.Snapshot()
	in.Listener = w.l.Files()
	return in, errs
}
