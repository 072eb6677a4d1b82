package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/runtime/haproxy"
)

// maxReloadHistory bounds the reloads State keeps.
const maxReloadHistory = 50

// State is what `haroute run` knows that HAProxy cannot tell: the applied state, the Routes'
// problems, the reloads with their reasons, the last sync, the last drift and operator holds. It is
// what the inspection commands read from the state socket (StateHandler). Certificates and CA
// bundles appear as digests only: private keys never leave the router.
type State struct {
	// Generated is when the snapshot was taken.
	Generated time.Time `json:"generated"`
	// Ready is true once the first sync was applied.
	Ready bool `json:"ready"`
	// Applied is the state HAProxy runs as far as haroute knows (nil: unknown, a reload follows).
	Applied *model.Config `json:"applied,omitempty"`
	// Problems are the rejections and warnings of the last translation.
	Problems []mapping.Problem `json:"problems"`
	// Reloads are the last reloads, oldest first (at most 50), and ReloadsTotal all since start.
	Reloads      []ReloadRecord `json:"reloads"`
	ReloadsTotal int            `json:"reloadsTotal"`
	// RuntimeOps counts the runtime operations carried out since start, by operation.
	RuntimeOps map[string]int `json:"runtimeOps"`
	// LastSync is the last sync that updated HAProxy or failed.
	LastSync *SyncRecord `json:"lastSync,omitempty"`
	// Drift is what the last drift check found (before its repair); Held the servers an operator holds.
	Drift []string `json:"drift,omitempty"`
	Held  []string `json:"held,omitempty"`
	// Certificates describe the applied certificates (validity, names, Routes), without key material.
	Certificates []CertInfo `json:"certificates,omitempty"`
	// Changes are the last change of each served Route ("<ns>/<name>") and how it reached HAProxy.
	Changes map[string]RouteChange `json:"changes,omitempty"`
	// Labels are the labels of the snapshot's Routes ("<ns>/<name>"), for label selectors.
	Labels map[string]map[string]string `json:"labels,omitempty"`
	// RunSettings are the inputs of the router's translation settings, so that the inspection
	// commands translate as the router does (nil when the router did not say them).
	RunSettings *RunSettings `json:"runSettings,omitempty"`
}

// RunSettings are what the router's translation settings come from: the environment variables it
// read for them (every one it asked for, "" for those not set; secrets left out) and the settings
// flags given on its command line (name → value as written).
type RunSettings struct {
	Env   map[string]string `json:"env"`
	Flags map[string]string `json:"flags,omitempty"`
}

// ReloadRecord is one reload.
type ReloadRecord struct {
	At time.Time `json:"at"`
	// Reason is the reload's one typed reason.
	Reason plan.Reason `json:"reason"`
	// Seconds is the time of the update that reloaded.
	Seconds float64 `json:"seconds"`
}

// SyncRecord is one sync.
type SyncRecord struct {
	At       time.Time      `json:"at"`
	Seconds  float64        `json:"seconds"`
	Reloaded bool           `json:"reloaded"`
	Ops      map[string]int `json:"ops,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// stateRecorder is the loop's side of State; the handler reads it concurrently.
type stateRecorder struct {
	mu sync.Mutex
	st State
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
		r.st.Reloads = append(r.st.Reloads, ReloadRecord{At: time.Now(), Reason: out.Reason, Seconds: took.Seconds()})
		if len(r.st.Reloads) > maxReloadHistory {
			r.st.Reloads = slices.Delete(r.st.Reloads, 0, len(r.st.Reloads)-maxReloadHistory)
		}
	}
	if updated || err != nil {
		rec := &SyncRecord{At: time.Now(), Seconds: took.Seconds(), Reloaded: out.Reloaded, Ops: out.Result.Counts}
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
func (r *stateRecorder) snapshot(ready bool) State {
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
func (r *stateRecorder) certificates(cfg *model.Config, digests []string) []CertInfo {
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

// State returns what the controller knows now (see State).
func (c *Controller) State() State {
	st := c.state.snapshot(c.Ready())
	st.RunSettings = c.RunSettings
	return st
}

// StateHandler serves GET /state: c.State() as JSON. Serve it on a local socket only (`haroute run`
// puts it at <haproxy-dir>/run/haroute.sock, mode 0600): it describes every Route of the cluster.
func StateHandler(c *Controller) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(c.State()); err != nil {
			c.log().Debug("state: writing the answer", "err", err)
		}
	})
	return mux
}
