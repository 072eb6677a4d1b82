// Command stocksettings lists the settings the stock OpenShift router reads, from its source: the
// environment variables, the Route (and Service) annotations and the Route spec fields, and for each
// variable whether OpenShift's ingress operator sets it. mapping/compat keeps its compatibility table
// in step with the list (mapping/compat/testdata/stock-settings.txt, written by
// tools/stock-settings.sh).
//
//	go run ./tools/stocksettings -router DIR -operator DIR [-o FILE]
//
// DIR are checkouts of github.com/openshift/router and github.com/openshift/cluster-ingress-operator
// (the operator's pkg/ is enough). The tool reads those two trees and nothing else: it fetches
// nothing. The header names each tree's commit (git rev-parse HEAD) when it is a git checkout.
//
// What counts, in the router tree (test files, vendor/ and testdata/ left out, except the vendored
// route API the fields come from):
//
//   - an environment variable is a name read by the Go code of pkg/ and cmd/ (os.Getenv, os.LookupEnv
//     and the router's helpers env, envInt, getIntervalFromEnv, envVarAsStrings, whose first
//     argument is the name), by the default template (`env "NAME"` in its actions) or by the image's
//     shell scripts in images/router/haproxy (`${NAME...}` for a NAME the script does not assign),
//     less the names of the excluded list below;
//   - an annotation is a key the template looks up with `index $cfg.Annotations KEY` (KEY a string,
//     or a template variable assigned one), or a constant key the Go code indexes an Annotations map
//     (or GetAnnotations()) with: the DCM pool size on Routes, the idling mark on Services;
//   - a field is a json path under spec of route/v1's Route, from the vendored
//     github.com/openshift/api/route/v1: struct fields of the package's own struct types are
//     descended into, every other field (scalars, slices, types of other packages) is one path;
//   - the operator sets a variable when its name is the Name of a corev1.EnvVar literal in the
//     operator's pkg/operator/controller/ingress/*.go (test files left out), or an env entry's name in
//     pkg/manifests/assets/router/deployment.yaml.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// excluded are names the router's code or scripts mention that are no settings of the stock
// router, each with the reason.
var excluded = []struct{ name, why string }{
	// The router sets it in the environment of its reload script for the last run at shutdown
	// (pkg/router/template/router.go); reload-haproxy reads it. Nobody configures it.
	{"ROUTER_SHUTDOWN", "set by the router for its own reload script"},
	// Go's HTTP client reads the proxy variables by convention (the operator sets them for the CRL
	// downloads); the router's code never names them.
	{"HTTP_PROXY", "read by Go's HTTP client by convention"},
	{"HTTPS_PROXY", "read by Go's HTTP client by convention"},
	{"NO_PROXY", "read by Go's HTTP client by convention"},
	// client-go's kubeconfig loading rules read it by convention; the router's code never names it.
	{"KUBECONFIG", "read by client-go's kubeconfig loading by convention"},
}

// excludedPrefixes are prefixes of names that are no settings: Kubernetes feature gates the router's
// tests set for client-go.
var excludedPrefixes = []string{"KUBE_FEATURE_"}

// isExcluded reports whether name is on the excluded list or has an excluded prefix.
func isExcluded(name string) bool {
	for _, e := range excluded {
		if e.name == name {
			return true
		}
	}
	for _, p := range excludedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Paths inside the two trees.
const (
	routerTemplate   = "images/router/haproxy/conf/haproxy-config.template"
	routerScripts    = "images/router/haproxy"
	routeAPI         = "vendor/github.com/openshift/api/route/v1"
	operatorIngress  = "pkg/operator/controller/ingress"
	operatorManifest = "pkg/manifests/assets/router/deployment.yaml"
)

// routerGoDirs are the router's Go source trees searched for environment reads and annotations.
var routerGoDirs = []string{"pkg", "cmd"}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "stocksettings: %v\n", err)
		os.Exit(1)
	}
}

// run parses the flags and writes the list to -o, or to stdout.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("stocksettings", flag.ContinueOnError)
	router := fs.String("router", "", "checkout of github.com/openshift/router (required)")
	operator := fs.String("operator", "", "checkout of github.com/openshift/cluster-ingress-operator, pkg/ at least (required)")
	out := fs.String("o", "", "write the list to this file instead of stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *router == "" || *operator == "" || fs.NArg() != 0 {
		return errors.New("usage: stocksettings -router DIR -operator DIR [-o FILE]")
	}
	s, err := extract(*router, *operator)
	if err != nil {
		return err
	}
	text := s.format(commit(*router), commit(*operator))
	if *out == "" {
		_, err = io.WriteString(stdout, text)
		return err
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing the list: %w", err)
	}
	return nil
}

