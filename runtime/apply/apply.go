// Package apply carries out a plan's runtime operations on a running HAProxy: it turns each plan.Op
// into admin-socket commands (through runtime/socket, which checks every reply), in the plan's
// order, and stops at the first failure. The rendered files must already hold the target state
// (write-through): a failed Apply leaves HAProxy part-way, and the caller falls back to a reload,
// which loads the files.
//
// A `del server` refused because connections are still attached is not a failure: the server
// stays in maintenance (the plan put it there) and is reported in Result.Deferred for the caller to
// retry later; likewise a `del backend` (HAProxy 3.4+), in Result.DeferredBackends.
package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// ErrReloadRequired is wrapped by every error of Apply that comes from HAProxy or the socket: the
// runtime state is now somewhere between applied and next, and only a reload (of the files, which
// already hold next) gets HAProxy to a known state.
var ErrReloadRequired = errors.New("runtime update failed: fall back to a reload")

// Result says what Apply did.
type Result struct {
	// Applied is the number of operations carried out (deferred deletions not included).
	Applied int
	// Counts holds, per operation type (OpName), the number carried out.
	Counts map[string]int
	// Deferred are the server deletions HAProxy refused for now (connections still attached); the
	// servers stay in maintenance. Retry them later with Apply.
	Deferred []plan.DelServer
	// DeferredBackends are the backend deletions (plan.DelBackend) HAProxy refused for now: streams
	// still attached, or one of the backend's servers deferred above. The backends stay,
	// unpublished; retry them later with Apply.
	DeferredBackends []string
	// Session is true when the operations ran through one interactive connection.
	Session bool
	// Duration is the wall time of Apply.
	Duration time.Duration
}

// OpError is the failure of one operation. It wraps ErrReloadRequired and the socket error.
type OpError struct {
	// Index is the position of the operation in the ops given to Apply.
	Index int
	// Total is the number of operations given to Apply.
	Total int
	Op    plan.Op
	Err   error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("runtime op %d of %d (%s) failed: %v; the files on disk already hold the target state: fall back to a reload",
		e.Index+1, e.Total, e.Op, e.Err)
}

// Unwrap returns ErrReloadRequired and the cause.
func (e *OpError) Unwrap() []error { return []error{ErrReloadRequired, e.Err} }

// sessionOpener is what *socket.Admin offers beyond Runner.
type sessionOpener interface {
	Session(ctx context.Context) (*socket.Session, error)
}

// Apply carries out ops in order on HAProxy through r. next is the state the ops lead to (the plan's
// Next, whose rendered files are on disk), paths its runtime paths (render.PathsFor(next, dir)) and
// dir the HAProxy directory (for render.ServerSpec). When r is an *socket.Admin the operations run
// through one Session; if the session cannot be opened they run with one connection per command.
//
// Apply stops at the first operation that fails and returns an *OpError naming it (it wraps
// ErrReloadRequired); the Result counts what was done before. An invalid op (a map the paths do not
// know, a server spec render refuses) fails the same way, before anything is sent for it.
func Apply(ctx context.Context, r socket.Runner, next *model.Config, paths render.RuntimePaths, dir string, ops []plan.Op) (Result, error) {
	start := time.Now()
	res := Result{Counts: map[string]int{}}
	if len(ops) == 0 {
		res.Duration = time.Since(start)
		return res, nil
	}
	if next == nil {
		return res, fmt.Errorf("apply: no target config")
	}
	if so, ok := r.(sessionOpener); ok {
		if s, err := so.Session(ctx); err == nil {
			defer s.Close()
			r, res.Session = s, true
		}
	}
	a := applier{r: r, next: next, paths: paths, dir: dir, maxPayload: maxPayload(next.Settings.BufSize)}
	for i, op := range ops {
		if d, ok := op.(plan.DelBackend); ok && slices.ContainsFunc(res.Deferred, func(s plan.DelServer) bool { return s.Backend == d.Backend }) {
			// HAProxy deletes only a backend without servers.
			res.DeferredBackends = append(res.DeferredBackends, d.Backend)
			continue
		}
		err := ctx.Err()
		if err == nil {
			err = a.apply(ctx, op)
		}
		if d, ok := op.(plan.DelServer); ok && errors.Is(err, socket.ErrBusy) {
			res.Deferred = append(res.Deferred, d)
			continue
		}
		if d, ok := op.(plan.DelBackend); ok && errors.Is(err, socket.ErrBusy) {
			res.DeferredBackends = append(res.DeferredBackends, d.Backend)
			continue
		}
		if err != nil {
			res.Duration = time.Since(start)
			return res, &OpError{Index: i, Total: len(ops), Op: op, Err: err}
		}
		res.Applied++
		res.Counts[OpName(op)]++
	}
	res.Duration = time.Since(start)
	return res, nil
}

// defaultBufSize is HAProxy's tune.bufsize when the config sets none.
const defaultBufSize = 16384

// payloadMargin is kept free in tune.bufsize for the command line of a map payload
// ("add map @<version> <absolute map path> <<") and HAProxy's own bookkeeping. Checked on 2.6.12
// with tune.bufsize 32768: command line plus payload up to ~32750 bytes pass, 32770 do not.
const payloadMargin = 4096 + 512

// maxPayload returns the payload bound for ReplaceMap under tune.bufsize.
func maxPayload(bufSize int) int {
	if bufSize <= 0 {
		bufSize = defaultBufSize
	}
	return bufSize - payloadMargin
}
