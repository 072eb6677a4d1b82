package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
	"github.com/haroute/haroute/sync/controller"
	"github.com/haroute/haroute/sync/source"
)

// diffSyncTimeout bounds the wait for the cluster's first complete snapshot.
const diffSyncTimeout = 60 * time.Second

func newDiffCommand(a *app) *cobra.Command {
	var f inspectFlags
	var manifests, kubeconfig string
	var noDesired, allowLoopback, localSettings bool
	cmd := &cobra.Command{
		Use:   "diff [--manifests DIR | --kubeconfig FILE | --no-desired]",
		Short: "Compare the desired state, what haroute applied, what HAProxy runs and the files on disk",
		Long: "diff translates the Routes (from --manifests DIR, or the cluster as run reads it: --kubeconfig or\n" +
			"in-cluster) with the same settings and the same translation as run, and compares, Route by Route,\n" +
			"the desired state, the state haroute run applied (its state socket), what HAProxy runs (its\n" +
			"servers and map entries, asked with show commands) and the files on disk (haproxy.cfg's server\n" +
			"lines and the map files). Each row is one Route, server or map entry and says why it is there:\n" +
			"  pending     desired differs from applied: the next sync applies it\n" +
			"  drift       HAProxy differs from applied: the next drift check repairs it\n" +
			"  held        a server an operator keeps in maintenance or drain (left alone)\n" +
			"  stale-file  the files differ from HAProxy: a reload or restart would change traffic\n" +
			"It translates with the settings of the running router, which its state socket names (the\n" +
			"ROUTER_* environment and the settings flags run was given), and says so; a settings flag given\n" +
			"here (--allow-loopback-endpoints) overrides, and --local-settings uses this command's own\n" +
			"environment and flags instead. --no-desired compares the other three only.\n" +
			"Exit status: 0 no difference, 1 differences, 2 could not read.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, src views.Sources) error {
				var desired *model.Config
				if !noDesired {
					rf := renderFlags{allowLoopback: allowLoopback}
					changed := func(name string) bool { return name == flagAllowLoopback && cmd.Flags().Changed(name) }
					b := a
					if !localSettings {
						var err error
						if b, rf, changed, err = a.withRouterSettings(ctx, src, cmd.Flags(), rf, changed); err != nil {
							return &exitError{code: exitUnreadable, err: err}
						}
					}
					var err error
					if desired, err = b.desiredState(ctx, rf, changed, manifests, kubeconfig); err != nil {
						return &exitError{code: exitUnreadable, err: err}
					}
				}
				return a.diff(ctx, src, f, desired)
			})
		},
	}
	f.add(a, cmd)
	fl := cmd.Flags()
	fl.StringVar(&manifests, flagManifests, "", "the desired state from this folder of manifests")
	fl.StringVar(&kubeconfig, flagKubeconfig, "", "the desired state from the cluster of this kubeconfig [KUBECONFIG]; without it and --manifests: in-cluster")
	fl.BoolVar(&noDesired, "no-desired", false, "do not read a desired state; compare applied, HAProxy and files")
	fl.BoolVar(&allowLoopback, flagAllowLoopback, false, "admit endpoint addresses on loopback, as run does with this flag (folder mode only)")
	fl.BoolVar(&localSettings, "local-settings", false, "translate with this command's environment and flags, not the running router's")
	cmd.MarkFlagsMutuallyExclusive(flagManifests, flagKubeconfig, "no-desired")
	return cmd
}

