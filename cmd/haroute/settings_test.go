package main

import (
	"strings"
	"testing"
)

func TestSettingsEnvThenFlags(t *testing.T) {
	env := map[string]string{
		"ROUTER_SERVICE_HTTP_PORT":     "8080",
		"ROUTER_SERVICE_HTTPS_PORT":    "8443",
		"ROUTER_BIND_ADDRESS":          "127.0.0.2",
		"ROUTER_ALLOW_WILDCARD_ROUTES": "true",
		"ROUTER_SUBDOMAIN":             "${name}.env.example.com",
		"TEMPLATE_FILE":                "/env/template",
		"DEFAULT_CERTIFICATE_PATH":     "/env/cert.pem",
	}
	a := &app{getenv: func(k string) string { return env[k] }}

	// Nothing set on the command line: the environment wins over the flag defaults.
	none := func(string) bool { return false }
	s, err := a.settings(renderFlags{httpPort: 80, httpsPort: 443}, none)
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.HTTPPort != 8080 || s.opts.HTTPSPort != 8443 || s.opts.BindAddress != "127.0.0.2" ||
		!s.opts.AllowWildcardRoutes || s.opts.Subdomain != "${name}.env.example.com" ||
		s.templatePath != "/env/template" || s.listener.defaultCertPath != "/env/cert.pem" || s.opts.AllowLoopbackEndpoints {
		t.Errorf("env settings not applied: %+v", s)
	}

	// Every flag set: flags win.
	f := renderFlags{httpPort: 9080, httpsPort: 9443, bindAddress: "127.0.0.3", template: "/flag/t",
		defaultCertificate: "/flag/c.pem", allowLoopback: true, allowWildcard: false, subdomain: "${name}.flag.example.com"}
	s, err = a.settings(f, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.HTTPPort != 9080 || s.opts.HTTPSPort != 9443 || s.opts.BindAddress != "127.0.0.3" ||
		s.opts.AllowWildcardRoutes || s.opts.Subdomain != "${name}.flag.example.com" ||
		s.templatePath != "/flag/t" || s.listener.defaultCertPath != "/flag/c.pem" || !s.opts.AllowLoopbackEndpoints {
		t.Errorf("flags did not override: %+v", s)
	}

	// Only one flag set: only that one overrides.
	s, err = a.settings(renderFlags{httpPort: 1234, httpsPort: 443}, func(n string) bool { return n == flagHTTPPort })
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.HTTPPort != 1234 || s.opts.HTTPSPort != 8443 {
		t.Errorf("ports = %d/%d, want 1234/8443", s.opts.HTTPPort, s.opts.HTTPSPort)
	}
}

func TestSettingsErrors(t *testing.T) {
	bad := &app{getenv: func(k string) string {
		return map[string]string{"ROUTER_SERVICE_HTTP_PORT": "eighty", "ROUTER_LOAD_BALANCE_ALGORITHM": "static-rr"}[k]
	}}
	_, err := bad.settings(renderFlags{}, func(string) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "ROUTER_SERVICE_HTTP_PORT") || !strings.Contains(err.Error(), "static-rr") {
		t.Errorf("bad environment: error = %v", err)
	}

	good := &app{getenv: func(string) string { return "" }}
	_, err = good.settings(renderFlags{httpsPort: 70000}, func(n string) bool { return n == flagHTTPSPort })
	if err == nil || !strings.Contains(err.Error(), "--https-port=70000") {
		t.Errorf("bad flag: error = %v", err)
	}
	_, err = good.settings(renderFlags{bindAddress: "127.0.0.1 #"}, func(n string) bool { return n == flagBindAddress })
	if err == nil {
		t.Error("bind address with a space and '#' accepted")
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t, nil, "version")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.HasPrefix(r.stdout, "haroute "+version+" (go") {
		t.Errorf("version output %q", r.stdout)
	}
}

func TestOneLine(t *testing.T) {
	r := runCLI(t, map[string]string{"ROUTER_THREADS": "x", "ROUTER_BUF_SIZE": "1"},
		"render", "--manifests", t.TempDir(), "--haproxy-dir", t.TempDir())
	if r.err == nil {
		t.Fatal("bad settings accepted")
	}
	msg := oneLine(r.err)
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "ROUTER_THREADS") || !strings.Contains(msg, "ROUTER_BUF_SIZE") {
		t.Errorf("oneLine = %q", msg)
	}
}
