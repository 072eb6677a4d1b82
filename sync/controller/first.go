package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/sync/source"
)

// FirstWriter is what writing the first configuration needs of the HAProxy side; *haproxy.Instance
// implements it.
type FirstWriter interface {
	// Check runs `haproxy -c` on desired as a fresh start would write it (haproxy.ErrNoCheck without
	// a binary) and returns the Routes a refusal names.
	Check(ctx context.Context, desired *model.Config) ([]haproxy.Refused, error)
	// WriteInitial writes the first configuration, from which HAProxy starts.
	WriteInitial(desired *model.Config) (haproxy.Initial, error)
}

var _ FirstWriter = (*haproxy.Instance)(nil)

// Refusal is a Route HAProxy refused before the Controller ran; give them to Controller.Refused, and
// its syncs leave them out as they leave out the Routes they find refused.
type Refusal struct {
	Route   *routev1.Route
	Message string
	At      time.Time
}

// First is the first configuration written before HAProxy starts.
type First struct {
	Desired Desired
	Initial haproxy.Initial
	// Refused are the Routes left out because HAProxy refused their configuration.
	Refused []Refusal
}

// WriteFirst translates the first snapshot of src, checks it with `haproxy -c` when the HAProxy side
// has a binary, leaves out the Routes HAProxy refuses (the ones its message names, or else the ones a
// bisection finds) and writes the rest: HAProxy starts from files it accepts, and one bad Route does
// not keep it from starting for everyone. A configuration HAProxy refuses even without any Route (a
// router-wide setting, the template) is an error with HAProxy's message. Without a binary (a sidecar
// with --check-binary=none) the files are written unchecked.
func WriteFirst(ctx context.Context, src source.Source, opts mapping.Options, h FirstWriter, log *slog.Logger) (First, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	in, fileErrs := src.Snapshot()
	all := in.Routes
	translate := func(routes []*routev1.Route, extra []mapping.Problem) (Desired, error) {
		sub := in
		sub.Routes = routes
		return translateInput(sub, fileErrs, all, extra, translateWith(opts))
	}
	s := &refusalSearch{check: h.Check, translate: translate, log: log}
	refused, err := s.find(ctx, nil, all)
	if err != nil && !errors.Is(err, haproxy.ErrNoCheck) {
		return First{}, fmt.Errorf("checking the first configuration: %w", err)
	}
	now := time.Now()
	out := First{}
	gone := map[string]bool{}
	var problems []mapping.Problem
	for _, f := range refused {
		gone[routeKey(f.route)] = true
		out.Refused = append(out.Refused, Refusal{Route: f.route.DeepCopy(), Message: f.message, At: now})
		problems = append(problems, refusedProblem(f.route, f.message))
		log.Warn("route refused by HAProxy before the first start: left out, the others are served",
			"route", routeKey(f.route), "haproxy", f.message)
	}
	kept := make([]*routev1.Route, 0, len(all))
	for _, r := range all {
		if !gone[routeKey(r)] {
			kept = append(kept, r)
		}
	}
	if out.Desired, err = translate(kept, problems); err != nil {
		return First{}, err
	}
	if out.Initial, err = h.WriteInitial(out.Desired.Config); err != nil {
		return First{}, err
	}
	return out, nil
}

// routeKey is "namespace/name".
func routeKey(r *routev1.Route) string { return r.Namespace + "/" + r.Name }

// refusedProblem is the problem of a Route left out because HAProxy refused it.
func refusedProblem(r *routev1.Route, message string) mapping.Problem {
	return mapping.Problem{
		Namespace: r.Namespace, Name: r.Name, Reason: mapping.ReasonRefusedByHAProxy,
		Message: "HAProxy refused the configuration of this Route, so it is left out and the others are served: " +
			message + " (a change to the Route tries it again)",
	}
}
