// Package status writes this router's entry in Route status.ingress: an Admitted condition that is
// True for the Routes the router serves and False, with OpenShift's reason and message, for the
// Routes it rejected. Entries of other routers are kept, and nothing is written when the entry
// already says the same thing (the condition's LastTransitionTime aside).
//
// A Writer writes when it is called; a Queue (queue.go) puts it behind a worker goroutine, so that
// the sync loop only records what to write and HAProxy never waits for the API server.
package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	routeclientset "github.com/openshift/client-go/route/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// defaultMaxAttempts bounds the UpdateStatus calls for one Route when the API server answers with a
// conflict (each conflict is followed by a fresh GET).
const defaultMaxAttempts = 5

// Writer keeps this router's entry in the status of the Routes it serves or rejects up to date.
// A Writer is meant for one caller at a time (the controller loop).
type Writer struct {
	client            routeclientset.Interface
	routerName        string
	canonicalHostname string
	log               *slog.Logger
	// now is the clock for LastTransitionTime; tests replace it.
	now func() time.Time
	// maxAttempts bounds the UpdateStatus calls per Route and Apply.
	maxAttempts int
	// limiter, when set, is waited on before every UpdateStatus, so that a burst of status changes
	// reaches the API server at a known pace (a Queue sets it); nil writes at once.
	limiter flowcontrol.RateLimiter
	// held are the Routes ("ns/name") this router has, or last found, an entry on: when one leaves
	// the router's view, its entry is removed (clear.go).
	held map[string]bool
	// seeded is set once held has been filled from a list of every Route (the first Apply), so that
	// entries left on Routes that departed while the router was down are found too.
	seeded bool
}

// NewWriter returns a Writer that signs its entries with routerName and, when canonicalHostname is
// not empty, reports it as the router's canonical host name. A nil log discards messages.
func NewWriter(client routeclientset.Interface, routerName, canonicalHostname string, log *slog.Logger) *Writer {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Writer{
		client:            client,
		routerName:        routerName,
		canonicalHostname: canonicalHostname,
		log:               log,
		now:               time.Now,
		maxAttempts:       defaultMaxAttempts,
		held:              map[string]bool{},
	}
}

// result is what this router decided about one Route.
type result struct {
	admitted bool
	// host is the effective host of an admitted Route (used when spec.host is empty).
	host    string
	reason  string
	message string
}

// Apply brings this router's status entry of every Route in routes in line with the translation
// result: admitted when cfg.Routes lists it, rejected when a non-warning Problem names it. Routes
// with neither (other shards, or not yet translated) get no entry, and an entry this Writer holds on
// a Route that no longer gets a decision (it left the router's view, or was deleted) is removed.
// Only changed entries are written. Every Route is tried; the errors are joined.
func (w *Writer) Apply(ctx context.Context, routes []*routev1.Route, cfg *model.Config, problems []mapping.Problem) error {
	results := w.results(cfg, problems)

	sorted := make([]*routev1.Route, 0, len(routes))
	for _, r := range routes {
		if r != nil {
			sorted = append(sorted, r)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].Name < sorted[j].Name
	})

	var errs []error
	if !w.seeded {
		if err := w.seed(ctx); err != nil {
			errs = append(errs, err)
		} else {
			w.seeded = true
		}
	}
	decided := map[string]bool{}
	for _, r := range sorted {
		key := r.Namespace + "/" + r.Name
		res, ok := results[key]
		if !ok {
			continue
		}
		decided[key] = true
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("route status: %w", err))
			break
		}
		w.held[key] = true
		if err := w.applyOne(ctx, r, res); err != nil {
			errs = append(errs, fmt.Errorf("route %s/%s status: %w", r.Namespace, r.Name, err))
		}
	}
	if ctx.Err() == nil {
		errs = append(errs, w.clearDeparted(ctx, decided))
	}
	return errors.Join(errs...)
}

// results indexes the translation outcome by "ns/name". Admission wins over a Problem; the first
// non-warning Problem of a Route (Problems are sorted) gives its reason.
func (w *Writer) results(cfg *model.Config, problems []mapping.Problem) map[string]result {
	out := map[string]result{}
	for _, p := range problems {
		if p.Warning {
			continue
		}
		key := p.Namespace + "/" + p.Name
		if _, seen := out[key]; !seen {
			out[key] = result{reason: p.Reason, message: p.Message}
		}
	}
	if cfg != nil {
		for _, ri := range cfg.Routes {
			out[ri.Namespace+"/"+ri.Name] = result{admitted: true, host: ri.Host}
		}
	}
	return out
}

