package status

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	routev1 "github.com/openshift/api/route/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clearDeparted removes this router's entry from the Routes it had an entry on (w.held) that this
// Apply no longer decides about: Routes that left the router's view (a ROUTE_LABELS or
// NAMESPACE_LABELS change, or deletion) or that the translation no longer mentions. Those Routes are
// read from the API, since the informer no longer has them; a deleted Route needs nothing. Keys whose
// entry could not be removed stay held, to be tried again on the next Apply.
func (w *Writer) clearDeparted(ctx context.Context, decided map[string]bool) error {
	var gone []string
	for key := range w.held {
		if !decided[key] {
			gone = append(gone, key)
		}
	}
	sort.Strings(gone)
	var errs []error
	for _, key := range gone {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("route status: %w", err))
			break
		}
		ns, name := splitKey(key)
		if err := w.clearOne(ctx, ns, name); err != nil {
			errs = append(errs, fmt.Errorf("route %s status: %w", key, err))
			continue
		}
		delete(w.held, key)
	}
	return errors.Join(errs...)
}

// seed adds to held every Route, in any namespace and shard, that carries an entry of this router:
// the informer that feeds Apply may not list a Route that left the router's selection while it was
// down.
func (w *Writer) seed(ctx context.Context) error {
	list, err := w.client.RouteV1().Routes(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("route status: list routes for stale entries: %w", err)
	}
	for i := range list.Items {
		r := &list.Items[i]
		for _, in := range r.Status.Ingress {
			if in.RouterName == w.routerName {
				w.held[r.Namespace+"/"+r.Name] = true
				break
			}
		}
	}
	return nil
}

// clearOne removes this router's entries from Route ns/name, re-reading it after a conflict.
func (w *Writer) clearOne(ctx context.Context, ns, name string) error {
	routes := w.client.RouteV1().Routes(ns)
	for attempt := 1; ; attempt++ {
		cur, err := routes.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		next, changed := w.withoutOwn(cur)
		if !changed {
			return nil
		}
		written, done, err := w.write(ctx, next, attempt)
		if written {
			w.log.Info("route status entry removed: this router no longer selects the route", "route", ns+"/"+name)
		}
		if done || err != nil {
			return err
		}
	}
}

// write sends an UpdateStatus for next, the attempt-th for its Route, once the limiter (if any) lets
// it through: every write, the first and those after a conflict, takes a token. written: the API
// took it; done: nothing more to do (written, or the Route is gone); otherwise, without an error, it
// met a conflict and may be tried again on a fresh copy.
func (w *Writer) write(ctx context.Context, next *routev1.Route, attempt int) (written, done bool, err error) {
	if w.limiter != nil {
		if err := w.limiter.Wait(ctx); err != nil {
			return false, true, fmt.Errorf("update status: wait for the rate limiter: %w", err)
		}
	}
	_, err = w.client.RouteV1().Routes(next.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	switch {
	case err == nil:
		return true, true, nil
	case apierrors.IsNotFound(err):
		return false, true, nil
	case !apierrors.IsConflict(err):
		return false, true, fmt.Errorf("update status: %w", err)
	case attempt >= w.maxAttempts:
		return false, true, fmt.Errorf("update status: still conflicting after %d attempts: %w", attempt, err)
	}
	return false, false, nil
}

// withoutOwn returns a copy of r without this router's entries, or false when it has none.
func (w *Writer) withoutOwn(r *routev1.Route) (*routev1.Route, bool) {
	kept := make([]routev1.RouteIngress, 0, len(r.Status.Ingress))
	for _, in := range r.Status.Ingress {
		if in.RouterName != w.routerName {
			kept = append(kept, in)
		}
	}
	if len(kept) == len(r.Status.Ingress) {
		return nil, false
	}
	next := r.DeepCopy()
	next.Status.Ingress = kept
	return next, true
}

func splitKey(key string) (ns, name string) {
	ns, name, _ = strings.Cut(key, "/")
	return ns, name
}
