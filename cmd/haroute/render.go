package main

import (
	"cmp"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/sync/source"
)

// renderFlags are the values of `haroute render`'s flags.
type renderFlags struct {
	manifests          string
	haproxyDir         string
	httpPort           int
	httpsPort          int
	bindAddress        string
	template           string
	defaultCertificate string
	allowLoopback      bool
	allowWildcard      bool
	subdomain          string
}

// Flag names that override an environment variable when set.
const (
	flagHTTPPort      = "http-port"
	flagHTTPSPort     = "https-port"
	flagBindAddress   = "bind-address"
	flagTemplate      = "template"
	flagDefaultCert   = "default-certificate"
	flagAllowLoopback = "allow-loopback-endpoints"
	flagAllowWildcard = "allow-wildcard-routes"
	flagSubdomain     = "subdomain"
)

func newRenderCommand(a *app) *cobra.Command {
	var f renderFlags
	cmd := &cobra.Command{
		Use:   "render --manifests DIR --haproxy-dir OUT",
		Short: "Render the HAProxy configuration for a folder of manifests",
		Long: "render reads Routes, Services, EndpointSlices, Namespaces and Secrets from the YAML and JSON files\n" +
			"under DIR and writes OUT/conf/haproxy.cfg with the backend files of OUT/conf/backends, the map files,\n" +
			"crt-list and certificates. The files refer to each other by absolute paths, so\n" +
			"`haproxy -c -f OUT/conf/haproxy.cfg -f OUT/conf/backends` works as is.\n" +
			"Settings come from OpenShift's environment variables (ROUTER_*); flags that are set override them.\n" +
			"Rejected Routes are reported on stderr and do not fail the command.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.render(f, cmd.Flags().Changed)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.manifests, "manifests", "", "folder of manifest files (*.yaml, *.yml, *.json; read recursively)")
	fl.StringVar(&f.haproxyDir, "haproxy-dir", "", "HAProxy directory to write conf/, router/ and run/ into")
	addSettingsFlags(fl, &f, "without it a self-signed one is kept in OUT")
	for _, name := range []string{"manifests", "haproxy-dir"} {
		if err := cmd.MarkFlagRequired(name); err != nil {
			// Only fails for a flag that does not exist, which the lines above rule out.
			a.log.Error("marking flag required", "flag", name, "err", err)
		}
	}
	return cmd
}

// addSettingsFlags registers the settings flags render and run share (ports, bind address, template,
// default certificate, loopback endpoints, wildcard Routes, subdomain); certNote ends the help of
// --default-certificate with what happens without it.
func addSettingsFlags(fl *pflag.FlagSet, f *renderFlags, certNote string) {
	def := mapping.DefaultOptions()
	fl.IntVar(&f.httpPort, flagHTTPPort, def.HTTPPort, "public HTTP port [ROUTER_SERVICE_HTTP_PORT]")
	fl.IntVar(&f.httpsPort, flagHTTPSPort, def.HTTPSPort, "public HTTPS port [ROUTER_SERVICE_HTTPS_PORT]")
	fl.StringVar(&f.bindAddress, flagBindAddress, "", "address the public listeners bind to; empty: all [ROUTER_BIND_ADDRESS]")
	fl.StringVar(&f.template, flagTemplate, "", "custom haproxy.cfg template [TEMPLATE_FILE]")
	fl.StringVar(&f.defaultCertificate, flagDefaultCert, "",
		"PEM file with the default certificate and its key [DEFAULT_CERTIFICATE_PATH]; "+certNote)
	fl.BoolVar(&f.allowLoopback, flagAllowLoopback, false, "admit endpoint addresses on loopback (folder mode and demos only)")
	fl.BoolVar(&f.allowWildcard, flagAllowWildcard, false, "admit wildcard Routes [ROUTER_ALLOW_WILDCARD_ROUTES]")
	fl.StringVar(&f.subdomain, flagSubdomain, "", "host template for Routes without spec.host, e.g. ${name}-${namespace}.apps.example.com [ROUTER_SUBDOMAIN]")
}

// renderSettings are the resolved inputs of a render besides the manifests.
type renderSettings struct {
	opts         mapping.Options
	templatePath string
	// listener names the router's own TLS files (default certificate, client CA and CRLs).
	listener listenerSettings
	// errorPage503 and errorPage404 are the files of HAProxy's error pages (ROUTER_ERRORFILE_503,
	// ROUTER_ERRORFILE_404); empty: haroute's own pages.
	errorPage503, errorPage404 string
}

// settings resolves options: OpenShift's environment first, then the flags the user set.
func (a *app) settings(f renderFlags, changed func(string) bool) (renderSettings, error) {
	opts, err := mapping.FromEnv(a.getenv)
	if err != nil {
		return renderSettings{}, fmt.Errorf("settings: %w", err)
	}
	s := renderSettings{
		templatePath: strings.TrimSpace(a.getenv("TEMPLATE_FILE")),
		errorPage503: strings.TrimSpace(a.getenv("ROUTER_ERRORFILE_503")),
		errorPage404: strings.TrimSpace(a.getenv("ROUTER_ERRORFILE_404")),
	}
	var errs []error
	if s.listener, err = a.listenerSettingsFromEnv(opts.ClientTLS.Verify); err != nil {
		errs = append(errs, err)
	}
	port := func(name string, v int, dst *int) {
		if !changed(name) {
			return
		}
		if v < 1 || v > 65535 {
			errs = append(errs, fmt.Errorf("--%s=%d: want a port in 1-65535", name, v))
			return
		}
		*dst = v
	}
	port(flagHTTPPort, f.httpPort, &opts.HTTPPort)
	port(flagHTTPSPort, f.httpsPort, &opts.HTTPSPort)
	if changed(flagBindAddress) {
		opts.BindAddress = f.bindAddress
	}
	if changed(flagTemplate) {
		s.templatePath = f.template
	}
	if changed(flagDefaultCert) {
		s.listener.defaultCertPath = f.defaultCertificate
	}
	if changed(flagAllowLoopback) {
		opts.AllowLoopbackEndpoints = f.allowLoopback
	}
	if changed(flagAllowWildcard) {
		opts.AllowWildcardRoutes = f.allowWildcard
	}
	if changed(flagSubdomain) {
		opts.Subdomain = f.subdomain
	}
	if err := opts.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return renderSettings{}, fmt.Errorf("settings: %w", err)
	}
	s.opts = opts
	return s, nil
}

