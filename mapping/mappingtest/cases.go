// Package mappingtest is test support shared by the tests of several packages: it turns the test-case
// files under mapping/testdata/cases into a mapping.Input and mapping.Options.
//
// A case file is multi-document YAML of Routes, Services, EndpointSlices, Namespaces and Secrets. Its
// optional first line sets OpenShift environment variables for the case:
//
//	# env: ROUTER_ALLOW_WILDCARD_ROUTES=true ROUTER_SUBDOMAIN=${name}-${namespace}.apps.example.com
//
// Values carry no spaces. Every case allows loopback endpoints (cases use 127.0.0.x addresses).
package mappingtest

import (
	"bytes"
	"fmt"
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

// ParseEnvLine returns the variables of a case's "# env: NAME=value ..." first line (none when the
// first line is something else). A malformed or repeated assignment is an error.
func ParseEnvLine(data []byte) (map[string]string, error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	line := strings.TrimRight(string(first), "\r")
	rest, ok := strings.CutPrefix(line, envPrefix)
	if !ok {
		return map[string]string{}, nil
	}
	env := map[string]string{}
	for _, field := range strings.Fields(rest) {
		name, value, ok := strings.Cut(field, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("env line: %q is not NAME=value", field)
		}
		if _, dup := env[name]; dup {
			return nil, fmt.Errorf("env line: %s is set twice", name)
		}
		env[name] = value
	}
	return env, nil
}