// withRouterSettings returns the app, settings flags and changed function that translate as the
// running router does (its state socket's RunSettings), with the settings flags set on local
// winning, and notes so on standard error. Without a router that says its settings, they are the
// command's own (rf, changed), with a note.
func (a *app) withRouterSettings(ctx context.Context, src views.Sources, local *pflag.FlagSet, rf renderFlags, changed func(string) bool) (*app, renderFlags, func(string) bool, error) {
	st, err := stateapi.Read(ctx, src.State)
	if err != nil || st.RunSettings == nil {
		fmt.Fprintln(a.stderr, "note: the running router does not say its settings: translating with this command's environment and flags")
		return a, rf, changed, nil
	}
	rrf, rchanged, getenv, err := routerSettings(st.RunSettings, local)
	if err != nil {
		return nil, rf, nil, fmt.Errorf("the running router's settings: %w", err)
	}
	flags := slices.Sorted(maps.Keys(st.RunSettings.Flags))
	for i, f := range flags {
		flags[i] = "--" + f
	}
	fmt.Fprintf(a.stderr, "note: translating with the running router's settings (%d environment variables; flags: %s); --local-settings uses this command's own\n",
		len(st.RunSettings.Env), cmp.Or(strings.Join(flags, " "), "none"))
	b := *a
	b.getenv = getenv
	return &b, rrf, rchanged, nil
}

// desiredState translates the Routes of the folder, or of the cluster, as run does.
func (a *app) desiredState(ctx context.Context, rf renderFlags, changed func(string) bool, manifests, kubeconfig string) (*model.Config, error) {
	s, err := a.settings(rf, changed)
	if err != nil {
		return nil, err
	}
	if kubeconfig == "" {
		kubeconfig = a.getenv("KUBECONFIG")
	}
	src, _, _, err := a.newSource(runConfig{settings: s, manifests: manifests, kubeconfig: kubeconfig})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, diffSyncTimeout)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- src.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			a.log.Debug("the desired state's source stopped", "err", err)
		}
	}()
	if !a.waitSynced(ctx, src) {
		select {
		case err := <-errc:
			errc <- err
			if err != nil {
				return nil, fmt.Errorf("desired state: %w", err)
			}
		default:
		}
		return nil, fmt.Errorf("desired state: no complete snapshot within %v", diffSyncTimeout)
	}
	d, err := controller.Translate(src, s.opts)
	if err != nil {
		return nil, err
	}
	if len(d.FileErrors) > 0 {
		return nil, fmt.Errorf("desired state: %w", errors.Join(fileErrs(d.FileErrors)...))
	}
	return d.Config, nil
}

func fileErrs(fe []source.FileError) []error {
	out := make([]error, len(fe))
	for i, e := range fe {
		out[i] = fmt.Errorf("%s: %w", e.Path, e.Err)
	}
	return out
}

func (a *app) diff(ctx context.Context, src views.Sources, f inspectFlags, desired *model.Config) error {
	filter, err := f.filter()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(f.haproxyDir)
	if err != nil {
		return fmt.Errorf("haproxy directory %q: %w", f.haproxyDir, err)
	}
	snap := views.Read(ctx, src)
	if snap.State == nil || snap.State.Applied == nil {
		return &exitError{code: exitUnreadable, err: fmt.Errorf("haroute's applied state is needed to compare: %s", strings.Join(snap.Notes, "; "))}
	}
	var files *views.Files
	if files, err = views.ReadFiles(dir, snap.State.Applied); err != nil {
		snap.Notes = append(snap.Notes, err.Error())
		files = nil
	}
	admin := socket.NewAdmin(src.Admin, socket.Options{RetryFor: -1})
	if snap.Servers != nil {
		snap.ReadMaps(ctx, admin, dir)
	}
	rows := snap.Diff(desired, files, filter)
	if rows == nil {
		rows = []views.DiffRow{} // JSON [] rather than null
	}
	printTable := func() error { return views.PrintDiff(a.stdout, rows, f.output == views.OutputWide, !f.noHeaders) }
	if err := f.print(a, rows, printTable, snap.Notes); err != nil {
		return err
	}
	if len(rows) > 0 || len(snap.Notes) > 0 {
		return &exitError{code: exitFound, err: fmt.Errorf("%d differences, %d sources unread", len(rows), len(snap.Notes))}
	}
	return nil
}
