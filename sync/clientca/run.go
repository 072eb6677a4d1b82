package clientca

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"
)

// Run keeps the files until ctx is done. Every PollInterval it reads the bundle and syncs when its
// content differs from the last synced, or when a CRL download is due (a refresh before nextUpdate,
// or a retry after a failure). changed is called, from Run's goroutine, after each sync that wrote
// a file; it may be nil. Run syncs at once when Sync was never called.
func (m *Manager) Run(ctx context.Context, changed func(Files)) {
	t := time.NewTicker(m.poll)
	defer t.Stop()
	var readErr string
	for {
		m.tick(ctx, changed, &readErr)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick does one poll of Run. readErr holds the last read error logged, so that a lasting one is
// logged once.
func (m *Manager) tick(ctx context.Context, changed func(Files), readErr *string) {
	data, err := readBundle(m.cfg.CABundle)
	if err != nil {
		// A ConfigMap update may leave the file missing for an instant: the next poll reads it.
		if msg := err.Error(); msg != *readErr {
			m.log.Warn("client CA: bundle not read; the files in place are kept", "error", err)
			*readErr = msg
		}
		return
	}
	*readErr = ""
	sum := sha256.Sum256(data)
	m.mu.Lock()
	now := m.now()
	bundleChanged := !m.haveSeen || sum != m.seen
	due := bundleChanged || (!m.due.IsZero() && !now.Before(m.due))
	m.mu.Unlock()
	if !due {
		return
	}
	if bundleChanged {
		m.log.Info("client CA: bundle content changed", "path", m.cfg.CABundle)
	}
	files, err := m.syncData(ctx, data)
	switch {
	case ctx.Err() != nil:
		return
	case errors.Is(err, ErrCRLUnavailable):
		m.log.Warn("client CA: CRLs missing; HAProxy rejects the clients that need them until they are downloaded", "error", err)
	case err != nil:
		m.log.Error("client CA: sync failed; the files in place are kept", "error", err)
	}
	if changed != nil && (files.CAChanged || files.CRLChanged) {
		changed(files)
	}
}
