package compat

import (
	"fmt"
	"strings"
)

// Markdown renders docs/openshift-compatibility.md: an introduction, the counts, then one table per
// kind with a row per setting.
func Markdown() string {
	var b strings.Builder
	rs := Rows()
	c := Counts()
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("# OpenShift compatibility\n\n")
	w("<!-- Generated from mapping/compat/rows.go by its tests: edit that file and run `make golden`. -->\n\n")
	w("This page lists every setting the stock OpenShift router reads — its environment variables, the Route\n")
	w("annotations (and one Service annotation), the fields of a Route's spec — with its stock default, whether\n")
	w("OpenShift's ingress operator sets it, and what haroute does with it; then haroute's own variables.\n\n")
	w("The stock router is [openshift/router](https://github.com/openshift/router) at `%s`;\n", RouterCommit)
	w("which variables the operator sets comes from\n")
	w("[openshift/cluster-ingress-operator](https://github.com/openshift/cluster-ingress-operator) at `%s`.\n", OperatorCommit)
	w("`tools/stocksettings` lists the settings from that source into `mapping/compat/testdata/stock-settings.txt`\n")
	w("(`make stock-settings` with checkouts in `STOCK_ROUTER_SRC` and `STOCK_OPERATOR_SRC`), and the tests of\n")
	w("`mapping/compat` fail when this table and that list disagree. The tests of `cmd/haroute` fail when a\n")
	w("variable the table says haroute reads is not read, or when haroute reads one the table does not list.\n\n")
	w("The page is generated from `mapping/compat/rows.go`: edit the rows there and run `make golden`.\n\n")
	w("What the statuses mean:\n\n")
	w("- **%s**: haroute reads the setting under the same name with the same meaning for valid values. Where\n", Supported)
	w("  the stock router falls back to its default on a malformed value, haroute refuses to start (a variable)\n")
	w("  or rejects the Route or warns (an annotation, a field).\n")
	w("- **%s**: haroute reads it, but what it does differs; the note says how and why.\n", Different)
	w("- **%s**: haroute does not read it; the note says why, and what happens instead.\n", NotSupported)
	w("- **%s**: one of haroute's own variables, which the stock router does not read.\n\n", HarouteOnly)
	w("%s\n\n", Summary())

	w("## Counts\n\n")
	w("| settings of the stock router | all | %s | %s | %s |\n", Supported, Different, NotSupported)
	w("|---|---|---|---|---|\n")
	tally := func(name string, t Tally) {
		w("| %s | %d | %d | %d | %d |\n", name, t.Stock(), t.Supported, t.Different, t.NotSupported)
	}
	tally("environment variables", c.Env)
	tally("&nbsp;&nbsp;of which the ingress operator sets", c.EnvOperator)
	tally("Route annotations", c.Annotations)
	tally("Route spec fields", c.Fields)
	w("\nBesides, haroute reads %d variables of its own.\n\n", c.Env.HarouteOnly)

	w("## Environment variables\n\n")
	w("| variable | stock default | operator sets it | haroute | note |\n")
	w("|---|---|---|---|---|\n")
	for _, r := range rs {
		if r.Kind == EnvVar && r.Status != HarouteOnly {
			op := "no"
			if r.OperatorSets {
				op = "yes"
			}
			w("| `%s` | %s | %s | %s | %s |\n", r.Name, cell(r.Default), op, r.Status, cell(r.Note))
		}
	}
	w("\n### haroute's own variables\n\n")
	w("| variable | default | note |\n")
	w("|---|---|---|\n")
	for _, r := range rs {
		if r.Kind == EnvVar && r.Status == HarouteOnly {
			w("| `%s` | %s | %s |\n", r.Name, cell(r.Default), cell(r.Note))
		}
	}

	section := func(title, column string, k Kind) {
		w("\n## %s\n\n", title)
		w("| %s | stock default | haroute | note |\n", column)
		w("|---|---|---|---|\n")
		for _, r := range rs {
			if r.Kind == k {
				w("| `%s` | %s | %s | %s |\n", r.Name, cell(r.Default), r.Status, cell(r.Note))
			}
		}
	}
	section("Annotations", "annotation", Annotation)
	section("Route spec fields", "field", RouteField)
	return b.String()
}

// cell makes Markdown text fit in a table cell: no line breaks, no unescaped '|'.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
