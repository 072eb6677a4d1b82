package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/spf13/cobra"

	"github.com/haroute/haroute/examples/demo"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/runtime/haproxy"
)

// Demo defaults and fixed choices.
const (
	demoHTTPPort  = 8080
	demoHTTPSPort = 8443
	demoStatsPort = 1936
	demoListen    = "127.0.0.1"
	// demoPortAttempts bounds the search for one port free on every backend address.
	demoPortAttempts = 20
	demoReadTimeout  = 10 * time.Second
	demoDomain       = "haroute.test"
)

// demoBackend is one tiny server of the demo: it answers every request with its name.
type demoBackend struct {
	name string
	ip   string
	tls  bool // serves HTTPS with a certificate for pass.<demoDomain> (the passthrough Route's pod)
}

// demoBackends are the demo's pods; the manifests in examples/demo point at these addresses.
var demoBackends = []demoBackend{
	{name: "hello", ip: "127.0.0.2"},
	{name: "api", ip: "127.0.0.3"},
	{name: "stable", ip: "127.0.0.4"},
	{name: "canary", ip: "127.0.0.5"},
	{name: "pass", ip: "127.0.0.6", tls: true},
}

// demoFlags are the values of `haroute demo`'s flags.
type demoFlags struct {
	httpPort, httpsPort, statsPort int
	haproxy                        string
}

func newDemoCommand(a *app) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run HAProxy with example Routes and local backends, and edit them live",
		Long: "demo starts five tiny backends on 127.0.0.2-127.0.0.6, copies the example manifests of\n" +
			"examples/demo (HTTP, path, edge TLS, passthrough, weighted) into a temporary folder and runs\n" +
			"`haroute run --manifests <folder> --managed-haproxy` on 127.0.0.1. It prints curl commands to try;\n" +
			"edit the files in the folder and watch the log: endpoint and Route edits apply without a reload.\n" +
			"Ctrl-C stops everything and removes the folder.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.demo(ctx, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.httpPort, flagHTTPPort, demoHTTPPort, "HTTP port on 127.0.0.1")
	fl.IntVar(&f.httpsPort, flagHTTPSPort, demoHTTPSPort, "HTTPS port on 127.0.0.1")
	fl.IntVar(&f.statsPort, flagStatsPort, demoStatsPort, "port of /healthz and /metrics on 127.0.0.1; 0 disables")
	fl.StringVar(&f.haproxy, "haproxy", defaultHAProxyBinary, "HAProxy binary to run")
	return cmd
}

// demo is `haroute demo`: it returns nil when ctx ends, after everything it started has stopped.
func (a *app) demo(ctx context.Context, f demoFlags) error {
	if err := checkDemoPorts(f); err != nil {
		return err
	}
	if st, err := os.Stat(f.haproxy); err != nil || st.IsDir() {
		return fmt.Errorf("no HAProxy binary at %s (install Debian's haproxy package: make haproxy; or use --haproxy PATH)", f.haproxy)
	}
	opts, err := mapping.FromEnv(a.getenv)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	opts.HTTPPort, opts.HTTPSPort = f.httpPort, f.httpsPort
	opts.BindAddress = demoListen
	opts.MaxConnections = 0 // ROUTER_MAX_CONNECTIONS=auto: HAProxy sizes it from its fd limit
	opts.AllowLoopbackEndpoints = true

	root, err := os.MkdirTemp("", "haroute-demo-")
	if err != nil {
		return fmt.Errorf("demo folder: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(root); err != nil {
			a.log.Warn("removing the demo folder", "dir", root, "error", err)
		}
	}()
	manifests := filepath.Join(root, "manifests")
	haproxyDir := filepath.Join(root, "haproxy")

	stopBackends, port, err := startDemoBackends()
	if err != nil {
		return err
	}
	defer stopBackends()
	if err := writeDemoManifests(manifests, port, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "haroute demo: manifests in %s, HAProxy files in %s\n", manifests, haproxyDir)

	rc := runConfig{
		settings:       renderSettings{opts: opts},
		manifests:      manifests,
		dir:            haproxyDir,
		adminSocket:    layout.For(haproxyDir).AdminSocket(),
		masterSocket:   layout.For(haproxyDir).MasterSocket(),
		managed:        f.haproxy,
		checkBinary:    f.haproxy,
		statsPort:      f.statsPort,
		statsAddress:   demoListen,
		reloadInterval: haproxy.DefaultReloadInterval,
		mode:           modeRuntime,
		driftInterval:  defaultDriftInterval,
		onReady:        func() { printDemoHelp(a.stdout, f, manifests) },
	}
	if v := strings.TrimSpace(a.getenv("RELOAD_INTERVAL")); v != "" {
		if rc.reloadInterval, err = parseInterval(v); err != nil {
			return fmt.Errorf("RELOAD_INTERVAL=%q: %w", v, err)
		}
	}
	return a.runRouter(ctx, rc)
}

