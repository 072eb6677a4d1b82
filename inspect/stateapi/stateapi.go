// Package stateapi is the contract of haroute's state socket: what `haroute run` knows that HAProxy
// cannot tell (the applied state, the Routes' problems, the reloads and their reasons, the last sync,
// drift, operator holds, certificates, the last change of each Route and the run's settings), the
// one request that asks for it, its JSON encoding, the handler that serves it and the client that
// reads it.
//
// The loop (sync/controller) fills a State and serves it with Handler; the inspection commands
// (inspect/views, `haroute state|diff|doctor|explain`) read it with Read. Both sides import this file
// and nothing of each other, so the socket's format has one definition. A field added here is
// optional on the wire (omitempty, or a zero value that reads as "unknown"), so that a newer command
// can read an older router and the other way round.
//
// It imports only mapping/ (the problems, the model and the plan's reasons), like every consumer of
// the model: no Kubernetes client, no HAProxy socket.
package stateapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// Path is the one request the state socket answers: GET Path returns a State as JSON.
const Path = "/state"

// ReadTimeout bounds one Read.
const ReadTimeout = 5 * time.Second

// State is what `haroute run` knows that HAProxy cannot tell. Certificates and CA bundles appear as
// digests only: private keys never leave the router.
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

// CertInfo describes one certificate HAProxy serves, from its leaf (the first certificate of the
// bundle): what the inspection commands need to warn about expiry and coverage. No key material.
type CertInfo struct {
	// Name is the file's base name under certs/; Digest the SHA-256 of the bundle ("sha256:<hex>").
	Name   string `json:"name"`
	Digest string `json:"digest"`
	// Routes are the Routes ("<ns>/<name>") served with it; empty for the default certificate.
	Routes []string `json:"routes,omitempty"`
	// SNI are the names HAProxy serves it for; DNSNames those the certificate itself covers (its
	// subjectAltName DNS names, or its common name when it has none).
	SNI      []string `json:"sni,omitempty"`
	DNSNames []string `json:"dnsNames,omitempty"`
	Subject  string   `json:"subject,omitempty"`
	Issuer   string   `json:"issuer,omitempty"`
	// NotBefore and NotAfter bound the leaf's validity.
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
	// Error says why the bundle could not be read (the other fields are then empty).
	Error string `json:"error,omitempty"`
}

// How a Route's last change reached HAProxy (RouteChange.Via).
const (
	ViaRuntime = "runtime"
	ViaReload  = "reload"
)

// RouteChange is the last change of one Route that reached HAProxy.
type RouteChange struct {
	At time.Time `json:"at"`
	// Via is ViaRuntime (runtime API operations) or ViaReload.
	Via string `json:"via"`
	// Reason is the reload's reason kind (ViaReload only).
	Reason string `json:"reason,omitempty"`
}

// Handler serves GET Path with what state returns, as indented JSON; every other request is 404.
// Serve it on a local socket only (`haroute run` puts it under the HAProxy directory, mode 0600): it
// describes every Route of the cluster. A nil log discards.
func Handler(state func() State, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(state()); err != nil {
			log.Debug("state: writing the answer", "err", err)
		}
	})
	return mux
}

// Read asks the state socket at socketPath for the router's State, within ReadTimeout.
func Read(ctx context.Context, socketPath string) (State, error) {
	var st State
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socketPath)
		},
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://haroute"+Path, nil)
	if err != nil {
		return st, fmt.Errorf("state request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return st, fmt.Errorf("state: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("state: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("state: decode: %w", err)
	}
	return st, nil
}
