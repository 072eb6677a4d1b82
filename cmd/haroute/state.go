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

	"github.com/haroute/haroute/sync/inspect"
)

// Exit codes of the inspection commands, as kubectl diff has them.
const (
	exitFound      = 1 // differences or failures found
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
	output, namespace                                  string
	noHeaders, watch                                   bool
	interval                                           time.Duration
}

func (f *inspectFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.haproxyDir, flagHAProxyDir, defaultHAProxyDir, "HAProxy directory as `haroute run` lays it out (its run/ holds the sockets)")
	fl.StringVar(&f.adminSocket, flagAdminSocket, "", "HAProxy admin socket (default <haproxy-dir>/"+adminSocketFile+")")
	fl.StringVar(&f.masterSocket, flagMasterSocket, "", "HAProxy master socket (default <haproxy-dir>/"+masterSocketFile+")")
	fl.StringVar(&f.stateSocket, "state-socket", "", "haroute run's state socket (default <haproxy-dir>/"+inspect.StateSocketFile+")")
	fl.StringVarP(&f.output, "output", "o", inspect.OutputTable, "output format: "+strings.Join(inspect.Outputs, ", "))
	fl.StringVarP(&f.namespace, "namespace", "n", "", "only the Routes of this namespace")
	fl.BoolVar(&f.noHeaders, "no-headers", false, "no header line in tables")
	fl.BoolVarP(&f.watch, "watch", "w", false, "print again every --interval until interrupted")
	fl.DurationVar(&f.interval, "interval", 2*time.Second, "how often --watch prints")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return inspect.Outputs, cobra.ShellCompDirectiveNoFileComp
	})
}

func (f *inspectFlags) sources() (inspect.Sources, error) {
	dir, err := filepath.Abs(f.haproxyDir)
	if err != nil {
		return inspect.Sources{}, fmt.Errorf("haproxy directory %q: %w", f.haproxyDir, err)
	}
	src := inspect.SourcesFor(dir)
	src.Admin = cmpOr(f.adminSocket, src.Admin)
	src.Master = cmpOr(f.masterSocket, src.Master)
	src.State = cmpOr(f.stateSocket, src.State)
	if !slices.Contains(inspect.Outputs, f.output) {
		return src, fmt.Errorf("--output %q: want one of %s", f.output, strings.Join(inspect.Outputs, ", "))
	}
	if f.interval <= 0 {
		return src, fmt.Errorf("--interval %v: want more than 0", f.interval)
	}
	return src, nil
}

func newStateCommand(a *app) *cobra.Command {
	var f inspectFlags
	cmd := &cobra.Command{
		Use:   "state [routes]",
		Short: "Show what HAProxy really serves: an overview, or one line per Route",
		Long: "state reads haroute run's state socket and HAProxy's admin and master sockets (only show\n" +
			"commands) and shows an overview (HAProxy version, workers, reloads and the last reason, runtime\n" +
			"ops, drift, spare backends, Routes admitted / rejected / without a usable server), or with\n" +
			"\"routes\" one line per Route: host, path, TLS, usable/total servers as HAProxy reports them,\n" +
			"and its status. A source that cannot be read is named in a note.\n" +
			"Exit status: 0 all is well, 1 a Route is rejected or has no usable server, a reload failed or a\n" +
			"source could not be read, 2 nothing could be read.",
		Args:      cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"routes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := f.sources()
			if err != nil {
				return err
			}
			view := "summary"
			if len(args) == 1 {
				view = args[0]
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.state(ctx, src, f, view)
		},
	}
	f.add(cmd)
	return cmd
}

// state prints one view (or, with --watch, prints it again every interval until ctx ends).
func (a *app) state(ctx context.Context, src inspect.Sources, f inspectFlags, view string) error {
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

func (a *app) stateOnce(ctx context.Context, src inspect.Sources, f inspectFlags, view string) error {
	snap := inspect.Read(ctx, src)
	if !snap.Readable() {
		return &exitError{code: exitUnreadable, err: fmt.Errorf("nothing could be read: %s", strings.Join(snap.Notes, "; "))}
	}
	sum := snap.Summary()
	var err error
	switch {
	case view == "routes" && (f.output == inspect.OutputTable || f.output == inspect.OutputWide):
		err = inspect.PrintRoutes(a.stdout, snap.Routes(f.namespace), f.output == inspect.OutputWide, !f.noHeaders)
		for _, n := range snap.Notes {
			fmt.Fprintf(a.stderr, "note: %s\n", inspect.Cell(n))
		}
	case view == "routes":
		err = inspect.Print(a.stdout, f.output, snap.Routes(f.namespace))
	case f.output == inspect.OutputTable || f.output == inspect.OutputWide:
		err = inspect.PrintSummary(a.stdout, sum)
	default:
		err = inspect.Print(a.stdout, f.output, sum)
	}
	if err != nil {
		return err
	}
	if sum.Rejected > 0 || sum.NoServer > 0 || sum.FailedReloads > 0 || len(snap.Notes) > 0 {
		return &exitError{code: exitFound, err: fmt.Errorf("%d Routes rejected, %d without a usable server, %d failed reloads, %d sources unread",
			sum.Rejected, sum.NoServer, sum.FailedReloads, len(snap.Notes))}
	}
	return nil
}
