package main

import (
	"maps"
	"strings"

	"github.com/spf13/pflag"

	"github.com/haroute/haroute/inspect/stateapi"
)

// envRecorder is a getenv that remembers every variable asked for and its value, so that run can
// say on its state socket what its translation settings come from.
type envRecorder struct {
	get  func(string) string
	seen map[string]string
}

func newEnvRecorder(get func(string) string) *envRecorder {
	return &envRecorder{get: get, seen: map[string]string{}}
}

func (r *envRecorder) getenv(name string) string {
	v := r.get(name)
	r.seen[name] = v
	return v
}

// secretWords mark the variables whose values the state socket never carries.
var secretWords = []string{"PASSWORD", "TOKEN", "SECRET"}

// values returns the variables asked for, without those whose names mark a secret and those that
// hold key or certificate material (DEFAULT_CERTIFICATE holds the default certificate's key).
func (r *envRecorder) values() map[string]string {
	out := maps.Clone(r.seen)
	for name, v := range out {
		if strings.Contains(v, "-----BEGIN") || strings.Contains(v, "PRIVATE KEY") {
			delete(out, name)
			continue
		}
		for _, w := range secretWords {
			if strings.Contains(strings.ToUpper(name), w) {
				delete(out, name)
			}
		}
	}
	return out
}

// settingsFlagNames are the flags addSettingsFlags defines.
func settingsFlagNames() []string {
	var rf renderFlags
	fs := pflag.NewFlagSet("settings", pflag.ContinueOnError)
	addSettingsFlags(fs, &rf, "")
	var out []string
	fs.VisitAll(func(f *pflag.Flag) { out = append(out, f.Name) })
	return out
}

// runSettingsOf returns what run's translation settings come from: the environment rec recorded and
// the settings flags set on fl.
func runSettingsOf(rec *envRecorder, fl *pflag.FlagSet) *stateapi.RunSettings {
	rs := &stateapi.RunSettings{Env: rec.values()}
	for _, name := range settingsFlagNames() {
		if f := fl.Lookup(name); f != nil && f.Changed {
			if rs.Flags == nil {
				rs.Flags = map[string]string{}
			}
			rs.Flags[name] = f.Value.String()
		}
	}
	return rs
}

// routerSettings returns the settings flags of a running router (rs.Flags) applied to a fresh set of
// them, and rs's environment as a getenv: what the inspection commands translate with by default.
// local is the command's own flag set: a settings flag set there wins.
func routerSettings(rs *stateapi.RunSettings, local *pflag.FlagSet) (renderFlags, func(string) bool, func(string) string, error) {
	var rf renderFlags
	fs := pflag.NewFlagSet("router", pflag.ContinueOnError)
	addSettingsFlags(fs, &rf, "")
	for name, v := range rs.Flags {
		if err := fs.Set(name, v); err != nil {
			return rf, nil, nil, err
		}
	}
	var err error
	local.Visit(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) != nil && err == nil {
			err = fs.Set(f.Name, f.Value.String())
		}
	})
	env := maps.Clone(rs.Env)
	return rf, fs.Changed, func(name string) string { return env[name] }, err
}