// checkDemoPorts fails with a clear message when a port the demo listens on is taken.
func checkDemoPorts(f demoFlags) error {
	ports := []struct {
		flag string
		port int
	}{{flagHTTPPort, f.httpPort}, {flagHTTPSPort, f.httpsPort}, {flagStatsPort, f.statsPort}}
	seen := map[int]string{}
	for _, p := range ports {
		if p.flag == flagStatsPort && p.port == 0 {
			continue
		}
		if p.port < 1 || p.port > 65535 {
			return fmt.Errorf("--%s=%d: want a port in 1-65535", p.flag, p.port)
		}
		if other, dup := seen[p.port]; dup {
			return fmt.Errorf("--%s and --%s are both %d: give them different ports", other, p.flag, p.port)
		}
		seen[p.port] = p.flag
		l, err := net.Listen("tcp", net.JoinHostPort(demoListen, strconv.Itoa(p.port)))
		if err != nil {
			return fmt.Errorf("port %d on %s is not free (%v): choose another one with --%s", p.port, demoListen, err, p.flag)
		}
		if err := l.Close(); err != nil {
			return fmt.Errorf("port %d: %w", p.port, err)
		}
	}
	return nil
}

// startDemoBackends starts demoBackends on one port that is free on every one of their addresses and
// returns a function that stops them, and the port.
func startDemoBackends() (stop func(), port int, err error) {
	passPEM, err := selfSignedCertificate("pass."+demoDomain, []string{"pass." + demoDomain}, time.Now())
	if err != nil {
		return nil, 0, fmt.Errorf("demo backend certificate: %w", err)
	}
	passCert, err := tls.X509KeyPair(passPEM, passPEM)
	if err != nil {
		return nil, 0, fmt.Errorf("demo backend certificate: %w", err)
	}
	lns, port, err := listenDemoPort()
	if err != nil {
		return nil, 0, err
	}
	var servers []*http.Server
	done := make(chan struct{}, len(lns))
	for i, b := range demoBackends {
		ln := lns[i]
		if b.tls {
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{passCert}, MinVersion: tls.VersionTLS12})
		}
		srv := &http.Server{
			Handler:           demoHandler(b.name, lns[i].Addr().String()),
			ReadHeaderTimeout: demoReadTimeout,
			// HAProxy's health checks connect and close without a request.
			ErrorLog: log.New(io.Discard, "", 0),
		}
		servers = append(servers, srv)
		go func() {
			defer func() { done <- struct{}{} }()
			_ = srv.Serve(ln)
		}()
	}
	return func() {
		for _, s := range servers {
			_ = s.Close()
		}
		for range servers {
			<-done
		}
	}, port, nil
}

// listenDemoPort listens on one port on every demo backend address.
func listenDemoPort() ([]net.Listener, int, error) {
	var lastErr error
	for range demoPortAttempts {
		first, err := net.Listen("tcp", net.JoinHostPort(demoBackends[0].ip, "0"))
		if err != nil {
			return nil, 0, fmt.Errorf("demo backends: listen on %s (the demo needs 127.0.0.2-127.0.0.6 on loopback): %w", demoBackends[0].ip, err)
		}
		port := first.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{first}
		for _, b := range demoBackends[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(b.ip, strconv.Itoa(port)))
			if err != nil {
				lastErr = err
				break
			}
			lns = append(lns, l)
		}
		if len(lns) == len(demoBackends) {
			return lns, port, nil
		}
		for _, l := range lns {
			_ = l.Close()
		}
	}
	return nil, 0, fmt.Errorf("demo backends: no port free on all of 127.0.0.2-127.0.0.6: %w", lastErr)
}

// demoHandler answers with the backend's name and address, and the request it got.
func demoHandler(name, addr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", name)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "%s (pod %s): %s %s%s\n", name, addr, r.Method, r.Host, r.URL.RequestURI())
	})
}

// writeDemoManifests fills examples/demo's templates into dir: the backends' port and a certificate
// for the edge Route's host, generated now.
func writeDemoManifests(dir string, port int, now time.Time) error {
	host := "secure." + demoDomain
	pemData, err := selfSignedCertificate(host, []string{host}, now)
	if err != nil {
		return fmt.Errorf("edge certificate: %w", err)
	}
	certPEM, keyPEM := splitPEM(pemData)
	data := demo.Data{Port: port, EdgeCertificate: certPEM, EdgeKey: keyPEM}
	names, err := fs.Glob(demo.Templates, "*.tmpl")
	if err != nil || len(names) == 0 {
		return fmt.Errorf("demo manifests: no templates embedded (%v)", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo manifests: %w", err)
	}
	funcs := template.FuncMap{"indent": indent}
	for _, name := range names {
		text, err := fs.ReadFile(demo.Templates, name)
		if err != nil {
			return fmt.Errorf("demo manifests: %w", err)
		}
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return fmt.Errorf("demo manifests: %s: %w", name, err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return fmt.Errorf("demo manifests: %s: %w", name, err)
		}
		out := filepath.Join(dir, strings.TrimSuffix(name, ".tmpl"))
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("demo manifests: %w", err)
		}
	}
	return nil
}

