package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/runtime/socket"
)

// Exit codes of the inspection commands, as kubectl has them: state, a listing, exits 0 whenever it
// could read (kubectl get); diff, doctor and explain exit 1 for what they find (kubectl diff).
const (
	exitFound      = 1 // differences or failures found (diff, doctor, explain)
	exitUnreadable = 2 // nothing could be read
)

// exitError carries an exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// inspectFlags are the flags every inspection command shares.
type inspectFlags struct {
	haproxyDir, adminSocket, masterSocket, stateSocket string
	output, namespace, selector                        string
	noHeaders, watch                                   bool
	interval                                           time.Duration
	getenv                                             func(string) string
}

func (f *inspectFlags) add(a *app, cmd *cobra.Command) {
	f.getenv = a.getenv
	fl := cmd.Flags()
	fl.StringVar(&f.haproxyDir, flagHAProxyDir, defaultHAProxyDir, "HAProxy directory as haroute run lays it out (its run/ holds the sockets)")
	fl.StringVar(&f.adminSocket, flagAdminSocket, "", "HAProxy admin socket (default <haproxy-dir>/"+layout.AdminSocket+")")
	fl.StringVar(&f.masterSocket, flagMasterSocket, "", "HAProxy master socket (default $ROUTER_HAPROXY_ADMIN_UNIX_SOCKET, else <haproxy-dir>/"+layout.MasterSocket+")")
	fl.StringVar(&f.stateSocket, "state-socket", "", "haroute run's state socket (default <haproxy-dir>/"+layout.StateSocket+")")
	fl.StringVarP(&f.output, "output", "o", views.OutputTable, "output format: "+strings.Join(views.Outputs, ", "))
	fl.StringVarP(&f.namespace, "namespace", "n", "", "only the Routes of this namespace")
	fl.StringVarP(&f.selector, "selector", "l", "", "only the Routes whose labels match this selector (e.g. -l app=shop,tier!=dev)")
	fl.BoolVar(&f.noHeaders, "no-headers", false, "no header line in tables")
	fl.BoolVarP(&f.watch, "watch", "w", false, "print again every --interval until interrupted")
	fl.DurationVar(&f.interval, "interval", 2*time.Second, "how often --watch prints")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return views.Outputs, cobra.ShellCompDirectiveNoFileComp
	})
}

// filter returns the Routes the flags select.
func (f *inspectFlags) filter() (views.Filter, error) {
	sel, err := labels.Parse(f.selector)
	if err != nil {
		return views.Filter{}, fmt.Errorf("--selector %q: %w", f.selector, err)
	}
	return views.Filter{Namespace: f.namespace, Selector: sel}, nil
}

// run checks the flags and calls fn with the sockets and a context that ends on SIGINT or SIGTERM:
// the common start of every inspection command.
func (f *inspectFlags) run(cmd *cobra.Command, fn func(ctx context.Context, src views.Sources) error) error {
	src, err := f.sources()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return fn(ctx, src)
}

// print writes a view: as a table (printTable, the sources' notes on standard error when notes is
// true), or as JSON or YAML (v).
func (f *inspectFlags) print(a *app, v any, printTable func() error, notes []string) error {
	if f.output != views.OutputTable && f.output != views.OutputWide {
		return views.Print(a.stdout, f.output, v)
	}
	if err := printTable(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(a.stderr, "note: %s\n", views.Cell(n))
	}
	return nil
}

func (f *inspectFlags) sources() (views.Sources, error) {
	dir, err := filepath.Abs(f.haproxyDir)
	if err != nil {
		return views.Sources{}, fmt.Errorf("haproxy directory %q: %w", f.haproxyDir, err)
	}
	src := views.SourcesFor(dir)
	src.Admin = cmpOr(f.adminSocket, src.Admin)
	// The container that runs haroute run carries its environment: the master socket OpenShift's
	// ROUTER_HAPROXY_ADMIN_UNIX_SOCKET names is the one run uses, so kubectl exec finds it too.
	env := ""
	if f.getenv != nil {
		env = strings.TrimSpace(f.getenv("ROUTER_HAPROXY_ADMIN_UNIX_SOCKET"))
	}
	src.Master = cmpOr(f.masterSocket, cmpOr(env, src.Master))
	src.State = cmpOr(f.stateSocket, src.State)
	if !slices.Contains(views.Outputs, f.output) {
		return src, fmt.Errorf("--output %q: want one of %s", f.output, strings.Join(views.Outputs, ", "))
	}
	if f.interval <= 0 {
		return src, fmt.Errorf("--interval %v: want more than 0", f.interval)
	}
	if _, err := f.filter(); err != nil {
		return src, err
	}
	return src, nil
}

