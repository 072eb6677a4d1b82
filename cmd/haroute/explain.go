package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/runtime/socket"
	"github.com/haroute/haroute/sync/source"
)

func newExplainCommand(a *app) *cobra.Command {
	var f inspectFlags
	var sni, header, manifests string
	cmd := &cobra.Command{
		Use:   "explain URL",
		Short: "Explain which Route, backend and servers a request reaches, and why",
		Long: "explain replays the frontends' decisions for URL (http:// or https://) from the state haroute\n" +
			"applied, and asks HAProxy the same questions (get map on the exact keys), marking where the two\n" +
			"disagree: SNI and certificate, the map lookups, the redirect, the Route and its backend, the\n" +
			"servers and their health, the other Routes on the host and the rejected ones, then a verdict\n" +
			"and a hint. With --manifests it works offline from a folder of manifests, without HAProxy.\n" +
			"Exit status: 0 the request is served (or redirected), 1 it is not (503) or the model and\n" +
			"HAProxy disagree, 2 nothing could be read.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := views.Request{URL: args[0], SNI: sni}
			if header != "" {
				name, value, ok := strings.Cut(header, ":")
				if !ok || !strings.EqualFold(strings.TrimSpace(name), "host") {
					return fmt.Errorf("-H %q: only a Host header is used: want 'Host: name'", header)
				}
				req.Host = strings.TrimSpace(value)
			}
			return f.run(cmd, func(ctx context.Context, src views.Sources) error { return a.explain(ctx, src, f, req, manifests) })
		},
	}
	f.add(a, cmd)
	fl := cmd.Flags()
	fl.StringVar(&sni, "sni", "", "TLS server name for https (default: the host)")
	fl.StringVarP(&header, "header", "H", "", "the Host header, as 'Host: name' (default: the URL's host)")
	fl.StringVar(&manifests, flagManifests, "", "explain offline from this folder of manifests (translated as run does), without HAProxy")
	return cmd
}

func (a *app) explain(ctx context.Context, src views.Sources, f inspectFlags, req views.Request, manifests string) error {
	snap, admin, dir, err := a.inspectSnapshot(ctx, src, f, manifests)
	if err != nil {
		return err
	}
	ex := snap.Explain(ctx, admin, dir, req)
	if f.output == views.OutputTable || f.output == views.OutputWide {
		err = views.PrintExplanation(a.stdout, ex)
	} else {
		err = views.Print(a.stdout, f.output, ex)
	}
	if err != nil {
		return err
	}
	switch {
	case ex.Disagreements > 0:
		return &exitError{code: exitFound, err: fmt.Errorf("the model and HAProxy disagree on %d steps", ex.Disagreements)}
	case ex.Verdict != views.VerdictServed && ex.Verdict != views.VerdictRedirect && ex.Verdict != views.VerdictPassthrough:
		return &exitError{code: exitFound, err: fmt.Errorf("not served: %s", ex.Verdict)}
	}
	return nil
}

// inspectSnapshot reads what explain and doctor look at: the live sources (and the admin socket to
// ask HAProxy), or, with manifests, the state run would start from, offline (admin nil). It also
// returns the absolute HAProxy directory.
func (a *app) inspectSnapshot(ctx context.Context, src views.Sources, f inspectFlags, manifests string) (*views.Snapshot, socket.Runner, string, error) {
	dir, err := filepath.Abs(f.haproxyDir)
	if err != nil {
		return nil, nil, "", fmt.Errorf("haproxy directory %q: %w", f.haproxyDir, err)
	}
	if manifests != "" {
		snap, err := a.offlineSnapshot(manifests)
		if err != nil {
			return nil, nil, "", &exitError{code: exitUnreadable, err: err}
		}
		return snap, nil, dir, nil
	}
	snap := views.Read(ctx, src)
	if !snap.Readable() {
		return nil, nil, "", &exitError{code: exitUnreadable, err: fmt.Errorf("nothing could be read: %s", strings.Join(snap.Notes, "; "))}
	}
	return snap, socket.NewAdmin(src.Admin, socket.Options{RetryFor: -1}), dir, nil
}

// offlineSnapshot is the state `haroute run` would start from for a folder of manifests, with no
// HAProxy to ask.
func (a *app) offlineSnapshot(dir string) (*views.Snapshot, error) {
	s, err := a.settings(renderFlags{}, func(string) bool { return false })
	if err != nil {
		return nil, err
	}
	in, err := source.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	cfg, problems := mapping.Translate(in, s.opts)
	return &views.Snapshot{State: &stateapi.State{Ready: true, Applied: cfg, Problems: problems},
		Notes: []string{"offline: from " + dir + ", HAProxy not asked"}}, nil
}
