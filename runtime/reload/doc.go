// Package reload delivers a rendered configuration that the runtime API cannot express: it writes the
// files atomically (WriteFiles), validates them with `haproxy -c` (Check), asks the master CLI to
// reload, waits until the new worker is confirmed, and puts the last good files back when HAProxy
// refuses the new ones, so that the old worker keeps serving and a later restart loads what runs.
//
// HAProxy 2.6 answers the master's `reload` with nothing and reloads asynchronously; the Reloader
// then polls `show proc` until the master's reload counter rises and tells a success (a new serving
// worker) from a failure (`[failed: N]` rose, the old worker keeps serving). 2.7 and later answer
// Success=1|0 directly, with the new worker's start-up log (HAProxy's alerts become the error's
// message); from 3.1 "Success=1" comes only once the new worker is ready, a reload is refused while
// another one's worker is still starting (sent again, within WaitTimeout), and after a failed reload
// the serving worker is listed under "# old workers" (socket.ProcState.Serving reads that).
package reload

import "errors"

// Errors a caller may act on (test with errors.Is).
var (
	// ErrInvalidConfig: `haproxy -c` refused the new files; nothing was reloaded and the previous
	// files are back on disk.
	ErrInvalidConfig = errors.New("invalid haproxy configuration")
	// ErrReloadFailed: HAProxy accepted the reload command but could not load the new files (e.g. a
	// bind failed); the old worker keeps serving and the previous files are back on disk.
	ErrReloadFailed = errors.New("reload failed")
	// ErrReloadTimeout: the reload was not confirmed within WaitTimeout. The new files stay on disk
	// (HAProxy may still be loading them): the caller must treat the running state as unknown.
	ErrReloadTimeout = errors.New("haproxy reload not confirmed in time")
)
