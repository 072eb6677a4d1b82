package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

var (
	// templateAction is one {{ ... }} action of a Go template (comments included, harmlessly).
	templateAction = regexp.MustCompile(`(?s)\{\{.*?\}\}`)
	// templateEnv is the template function env called with a literal name.
	templateEnv = regexp.MustCompile(`\benv\s+"([A-Za-z_][A-Za-z0-9_]*)"`)
	// templateAnnotation is a lookup in a Route's annotations by a literal key or a variable.
	templateAnnotation = regexp.MustCompile(`\bindex\s+\$[A-Za-z0-9_]*\.Annotations\s+(?:"([^"]*)"|\$([A-Za-z0-9_]+))`)
	// templateStringVar is a template variable assigned (or declared with) a string literal.
	templateStringVar = regexp.MustCompile(`\$([A-Za-z0-9_]+)\s*:?=\s*"([^"]*)"`)

	// shellExpansion is a ${NAME...} parameter expansion.
	shellExpansion = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)
	// shellAssignment is NAME=... at the start of a command (after local, readonly, export or declare),
	// or the variable of a for loop.
	shellAssignment = regexp.MustCompile(`(?m)(?:^|[;&|]\s*|\b(?:local|readonly|export|declare)\s+(?:-[a-zA-Z]+\s+)*)([A-Za-z_][A-Za-z0-9_]*)=|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b`)
)

// scanTemplate returns the environment variables (env "NAME") and the annotation keys (index
// $cfg.Annotations KEY) of the stock template's actions. A key given by a template variable is
// resolved through the variable's string assignment; a variable without one is an error.
func scanTemplate(text string) (env, annotations []string, err error) {
	actions := templateAction.FindAllString(text, -1)
	vars := map[string]string{}
	for _, a := range actions {
		for _, m := range templateStringVar.FindAllStringSubmatch(a, -1) {
			vars[m[1]] = m[2]
		}
	}
	var errs []error
	for _, a := range actions {
		for _, m := range templateEnv.FindAllStringSubmatch(a, -1) {
			env = append(env, m[1])
		}
		for _, m := range templateAnnotation.FindAllStringSubmatch(a, -1) {
			switch key, ok := vars[m[2]]; {
			case m[2] == "":
				annotations = append(annotations, m[1])
			case ok:
				annotations = append(annotations, key)
			default:
				errs = append(errs, fmt.Errorf("annotation key $%s: no string assigned to it", m[2]))
			}
		}
	}
	return env, annotations, errors.Join(errs...)
}

// scanScripts returns the variables the shell scripts directly in dir (files starting with a #!
// line naming sh or bash) expand without assigning them.
func scanScripts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the image's scripts: %w", err)
	}
	var names []string
	scripts := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("the image's scripts: %w", err)
		}
		if !isShellScript(b) {
			continue
		}
		scripts++
		assigned := map[string]bool{}
		for _, m := range shellAssignment.FindAllStringSubmatch(string(b), -1) {
			assigned[m[1]+m[2]] = true
		}
		for _, m := range shellExpansion.FindAllStringSubmatch(string(b), -1) {
			if !assigned[m[1]] {
				names = append(names, m[1])
			}
		}
	}
	if scripts == 0 {
		return nil, fmt.Errorf("%s: no shell script", dir)
	}
	return names, nil
}

// isShellScript reports whether b starts with a #! line naming sh or bash.
func isShellScript(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if !bytes.HasPrefix(line, []byte("#!")) {
		return false
	}
	for _, f := range strings.Fields(strings.ReplaceAll(string(line[2:]), "/", " ")) {
		if f == "sh" || f == "bash" {
			return true
		}
	}
	return false
}

// operatorEnv returns the variables the ingress operator sets: the Go code's EnvVar literals and the
// router Deployment manifest's env entries.
func operatorEnv(root string) ([]string, error) {
	names, err := operatorGoEnv(root)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(operatorManifest)))
	if err != nil {
		return nil, fmt.Errorf("the operator's router Deployment: %w", err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", operatorManifest, err)
	}
	return append(names, manifestEnv(doc)...), nil
}

// manifestEnv returns the name of every entry of every "env" list in a decoded YAML document.
func manifestEnv(doc any) []string {
	var names []string
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			if list, ok := v.([]any); ok && k == "env" {
				for _, item := range list {
					if m, ok := item.(map[string]any); ok {
						if n, ok := m["name"].(string); ok {
							names = append(names, n)
						}
					}
				}
				continue
			}
			names = append(names, manifestEnv(v)...)
		}
	case []any:
		for _, v := range d {
			names = append(names, manifestEnv(v)...)
		}
	}
	return names
}