// render is `haroute render`: manifests → Translate → Render → files under OUT.
func (a *app) render(f renderFlags, changed func(string) bool) error {
	s, err := a.settings(f, changed)
	if err != nil {
		return err
	}
	out, err := filepath.Abs(f.haproxyDir)
	if err != nil {
		return fmt.Errorf("haproxy directory %q: %w", f.haproxyDir, err)
	}
	in, err := source.LoadDir(f.manifests)
	if err != nil {
		return err
	}
	lw, err := a.listenerWatcher(context.Background(), s, out)
	if err != nil {
		return err
	}
	if lw != nil {
		in.Listener = lw.Files()
	}
	ro, err := a.renderOptions(s, out, in.Listener)
	if err != nil {
		return err
	}

	// As `haroute run` does, so that render writes the files run starts HAProxy from.
	s.opts.MaxConnections = fitMaxConn(a.log, s.opts.MaxConnections, strings.TrimSpace(a.getenv("ROUTER_MAX_CONNECTIONS")) == "", false)
	cfg, problems := mapping.Translate(in, s.opts)
	rejected := a.reportProblems(problems)
	// The same files `haroute run` starts HAProxy from: the initial plan, spare pool included.
	inst, err := haproxy.New(haproxy.Config{Dir: out, Render: ro})
	if err != nil {
		return err
	}
	first, err := inst.WriteInitial(cfg)
	if err != nil {
		return err
	}
	servers, spares := 0, 0
	for _, b := range first.State.Backends {
		servers += len(b.Servers)
		if b.Spare {
			spares++
		}
	}
	_, err = fmt.Fprintf(a.stdout, "%d routes admitted, %d rejected; %d backends (%d spare), %d servers; config: %s\n",
		len(first.State.Routes), rejected, len(first.State.Backends), spares, servers, layout.For(out).Config())
	return err
}

// renderOptions loads what a render into the HAProxy directory out needs besides the model: the
// custom template, the error pages and the default certificate (the listener files', else the one
// kept in out, else a new self-signed one).
func (a *app) renderOptions(s renderSettings, out string, files model.ListenerFiles) (render.Options, error) {
	ro := render.Options{Dir: out, Env: a.getenv}
	if s.templatePath != "" {
		text, err := os.ReadFile(s.templatePath)
		if err != nil {
			return ro, fmt.Errorf("template: %w", err)
		}
		if ro.Template, err = render.ParseTemplate(filepath.Base(s.templatePath), string(text)); err != nil {
			return ro, fmt.Errorf("template %s: %w", s.templatePath, err)
		}
	}
	var err error
	for _, p := range []struct {
		name, path string
		dst        *[]byte
	}{{"ROUTER_ERRORFILE_503", s.errorPage503, &ro.ErrorPage503}, {"ROUTER_ERRORFILE_404", s.errorPage404, &ro.ErrorPage404}} {
		if p.path == "" {
			continue
		}
		if *p.dst, err = os.ReadFile(p.path); err != nil {
			return ro, fmt.Errorf("%s: %w", p.name, err)
		}
		if err := render.CheckErrorPage(*p.dst); err != nil {
			return ro, fmt.Errorf("%s: %s: %w", p.name, p.path, err)
		}
	}
	if p := s.opts.DefaultDestinationCAFile; p != "" {
		// HAProxy reads it for every reencrypt server that has no CA of its own: a file that is not
		// there would make it refuse the configuration (OpenShift's router refuses to start too).
		if err := checkCABundle(p); err != nil {
			return ro, fmt.Errorf("DEFAULT_DESTINATION_CA_PATH: %w", err)
		}
	}
	if files.DefaultCertificate != "" {
		ro.DefaultCertificatePEM = []byte(files.DefaultCertificate)
		return ro, nil
	}
	ro.DefaultCertificatePEM, err = a.keptDefaultCertificate(out, s.opts.Domain)
	return ro, err
}

// reportProblems prints each problem on stderr, sorted, and returns how many Routes were rejected.
func (a *app) reportProblems(problems []mapping.Problem) int {
	sorted := slices.Clone(problems)
	slices.SortStableFunc(sorted, func(x, y mapping.Problem) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name),
			cmp.Compare(x.Reason, y.Reason), cmp.Compare(x.Message, y.Message))
	})
	rejected := map[string]bool{}
	for _, p := range sorted {
		id := p.Namespace + "/" + p.Name
		if p.Warning {
			fmt.Fprintf(a.stderr, "warning: route %s: %s: %s\n", id, p.Reason, p.Message)
			continue
		}
		rejected[id] = true
		fmt.Fprintf(a.stderr, "route %s rejected: %s: %s\n", id, p.Reason, p.Message)
	}
	return len(rejected)
}

// checkCABundle returns an error unless the file p holds at least one PEM certificate.
func checkCABundle(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return fmt.Errorf("%s: no PEM certificate", p)
		}
		if b.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(b.Bytes); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			return nil
		}
	}
}
