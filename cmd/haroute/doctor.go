package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/runtime/socket"
)

func newDoctorCommand(a *app) *cobra.Command {
	var f inspectFlags
	var manifests string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the router and list coded findings with hints",
		Long: "doctor checks what haroute run and HAProxy report and prints one line per finding,\n" +
			"LEVEL [CODE] (object) message, with a hint: HAProxy reachable, failed reloads, old workers piling\n" +
			"up, drift, operator holds, rejected Routes and why, Routes without a (usable) server,\n" +
			"certificates expired, expiring (30 days), not covering their hosts, not loaded or unused, and\n" +
			"every admitted Route walked through HAProxy's own matcher (a Route another one shadows, a map\n" +
			"entry HAProxy lost). -n and -l keep the findings about those Routes. With --manifests alone it\n" +
			"checks a folder of manifests offline: a lint for CI.\n" +
			"Exit status: 0 no error or warning, 1 some, 2 nothing could be read.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, src views.Sources) error { return a.doctor(ctx, src, f, manifests) })
		},
	}
	f.add(a, cmd)
	cmd.Flags().StringVar(&manifests, flagManifests, "", "check this folder of manifests offline (translated as run does), without HAProxy")
	return cmd
}

func (a *app) doctor(ctx context.Context, src views.Sources, f inspectFlags, manifests string) error {
	filter, err := f.filter()
	if err != nil {
		return err
	}
	snap, admin, dir, err := a.inspectSnapshot(ctx, src, f, manifests)
	if err != nil {
		return err
	}
	if admin != nil {
		// One connection for the whole walk (thousands of get map at 10k Routes), when HAProxy
		// accepts one; each command on its own connection otherwise.
		if sess, err := socket.NewAdmin(src.Admin, socket.Options{RetryFor: -1}).Session(ctx); err == nil {
			defer sess.Close()
			admin = sess
		}
		snap.ReadCerts(ctx, admin)
	}
	findings := snap.Doctor(ctx, admin, dir)
	if admin != nil && snap.State != nil && snap.State.Applied != nil && snap.Servers != nil {
		if files, err := views.ReadFiles(dir, snap.State.Applied); err == nil {
			snap.ReadMaps(ctx, admin, dir)
			findings = append(findings, snap.FileFindings(files)...)
		} else {
			findings = append(findings, views.Finding{Level: views.LevelWarn, Code: "FILES_UNREADABLE", Object: "haproxy",
				Message: err.Error(), Hint: "doctor reads the files run writes under --haproxy-dir"})
		}
	}
	findings = snap.Filtered(views.SortFindings(findings), filter)
	if f.output == views.OutputTable || f.output == views.OutputWide {
		if len(findings) == 0 {
			fmt.Fprintln(a.stdout, "no findings")
		}
		for _, fd := range findings {
			fmt.Fprintln(a.stdout, views.Cell(fd.Level+" ["+fd.Code+"] ("+fd.Object+") "+fd.Message))
			if fd.Hint != "" {
				fmt.Fprintln(a.stdout, "    hint: "+views.Cell(fd.Hint))
			}
		}
	} else if err := views.Print(a.stdout, f.output, findings); err != nil {
		return err
	}
	serious := 0
	for _, fd := range findings {
		if fd.Level != views.LevelInfo {
			serious++
		}
	}
	if serious > 0 {
		return &exitError{code: exitFound, err: fmt.Errorf("%d errors and warnings", serious)}
	}
	return nil
}