// settings is what extract finds.
type settings struct {
	env         []string        // sorted, unique
	operatorSet map[string]bool // names the operator sets (of any router's or not)
	annotations []string        // sorted, unique
	fields      []string        // sorted, unique
}

// extract reads the two trees.
func extract(routerDir, operatorDir string) (settings, error) {
	var s settings
	for _, d := range []string{routerDir, operatorDir} {
		if st, err := os.Stat(d); err != nil {
			return s, err
		} else if !st.IsDir() {
			return s, fmt.Errorf("%s: not a directory", d)
		}
	}
	goEnv, goAnnotations, err := scanRouterGo(routerDir, routerGoDirs)
	if err != nil {
		return s, fmt.Errorf("the router's Go code: %w", err)
	}
	tmpl, err := os.ReadFile(filepath.Join(routerDir, filepath.FromSlash(routerTemplate)))
	if err != nil {
		return s, fmt.Errorf("the router's template: %w", err)
	}
	tmplEnv, tmplAnnotations, err := scanTemplate(string(tmpl))
	if err != nil {
		return s, fmt.Errorf("%s: %w", routerTemplate, err)
	}
	scriptEnv, err := scanScripts(filepath.Join(routerDir, filepath.FromSlash(routerScripts)))
	if err != nil {
		return s, err
	}
	for _, n := range slices.Concat(goEnv, tmplEnv, scriptEnv) {
		if !isExcluded(n) {
			s.env = append(s.env, n)
		}
	}
	s.annotations = slices.Concat(goAnnotations, tmplAnnotations)
	if s.fields, err = routeSpecFields(filepath.Join(routerDir, filepath.FromSlash(routeAPI))); err != nil {
		return s, err
	}
	opNames, err := operatorEnv(operatorDir)
	if err != nil {
		return s, fmt.Errorf("the operator: %w", err)
	}
	s.operatorSet = map[string]bool{}
	for _, n := range opNames {
		s.operatorSet[n] = true
	}
	for _, l := range []*[]string{&s.env, &s.annotations, &s.fields} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	switch {
	case len(s.env) == 0:
		return s, errors.New("no environment variable found: is -router a checkout of github.com/openshift/router?")
	case len(s.fields) == 0:
		return s, errors.New("no Route spec field found")
	case len(opNames) == 0:
		return s, errors.New("no environment variable set by the operator found: is -operator a checkout of github.com/openshift/cluster-ingress-operator?")
	}
	return s, nil
}

// format renders the list: a header, then one sorted line per setting.
func (s settings) format(routerCommit, operatorCommit string) string {
	var lines []string
	for _, n := range s.env {
		mark := "-"
		if s.operatorSet[n] {
			mark = "operator"
		}
		lines = append(lines, "env "+n+" "+mark)
	}
	for _, a := range s.annotations {
		lines = append(lines, "annotation "+a)
	}
	for _, f := range s.fields {
		lines = append(lines, "field "+f)
	}
	slices.Sort(lines)
	var b strings.Builder
	b.WriteString("# The settings the stock OpenShift router reads, listed by tools/stocksettings from its source\n")
	b.WriteString("# (tools/stock-settings.sh, make stock-settings). Do not edit: regenerate.\n")
	b.WriteString("# router: github.com/openshift/router " + routerCommit + "\n")
	b.WriteString("# operator: github.com/openshift/cluster-ingress-operator " + operatorCommit + "\n")
	b.WriteString("# env NAME operator|-: a variable the router reads; operator when the ingress operator sets it.\n")
	b.WriteString("# annotation KEY: an annotation the router reads. field PATH: a json path of the Route's spec.\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// commit returns the commit dir is checked out at, or a note that it is no git checkout. A directory
// inside some other checkout (its top level elsewhere) is no checkout of its own.
func commit(dir string) string {
	const unknown = "(not a git checkout: commit unknown)"
	top, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil || !sameDir(strings.TrimSpace(string(top)), dir) {
		return unknown
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if c := strings.TrimSpace(string(out)); err == nil && c != "" {
		return c
	}
	return unknown
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
