// Package mappingtest is test support shared by the tests of several packages: it turns the test-case
// files under mapping/testdata/cases into a mapping.Input and mapping.Options.
//
// A case file is multi-document YAML of Routes, Services, EndpointSlices, Namespaces and Secrets. Its
// optional first lines set OpenShift environment variables for the case:
//
//	# env: ROUTER_ALLOW_WILDCARD_ROUTES=true ROUTER_SUBDOMAIN=${name}-${namespace}.apps.example.com
//	# env: ROUTER_COMPRESSION_MIME="text/html \"text/css; charset=utf-8\""
//
// A value that holds spaces or quotes is Go-quoted. Every case allows loopback endpoints (cases use
// 127.0.0.x addresses).
package mappingtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping"
)

// envPrefix starts the optional environment line of a case file.
const envPrefix = "# env:"

// ParseCase parses a test-case file: the optional "# env:" first line becomes Options (through
// mapping.FromEnv, with AllowLoopbackEndpoints set), the rest is decoded with mapping.DecodeManifests.
// source names the data in error messages.
func ParseCase(data []byte, source string) (mapping.Input, mapping.Options, error) {
	env, err := ParseEnvLine(data)
	if err != nil {
		return mapping.Input{}, mapping.Options{}, fmt.Errorf("%s: %w", source, err)
	}
	opts, err := mapping.FromEnv(func(name string) string { return env[name] })
	if err != nil {
		return mapping.Input{}, mapping.Options{}, fmt.Errorf("%s: environment: %w", source, err)
	}
	opts.AllowLoopbackEndpoints = true
	in, err := mapping.DecodeManifests(source, data)
	if err != nil {
		return mapping.Input{}, mapping.Options{}, fmt.Errorf("decoding case: %w", err)
	}
	return in, opts, nil
}

// ParseEnvLine returns the variables of a case's leading "# env: NAME=value ..." lines (none when the
// first line is something else). A value starting with a double quote is a Go-quoted string. A
// malformed or repeated assignment is an error.
func ParseEnvLine(data []byte) (map[string]string, error) {
	env := map[string]string{}
	for _, raw := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimRight(raw, "\r"), envPrefix)
		if !ok {
			break
		}
		for rest = strings.TrimLeft(rest, " \t"); rest != ""; rest = strings.TrimLeft(rest, " \t") {
			name, after, ok := strings.Cut(rest, "=")
			if !ok || name == "" || strings.ContainsAny(name, " \t") {
				field, _, _ := strings.Cut(rest, " ")
				return nil, fmt.Errorf("env line: %q is not NAME=value", field)
			}
			var value string
			if strings.HasPrefix(after, `"`) {
				q, err := strconv.QuotedPrefix(after)
				if err != nil {
					return nil, fmt.Errorf("env line: %s: malformed quoted value", name)
				}
				value, _ = strconv.Unquote(q)
				rest = after[len(q):]
			} else {
				value, rest, _ = strings.Cut(after, " ")
			}
			if _, dup := env[name]; dup {
				return nil, fmt.Errorf("env line: %s is set twice", name)
			}
			env[name] = value
		}
	}
	return env, nil
}