func newStateCommand(a *app) *cobra.Command {
	var f inspectFlags
	cmd := &cobra.Command{
		Use:   "state [routes|servers|certs|maps|workers]",
		Short: "Show what HAProxy really serves: an overview, or one line per Route, server, certificate, map entry or process",
		Long: "state reads haroute run's state socket and HAProxy's admin and master sockets (only show\n" +
			"commands) and shows an overview (HAProxy version, workers and their connections, reloads and\n" +
			"the last reason, runtime ops, drift, spare backends, Routes admitted / rejected / without a\n" +
			"usable server, certificates expiring), or one line per\n" +
			"  routes   Route: host, path, TLS, usable/total servers, status, last change (runtime or reload)\n" +
			"  servers  server of each Route: service, pod, address, weight, HAProxy's state\n" +
			"  certs    certificate of each Route: hosts, expiry, hosts it does not cover, loaded or not\n" +
			"  maps     map entry: the Route it leads to, the applied value and HAProxy's\n" +
			"  workers  HAProxy process: role (master, current, old), reloads, connections\n" +
			"Every view is keyed by namespace and Route (-n, -l select); -o wide adds HAProxy's names. A\n" +
			"source that cannot be read is named in a note.\n" +
			"Exit status: 0 all is well, 1 something needs a look (a Route rejected or without a usable\n" +
			"server, a failed reload, a certificate expired, a map entry that differs, a source unread), 2\n" +
			"nothing could be read.",
		Args:      cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
		ValidArgs: stateViews,
		RunE: func(cmd *cobra.Command, args []string) error {
			view := "summary"
			if len(args) == 1 {
				view = args[0]
			}
			return f.run(cmd, func(ctx context.Context, src views.Sources) error { return a.state(ctx, src, f, view) })
		},
	}
	f.add(a, cmd)
	return cmd
}

// state prints one view (or, with --watch, prints it again every interval until ctx ends).
func (a *app) state(ctx context.Context, src views.Sources, f inspectFlags, view string) error {
	for {
		err := a.stateOnce(ctx, src, f, view)
		if !f.watch {
			return err
		}
		if err != nil && !errors.As(err, new(*exitError)) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(f.interval):
		}
		fmt.Fprintln(a.stdout)
	}
}

// stateViews are the views of haroute state besides the summary.
var stateViews = []string{"routes", "servers", "certs", "maps", "workers"}

func (a *app) stateOnce(ctx context.Context, src views.Sources, f inspectFlags, view string) error {
	snap := views.Read(ctx, src)
	if !snap.Readable() {
		return &exitError{code: exitUnreadable, err: fmt.Errorf("nothing could be read: %s", strings.Join(snap.Notes, "; "))}
	}
	filter, err := f.filter()
	if err != nil {
		return err
	}
	admin := socket.NewAdmin(src.Admin, socket.Options{RetryFor: -1})
	wide, headers, now := f.output == views.OutputWide, !f.noHeaders, time.Now()
	var v any
	var printTable func() error
	switch view {
	case "routes":
		rows := snap.RoutesWhere(filter)
		v, printTable = rows, func() error { return views.PrintRoutes(a.stdout, rows, wide, headers, now) }
	case "servers":
		lines := snap.ServersWhere(filter)
		v, printTable = lines, func() error { return views.PrintServers(a.stdout, lines, wide, headers) }
	case "certs":
		snap.ReadCerts(ctx, admin)
		lines := snap.CertsWhere(filter, now)
		v, printTable = lines, func() error { return views.PrintCerts(a.stdout, lines, wide, headers, now) }
	case "maps":
		dir, err := filepath.Abs(f.haproxyDir)
		if err != nil {
			return fmt.Errorf("haproxy directory %q: %w", f.haproxyDir, err)
		}
		snap.ReadMaps(ctx, admin, dir)
		lines := snap.MapsWhere(filter)
		v, printTable = lines, func() error { return views.PrintMaps(a.stdout, lines, headers) }
	case "workers":
		lines := snap.Workers()
		v, printTable = lines, func() error { return views.PrintWorkers(a.stdout, lines, headers) }
	default:
		sum := snap.Summary()
		v, printTable = sum, func() error { return views.PrintSummary(a.stdout, sum) }
	}
	notes := snap.Notes
	if view == "summary" {
		notes = nil // the overview shows them itself
	}
	// A listing exits 0 whenever it could read, as kubectl get does, whatever it lists: a rejected
	// Route or an unread source is what it shows (the notes go to standard error), not a failure of
	// the command. diff, doctor and explain exit 1 for what they find.
	return f.print(a, v, printTable, notes)
}
