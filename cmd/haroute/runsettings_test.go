package main

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/haroute/haroute/inspect/stateapi"
)

// TestRunSettingsRoundTrip: what run records of its settings (its environment without secrets, the
// settings flags it was given) gives the inspection commands the same settings, and a settings flag
// given to the command itself wins.
func TestRunSettingsRoundTrip(t *testing.T) {
	env := map[string]string{"ROUTER_SERVICE_HTTP_PORT": "8080", "STATS_PASSWORD": "hunter2", "ROUTER_SUBDOMAIN": "",
		"DEFAULT_CERTIFICATE": "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\ny\n"}
	rec := newEnvRecorder(func(k string) string { return env[k] })
	for k := range env {
		rec.getenv(k)
	}
	run := pflag.NewFlagSet("run", pflag.ContinueOnError)
	var rf renderFlags
	addSettingsFlags(run, &rf, "")
	run.Bool("once", false, "")
	if err := run.Parse([]string{"--allow-loopback-endpoints", "--https-port=9443", "--once"}); err != nil {
		t.Fatal(err)
	}
	rs := runSettingsOf(rec, run)
	if _, ok := rs.Env["STATS_PASSWORD"]; ok || rs.Env["ROUTER_SERVICE_HTTP_PORT"] != "8080" || len(rs.Env) != 2 {
		// ROUTER_SUBDOMAIN ("") stays: a variable read and not set is part of the settings.
		t.Fatalf("recorded environment %v", rs.Env)
	}
	if len(rs.Flags) != 2 || rs.Flags[flagAllowLoopback] != "true" || rs.Flags[flagHTTPSPort] != "9443" {
		t.Fatalf("recorded flags %v", rs.Flags)
	}

	local := pflag.NewFlagSet("diff", pflag.ContinueOnError)
	local.Bool(flagAllowLoopback, false, "")
	if err := local.Parse([]string{"--allow-loopback-endpoints=false"}); err != nil {
		t.Fatal(err)
	}
	got, changed, getenv, err := routerSettings(&stateapi.RunSettings{Env: rs.Env, Flags: rs.Flags}, local)
	if err != nil {
		t.Fatal(err)
	}
	if got.httpsPort != 9443 || !changed(flagHTTPSPort) || got.allowLoopback || !changed(flagAllowLoopback) || changed(flagHTTPPort) {
		t.Fatalf("settings %+v", got)
	}
	if getenv("ROUTER_SERVICE_HTTP_PORT") != "8080" || getenv("STATS_PASSWORD") != "" {
		t.Fatal("the router's environment is not the one recorded")
	}
}
