package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/haproxy"
)

// maxReloadHistory bounds the reloads stateapi.State keeps.
const maxReloadHistory = 50

// stateRecorder is the loop's side of stateapi.State; the handler reads it concurrently.
type stateRecorder struct {
	mu sync.Mutex
	st stateapi.State
	// routes are the last snapshot's Routes (for their labels).
	routes []*routev1.Route

	// leaves caches the parsed certificates by digest (leavesMu: snapshots run concurrently).
	leavesMu sync.Mutex
	leaves   map[string]leafInfo
}

func (r *stateRecorder) sync(d Desired, applied *model.Config, out haproxy.Outcome, err error, took time.Duration, updated bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Problems = d.Problems
	if applied != r.st.Applied {
		r.st.Changes = recordChanges(r.st.Changes, r.st.Applied, applied, out, time.Now())
	}
	r.st.Applied = applied
	if d.Routes != nil {
		r.routes = d.Routes
	}
	if r.st.RuntimeOps == nil {
		r.st.RuntimeOps = map[string]int{}
	}
	for op, n := range out.Result.Counts {
		r.st.RuntimeOps[op] += n
	}
	if out.Reloaded {
		r.st.ReloadsTotal++
		r.st.Reloads = append(r.st.Reloads, stateapi.ReloadRecord{At: time.Now(), Reason: out.Reason, Seconds: took.Seconds()})
		if len(r.st.Reloads) > maxReloadHistory {
			r.st.Reloads = slices.Delete(r.st.Reloads, 0, len(r.st.Reloads)-maxReloadHistory)
		}
	}
	if updated || err != nil {
		rec := &stateapi.SyncRecord{At: time.Now(), Seconds: took.Seconds(), Reloaded: out.Reloaded, Ops: out.Result.Counts}
		if err != nil {
			rec.Error = err.Error()
		}
		r.st.LastSync = rec
	}
}

func (r *stateRecorder) repair(res haproxy.RepairOutcome, applied *model.Config) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Drift, r.st.Held, r.st.Applied = res.Drift, res.Held, applied
	if r.st.RuntimeOps == nil {
		r.st.RuntimeOps = map[string]int{}
	}
	for op, n := range res.Result.Counts {
		r.st.RuntimeOps[op] += n
	}
}

// snapshot returns a copy of the state, certificates reduced to digests.
func (r *stateRecorder) snapshot(ready bool) stateapi.State {
	r.mu.Lock()
	st := r.st
	st.Reloads = slices.Clone(st.Reloads)
	st.RuntimeOps = maps.Clone(st.RuntimeOps)
	st.Changes = maps.Clone(st.Changes)
	routes := r.routes
	r.mu.Unlock()
	st.Generated, st.Ready = time.Now(), ready
	applied := st.Applied
	var digests []string
	st.Applied, digests = redacted(applied)
	st.Certificates = r.certificates(applied, digests)
	if len(routes) > 0 {
		st.Labels = make(map[string]map[string]string, len(routes))
		for _, rt := range routes {
			if len(rt.Labels) > 0 {
				st.Labels[rt.Namespace+"/"+rt.Name] = rt.Labels
			}
		}
	}
	if st.Problems == nil {
		st.Problems = []mapping.Problem{}
	}
	return st
}

// certificates describes cfg's certificates, parsing only those not seen before.
func (r *stateRecorder) certificates(cfg *model.Config, digests []string) []stateapi.CertInfo {
	r.leavesMu.Lock()
	defer r.leavesMu.Unlock()
	if r.leaves == nil || len(r.leaves) > 2*len(digests)+16 {
		old := r.leaves
		r.leaves = make(map[string]leafInfo, len(digests))
		for _, d := range digests {
			if l, ok := old[d]; ok {
				r.leaves[d] = l
			}
		}
	}
	return certInfos(cfg, digests, r.leaves)
}

// redacted returns cfg with every certificate and CA bundle replaced by the SHA-256 of its PEM
// ("sha256:<hex>"), and the certificates' digests in order; cfg itself is not modified.
func redacted(cfg *model.Config) (*model.Config, []string) {
	if cfg == nil {
		return nil, nil
	}
	out := *cfg
	out.Certificates = slices.Clone(cfg.Certificates)
	digests := make([]string, len(out.Certificates))
	for i := range out.Certificates {
		digests[i] = digest(out.Certificates[i].PEM)
		out.Certificates[i].PEM = digests[i]
	}
	out.CAFiles = slices.Clone(cfg.CAFiles)
	for i := range out.CAFiles {
		out.CAFiles[i].PEM = digest(out.CAFiles[i].PEM)
	}
	return &out, digests
}

func digest(pem string) string {
	sum := sha256.Sum256([]byte(pem))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// State returns what the controller knows now (see stateapi.State).
func (c *Controller) State() stateapi.State {
	st := c.state.snapshot(c.Ready())
	st.RunSettings = c.RunSettings
	return st
}

// StateHandler serves the state socket's one request (stateapi.Path): c.State() as JSON.
func StateHandler(c *Controller) http.Handler {
	return stateapi.Handler(c.State, c.log())
}
