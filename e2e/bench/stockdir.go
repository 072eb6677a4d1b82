//go:build e2e

package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// haproxyHome is where the stock router's template, reload script and HAProxy expect their files.
const haproxyHome = "/var/lib/haproxy"

// What the build directory of tools/build-stock-router.sh holds.
const (
	stockBinary   = "openshift-router"
	stockTemplate = "haproxy-config.template"
	stockReload   = "reload-haproxy"
	stockCommit   = "COMMIT"
)

// stockDirs are the directories the router image creates under /var/lib/haproxy (its Dockerfile:
// router/{certs,cacerts,allowlists}, conf/.tmp, run, bin, log, mtls) plus router/whitelists, the
// allowlists' former name.
var stockDirs = []string{
	"conf/.tmp", "run", "bin", "log", "mtls",
	"router/certs", "router/cacerts", "router/allowlists", "router/whitelists",
}

// stockMaps are the files the image creates empty in conf/ (its Dockerfile's touch).
var stockMaps = []string{
	"os_http_be.map", "os_edge_reencrypt_be.map", "os_tcp_be.map", "os_sni_passthrough.map",
	"os_route_http_redirect.map", "cert_config.map", "os_wildcard_domain.map", "haproxy.config",
}

// scriptHAProxyLine is a line of the reload script that starts HAProxy: an absolute path to an
// executable named haproxy, then its -f option.
var scriptHAProxyLine = regexp.MustCompile(`^\s*(/\S*/haproxy)\s+-f\s`)

// scriptHAProxy returns the HAProxy executable the build's reload script (OpenShift's own) runs, as
// the script writes it: the benchmark mounts the selected binary there. Every line that starts HAProxy
// must name the same one.
func scriptHAProxy(build string) (string, error) {
	b, err := os.ReadFile(filepath.Join(build, stockReload))
	if err != nil {
		return "", fmt.Errorf("stock router: reload script: %w", err)
	}
	path := ""
	for _, line := range strings.Split(string(b), "\n") {
		m := scriptHAProxyLine.FindStringSubmatch(line)
		switch {
		case m == nil:
		case path != "" && m[1] != path:
			return "", fmt.Errorf("stock router: reload script runs two HAProxy executables, %s and %s", path, m[1])
		default:
			path = m[1]
		}
	}
	if path == "" {
		return "", fmt.Errorf("stock router: no line of %s starts HAProxy (<path>/haproxy -f ...)", stockReload)
	}
	return path, nil
}

// wildcardBind is a template line that binds a port on every IPv4 address: `bind :{{ … }}`.
// `bind :::{{ … }}` (IPv6, only rendered with ROUTER_IP_V4_V6_MODE v6 or v4v6) does not match.
var wildcardBind = regexp.MustCompile(`(?m)^(\s*bind )(:\{\{)`)

// checkStockBuild returns an error saying how to build the stock router when build is not a directory
// written by tools/build-stock-router.sh.
func checkStockBuild(build string) error {
	if build == "" {
		return fmt.Errorf("%s is not set: build the stock OpenShift router with "+
			"`tools/build-stock-router.sh DIR` (STOCK_ROUTER_SRC=CHECKOUT to build a local checkout) "+
			"and run the benchmark with %s=DIR", StockEnv, StockEnv)
	}
	for _, name := range []string{stockBinary, stockTemplate, stockReload} {
		if _, err := os.Stat(filepath.Join(build, name)); err != nil {
			return fmt.Errorf("%s=%s is no output of tools/build-stock-router.sh (rebuild it): %w", StockEnv, build, err)
		}
	}
	return nil
}

// prepareStockHome fills home, the directory mounted on /var/lib/haproxy, as the router image lays it
// out: the directories and empty maps, conf/ with the template and the error pages, and the reload
// script. The template's IPv4 wildcard binds become 127.0.0.1 binds (the benchmark stays on loopback,
// as haroute does with --bind-address 127.0.0.1); nothing else of the stock files changes.
func prepareStockHome(build, home string) error {
	for _, d := range stockDirs {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			return fmt.Errorf("stock router home: %w", err)
		}
	}
	for _, m := range stockMaps {
		if err := os.WriteFile(filepath.Join(home, "conf", m), nil, 0o644); err != nil {
			return fmt.Errorf("stock router home: %w", err)
		}
	}
	tmpl, err := os.ReadFile(filepath.Join(build, stockTemplate))
	if err != nil {
		return fmt.Errorf("stock router template: %w", err)
	}
	if len(wildcardBind.FindAll(tmpl, -1)) == 0 {
		return fmt.Errorf("stock router template %s: no `bind :{{` line to put on 127.0.0.1", filepath.Join(build, stockTemplate))
	}
	tmpl = wildcardBind.ReplaceAll(tmpl, []byte("${1}127.0.0.1${2}"))
	if err := os.WriteFile(filepath.Join(home, "conf", stockTemplate), tmpl, 0o644); err != nil {
		return fmt.Errorf("stock router template: %w", err)
	}
	pages, err := filepath.Glob(filepath.Join(build, "error-page-*.http"))
	if err != nil || len(pages) == 0 {
		return fmt.Errorf("stock router error pages: none in %s (%v)", build, err)
	}
	for _, p := range pages {
		if err := copyFile(p, filepath.Join(home, "conf", filepath.Base(p)), 0o644); err != nil {
			return err
		}
	}
	return copyFile(filepath.Join(build, stockReload), filepath.Join(home, stockReload), 0o755)
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

// checkLoopbackBinds returns an error when the rendered configuration binds a wildcard address.
func checkLoopbackBinds(config string) error {
	f, err := os.Open(config)
	if err != nil {
		return fmt.Errorf("rendered configuration: %w", err)
	}
	defer f.Close()
	var bad []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "bind :") || strings.HasPrefix(line, "bind *") {
			bad = append(bad, line)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("rendered configuration %s: %w", config, err)
	}
	if len(bad) > 0 {
		return errors.New("rendered configuration " + config + " binds wildcard addresses: " + strings.Join(bad, "; "))
	}
	return nil
}

// buildCommit returns the commit tools/build-stock-router.sh recorded ("unknown" when none).
func buildCommit(build string) string {
	b, err := os.ReadFile(filepath.Join(build, stockCommit))
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