// splitPEM returns the CERTIFICATE blocks and the key block of data, each PEM-encoded.
func splitPEM(data []byte) (certPEM, keyPEM string) {
	var certs, keys bytes.Buffer
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		dst := &keys
		if b.Type == "CERTIFICATE" {
			dst = &certs
		}
		_ = pem.Encode(dst, b)
	}
	return certs.String(), keys.String()
}

// indent prefixes every non-empty line of s with n spaces and drops the final newline (for YAML
// block scalars).
func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// demoEdit is one edit the demo suggests: what it prints, and what the edit is, so that a test makes
// each one exactly as printed and checks its effect.
type demoEdit struct {
	say string
	// file is the manifest edited (under the demo's folder); edit returns its new content, or rename
	// names the file it is renamed to.
	file   string
	edit   func([]byte) []byte
	rename string
	// host answers, after the edit, from these backends.
	host     string
	backends []string
}

// demoEdits are the edits the demo suggests, in order (each builds on the ones before).
var demoEdits = []demoEdit{
	{
		say:  `in 10-hello.yaml, change the address "127.0.0.2" to "127.0.0.4": hello now answers from "stable";`,
		file: "10-hello.yaml", edit: replacer(`"127.0.0.2"`, `"127.0.0.4"`),
		host: "hello", backends: []string{"stable"},
	},
	{
		say: `in 10-hello.yaml, add a second pod: a second entry under endpoints, "- addresses: ["127.0.0.3"]" with its own` + "\n" +
			`    conditions and targetRef (Kubernetes uses only the first address of an entry): hello answers from both;`,
		file: "10-hello.yaml", edit: func(b []byte) []byte {
			return append(b, []byte("- addresses: [\"127.0.0.3\"]\n  conditions: {ready: true}\n  targetRef: {kind: Pod, namespace: demo, name: hello-2}\n")...)
		},
		host: "hello", backends: []string{"stable", "api"},
	},
	{
		say:  `in 50-split.yaml, change both weights (80 and 20) to 50: split answers half and half;`,
		file: "50-split.yaml", edit: func(b []byte) []byte {
			return replacer("weight: 20", "weight: 50")(replacer("weight: 80", "weight: 50")(b))
		},
		host: "split", backends: []string{"stable", "canary"},
	},
	{
		say:  `rename 60-more.yaml.off to 60-more.yaml: a new Route, http://more.haroute.test/, served without a reload; delete it again.`,
		file: "60-more.yaml.off", rename: "60-more.yaml",
		host: "more", backends: []string{"stable", "api"},
	},
}

func replacer(old, repl string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(old), []byte(repl)) }
}

// printDemoHelp prints what to try once the demo serves.
func printDemoHelp(w io.Writer, f demoFlags, manifests string) {
	h, s := strconv.Itoa(f.httpPort), strconv.Itoa(f.httpsPort)
	resolve := func(host, port string) string {
		return "--resolve " + host + "." + demoDomain + ":" + port + ":" + demoListen
	}
	var b strings.Builder
	b.WriteString("\nharoute demo is serving on " + demoListen + ":" + h + " (http) and :" + s + " (https). Try:\n\n")
	b.WriteString("  curl " + resolve("hello", h) + " http://hello." + demoDomain + ":" + h + "/\n")
	b.WriteString("  curl -H 'Host: hello." + demoDomain + "' http://" + demoListen + ":" + h + "/api/users\n")
	b.WriteString("  curl -k " + resolve("secure", s) + " https://secure." + demoDomain + ":" + s + "/\n")
	b.WriteString("  curl -i -H 'Host: secure." + demoDomain + "' http://" + demoListen + ":" + h + "/      (redirected to https)\n")
	b.WriteString("  curl -k " + resolve("pass", s) + " https://pass." + demoDomain + ":" + s + "/      (passthrough: the pod's own certificate)\n")
	b.WriteString("  for i in $(seq 20); do curl -s -H 'Host: split." + demoDomain + "' http://" + demoListen + ":" + h + "/; done | cut -d' ' -f1 | sort | uniq -c\n")
	if f.statsPort > 0 {
		b.WriteString("  curl -s http://" + demoListen + ":" + strconv.Itoa(f.statsPort) + "/metrics | grep ^haroute_\n")
	}
	b.WriteString("\nEdit the manifests in " + manifests + " while it runs, for example:\n")
	for _, e := range demoEdits {
		b.WriteString("  - " + e.say + "\n")
	}
	b.WriteString("Each change logs one sync line: these need no reload (reloaded=false). Ctrl-C stops everything.\n\n")
	_, _ = io.WriteString(w, b.String())
}