// applyOne writes the entry of one Route when it differs, re-reading the Route after a conflict.
func (w *Writer) applyOne(ctx context.Context, snapshot *routev1.Route, res result) error {
	routes := w.client.RouteV1().Routes(snapshot.Namespace)
	cur := snapshot
	for attempt := 1; ; attempt++ {
		next, changed := w.updated(cur, res)
		if !changed {
			return nil
		}
		written, done, err := w.write(ctx, next, attempt)
		if written {
			w.log.Info("route status updated", "route", snapshot.Namespace+"/"+snapshot.Name,
				"admitted", res.admitted, "reason", res.reason)
		}
		if done || err != nil {
			return err
		}

		fresh, err := routes.Get(ctx, snapshot.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get after conflict: %w", err)
		}
		if (snapshot.UID != "" && fresh.UID != snapshot.UID) || !equality.Semantic.DeepEqual(fresh.Spec, snapshot.Spec) {
			// The result was computed for another version of the Route; the snapshot that carries
			// the new one leads to its own Apply.
			w.log.Debug("route changed since the snapshot; status left to the next sync",
				"route", snapshot.Namespace+"/"+snapshot.Name)
			return nil
		}
		cur = fresh
	}
}

// desired is this router's entry for the Route, without LastTransitionTime.
func (w *Writer) desired(r *routev1.Route, res result) routev1.RouteIngress {
	host := r.Spec.Host
	if host == "" && res.admitted {
		host = res.host
	}
	policy := r.Spec.WildcardPolicy
	if policy == "" {
		policy = routev1.WildcardPolicyNone // the API server's default
	}
	cond := routev1.RouteIngressCondition{Type: routev1.RouteAdmitted, Status: corev1.ConditionTrue}
	if !res.admitted {
		cond.Status = corev1.ConditionFalse
		cond.Reason = res.reason
		cond.Message = res.message
	}
	return routev1.RouteIngress{
		Host:                    host,
		RouterName:              w.routerName,
		Conditions:              []routev1.RouteIngressCondition{cond},
		WildcardPolicy:          policy,
		RouterCanonicalHostname: w.canonicalHostname,
	}
}

// updated returns a copy of r with this router's entry replaced, or false when the current entry
// already matches. r itself is never modified.
func (w *Writer) updated(r *routev1.Route, res result) (*routev1.Route, bool) {
	want := w.desired(r, res)

	var existing *routev1.RouteIngress
	own := 0
	for i := range r.Status.Ingress {
		if r.Status.Ingress[i].RouterName == w.routerName {
			if existing == nil {
				existing = &r.Status.Ingress[i]
			}
			own++
		}
	}
	if own == 1 && sameIgnoringTime(*existing, want) {
		return nil, false
	}

	status := want.Conditions[0].Status
	if prev := admittedCondition(existing); prev != nil && prev.Status == status && prev.LastTransitionTime != nil {
		t := *prev.LastTransitionTime
		want.Conditions[0].LastTransitionTime = &t
	} else {
		t := metav1.NewTime(w.now()).Rfc3339Copy()
		want.Conditions[0].LastTransitionTime = &t
	}

	next := r.DeepCopy()
	ingress := make([]routev1.RouteIngress, 0, len(r.Status.Ingress)+1)
	placed := false
	for _, in := range next.Status.Ingress {
		if in.RouterName != w.routerName {
			ingress = append(ingress, in)
			continue
		}
		if !placed { // the first own entry keeps its position; duplicates go
			ingress = append(ingress, want)
			placed = true
		}
	}
	if !placed {
		ingress = append(ingress, want)
	}
	next.Status.Ingress = ingress
	return next, true
}

// admittedCondition returns the Admitted condition of an entry, or nil.
func admittedCondition(in *routev1.RouteIngress) *routev1.RouteIngressCondition {
	if in == nil {
		return nil
	}
	for i := range in.Conditions {
		if in.Conditions[i].Type == routev1.RouteAdmitted {
			return &in.Conditions[i]
		}
	}
	return nil
}

// sameIgnoringTime compares two entries with every condition's LastTransitionTime left out.
func sameIgnoringTime(a, b routev1.RouteIngress) bool {
	return equality.Semantic.DeepEqual(withoutTimes(a), withoutTimes(b))
}

// withoutTimes returns a copy of the entry whose conditions carry no LastTransitionTime.
func withoutTimes(in routev1.RouteIngress) routev1.RouteIngress {
	out := in
	out.Conditions = make([]routev1.RouteIngressCondition, len(in.Conditions))
	for i, c := range in.Conditions {
		c.LastTransitionTime = nil
		out.Conditions[i] = c
	}
	return out
}
