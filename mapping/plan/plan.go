// Package plan decides how to bring a running HAProxy from the applied state to the desired one: as
// runtime operations (servers, map entries, certificates, CA files) wherever HAProxy 2.6 can change the
// thing at runtime, or as a reload with typed structural reasons where it cannot. It is the one place
// that knows what HAProxy can change at runtime. It is pure (model in, model and ops out).
//
// New Routes are served without a reload by claiming a spare backend: the pool (model.Backend.Spare)
// holds, per backend kind and balance variant, SparePoolSize empty backends with default options. A
// claimed spare keeps its name until the next reload, which renames it to the Route's own backend name
// and refills the pool. Routes deleted at runtime leave their backend retired (empty, unreferenced)
// until the next reload; a Route that comes back meanwhile gets it again when its options fit.
//
// Identity: a Route HAProxy serves keeps its backend name — the name in stats, logs and metrics, and
// the name its sticky cookie is derived from — through every runtime change and every reload its own
// options do not force. Only a Route HAProxy does not serve yet may start on a spare (and is renamed
// once, at the next reload); a served Route whose options or termination change is reloaded, never
// moved to a spare.
package plan

import "github.com/haroute/haroute/mapping/model"

// Plan is the way from an applied state to a desired one.
type Plan struct {
	// Next is the state HAProxy runs once the plan is carried out: the desired state with claimed
	// spares standing in for new Routes' backends, retired backends kept, and the pool. Render and
	// write it before applying Ops (write-through), so that a reload or restart reproduces it.
	Next *model.Config
	// Ops bring HAProxy from applied to Next, in order. Empty when Structural is not.
	Ops []Op
	// Structural lists why the change needs a reload; empty when Ops suffice. After a reload Next
	// has every backend under its own name and a full pool.
	Structural []Reason
}

// NeedsReload reports whether the plan is a reload.
func (p Plan) NeedsReload() bool { return len(p.Structural) > 0 }

// Reason returns the one reason a reload is labelled with (the first structural reason, reasons
// being sorted by kind), or the zero Reason when the plan is no reload.
func (p Plan) Reason() Reason {
	if len(p.Structural) == 0 {
		return Reason{}
	}
	return p.Structural[0]
}

// ReasonKind classifies why a change cannot be made at runtime.
type ReasonKind string

// Structural reasons.
const (
	// Initial: nothing is applied yet (first start, an HAProxy started from files haroute did not
	// write, or a state left unknown by a failed update).
	Initial ReasonKind = "Initial"
	// Restart: HAProxy restarted after haroute changed it at runtime, so the runtime changes are gone.
	Restart ReasonKind = "Restart"
	// Drift: what HAProxy serves differs from the applied state in a way runtime ops cannot repair.
	Drift ReasonKind = "Drift"
	// ReloadMode: every change is a reload (--mode reload, the stock router's way).
	ReloadMode ReasonKind = "ReloadMode"
	// RuntimeFallback: a runtime op failed part-way; the files already held the target, and a reload
	// installed them.
	RuntimeFallback ReasonKind = "RuntimeFallback"
	// DiffRefused: Diff found no runtime way between two matched states (a guard: matching keeps
	// names and options, so this should not happen).
	DiffRefused ReasonKind = "DiffRefused"
	// GlobalChanged: settings rendered into global or defaults changed.
	GlobalChanged ReasonKind = "GlobalChanged"
	// FrontendChanged: a listener was added, removed or changed.
	FrontendChanged ReasonKind = "FrontendChanged"
	// BackendOptionsChanged: an existing backend's options changed (balance, timeouts, allowlist...).
	BackendOptionsChanged ReasonKind = "BackendOptionsChanged"
	// HeaderActionsChanged: a served Route's header actions (spec.httpHeaders.actions) changed other
	// than in a literal value the map carries: an action added, removed, reordered or renamed, its
	// type changed, or a value with a dynamic part (%[...]) or too long for the map.
	HeaderActionsChanged ReasonKind = "HeaderActionsChanged"
	// NewBackend: a new Route's backend has non-default options, so no spare can serve it.
	NewBackend ReasonKind = "NewBackend"
	// PoolExhausted: a new Route could use a spare, but none of its kind and balance is left.
	PoolExhausted ReasonKind = "PoolExhausted"
	// TemplateChanged: the rendered haproxy.cfg differs from the applied one outside what the
	// runtime path owns (server lines; maps, certificates and CA files are files of their own), e.g.
	// a custom template that renders something per Route. The caller that renders finds it by
	// comparing masked renders (render.MaskRuntime) and plans again with Reload.
	TemplateChanged ReasonKind = "TemplateChanged"
	// PoolRefill: the caller asked for the spare pool to be refilled ahead of demand (Options.Refill)
	// and a pool holds fewer free spares than its size.
	PoolRefill ReasonKind = "PoolRefill"
	// CAFileChanged: a CA bundle that verifies reencrypt servers changed. `commit ssl ca-file`
	// answers Success but the servers that already verify with it keep the old bundle (2.6, 3.0 and
	// 3.2 checked), so the new one reaches them only through a reload.
	CAFileChanged ReasonKind = "CAFileChanged"
)

// Reason is one structural reason with the thing it concerns.
type Reason struct {
	Kind ReasonKind `json:"kind" yaml:"kind"`
	// Subject names the backend, frontend or setting concerned.
	Subject string `json:"subject,omitempty" yaml:"subject,omitempty"`
	// Detail says what differs, for logs and metrics.
	Detail string `json:"detail,omitempty" yaml:"detail,omitempty"`
}

func (r Reason) String() string {
	s := string(r.Kind)
	if r.Subject != "" {
		s += " " + r.Subject
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}
