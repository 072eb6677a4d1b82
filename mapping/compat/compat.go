// Package compat is haroute's OpenShift compatibility table: every environment variable, Route (and
// Service) annotation and Route spec field the stock OpenShift router reads, with its stock default,
// whether OpenShift's ingress operator sets it, and what haroute does with it; beside them haroute's
// own variables. The table is data (rows.go); Markdown renders docs/openshift-compatibility.md from it
// and Summary the sentence README.md quotes.
//
// The stock router's settings are listed from its source by tools/stocksettings into
// testdata/stock-settings.txt (tools/stock-settings.sh, make stock-settings); the package's tests
// keep the table and that list in step, and cmd/haroute's tests keep the table's claims about
// environment variables in step with what the code reads.
package compat

import (
	"fmt"
	"slices"
	"strings"
)

// The stock sources the table describes: github.com/openshift/router and
// github.com/openshift/cluster-ingress-operator at these commits. testdata/stock-settings.txt names
// the same ones.
const (
	RouterCommit   = "4b401a86dccc657a8a5254c2794a312241f40e87"
	OperatorCommit = "acca9642a81370bc1a587155f7e1e7998b7c5489"
)

// Kind is what a row names.
type Kind int

// The kinds of setting.
const (
	EnvVar     Kind = iota + 1 // an environment variable
	Annotation                 // a Route annotation (one is read from Services)
	RouteField                 // a json path under a Route's spec
)

// String returns the kind as the stock-settings list writes it: env, annotation, field.
func (k Kind) String() string {
	switch k {
	case EnvVar:
		return "env"
	case Annotation:
		return "annotation"
	case RouteField:
		return "field"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Status is what haroute does with a setting.
type Status int

// The statuses.
const (
	// Supported: haroute reads it under the same name with the same meaning for valid values.
	Supported Status = iota + 1
	// Different: haroute reads it, but the result differs; the note says how and why.
	Different
	// NotSupported: haroute does not read it; the note says why, and what takes its place.
	NotSupported
	// HarouteOnly: one of haroute's own variables, which the stock router does not read.
	HarouteOnly
)

// String returns the status as the docs page writes it.
func (s Status) String() string {
	switch s {
	case Supported:
		return "supported"
	case Different:
		return "different"
	case NotSupported:
		return "not supported"
	case HarouteOnly:
		return "haroute only"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Row is one setting.
type Row struct {
	Kind Kind
	// Name is the variable's name, the annotation's key, or the field's json path (spec.tls.key).
	Name string
	// Default is the stock router's default, as Markdown text; for HarouteOnly rows haroute's.
	Default string
	Status  Status
	// Note is Markdown text: for Supported rows what the setting does, for Different rows how and
	// why haroute differs, for NotSupported rows why and what takes its place.
	Note string
	// OperatorSets reports whether the ingress operator sets the variable (EnvVar rows only).
	OperatorSets bool
}

// Rows returns the table: environment variables, then annotations, then Route fields, each sorted by
// name. The caller owns the slice.
func Rows() []Row {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b Row) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Tally counts rows by status.
type Tally struct {
	Supported, Different, NotSupported, HarouteOnly int
}

// Stock returns the number of the stock router's settings counted: all but HarouteOnly.
func (t Tally) Stock() int { return t.Supported + t.Different + t.NotSupported }

// Read returns the number of the stock router's settings haroute reads: Supported and Different.
func (t Tally) Read() int { return t.Supported + t.Different }

func (t *Tally) add(s Status) {
	switch s {
	case Supported:
		t.Supported++
	case Different:
		t.Different++
	case NotSupported:
		t.NotSupported++
	case HarouteOnly:
		t.HarouteOnly++
	}
}

// Tallies are the table's counts per kind, and for environment variables the subset the ingress
// operator sets.
type Tallies struct {
	Env, EnvOperator, Annotations, Fields Tally
}

// Counts tallies the table per kind and status.
func Counts() Tallies { return count(rows) }

// count tallies rs.
func count(rs []Row) Tallies {
	var c Tallies
	for _, r := range rs {
		switch r.Kind {
		case EnvVar:
			c.Env.add(r.Status)
			if r.OperatorSets {
				c.EnvOperator.add(r.Status)
			}
		case Annotation:
			c.Annotations.add(r.Status)
		case RouteField:
			c.Fields.add(r.Status)
		}
	}
	return c
}

// Summary returns the one sentence README.md quotes: how much of the stock router's settings haroute
// handles, as the table counts it.
func Summary() string {
	c := Counts()
	return fmt.Sprintf("haroute reads %d of the stock OpenShift router's %d environment variables "+
		"(%d as the stock router does, %d differently), among them %d of the %d that OpenShift's ingress operator sets (%d and %d); "+
		"it handles %d of the %d Route annotations the stock router reads (%d differently) and %d of the %d Route spec fields (%d differently), "+
		"and gives for each of the other %d settings the reason it does not support it.",
		c.Env.Read(), c.Env.Stock(), c.Env.Supported, c.Env.Different,
		c.EnvOperator.Read(), c.EnvOperator.Stock(), c.EnvOperator.Supported, c.EnvOperator.Different,
		c.Annotations.Read(), c.Annotations.Stock(), c.Annotations.Different,
		c.Fields.Read(), c.Fields.Stock(), c.Fields.Different,
		c.Env.NotSupported+c.Annotations.NotSupported+c.Fields.NotSupported)
}
