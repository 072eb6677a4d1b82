// Command haroute drives a stock HAProxy as an OpenShift router. This binary holds thin cobra commands
// over the mapping, render and source packages; main is the only place that exits the process.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// app carries what the commands need from the process, so tests can run them in-process.
type app struct {
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	log    *slog.Logger
	// name is the name the binary was started under: "kubectl-haroute" makes it a kubectl plugin.
	name string
}

func main() {
	a := &app{
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		log:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
		name:   filepath.Base(os.Args[0]),
	}
	if err := newRootCommand(a).Execute(); err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		fmt.Fprintf(os.Stderr, "haroute: %s\n", oneLine(err))
		os.Exit(code)
	}
}

// kubectlPlugin is the binary's name as a kubectl plugin (a link or copy named so on the PATH).
const kubectlPlugin = "kubectl-haroute"

// newRootCommand builds the command tree.
func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "haroute",
		Short: "Drive a stock HAProxy as an OpenShift router",
		Long: "haroute keeps an unmodified HAProxy in step with OpenShift Routes, Services and EndpointSlices,\n" +
			"read from a cluster or from a folder of manifests.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if a.name == kubectlPlugin {
		// kubectl runs kubectl-haroute for `kubectl haroute ...`: help and completion say so.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl haroute"}
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.AddCommand(newRunCommand(a), newDemoCommand(a), newRenderCommand(a), newStateCommand(a), newDiffCommand(a), newExplainCommand(a), newDoctorCommand(a), newVersionCommand(a))
	return root
}

// oneLine joins the lines of a multi-line error (errors.Join) with "; ".
func oneLine(err error) string {
	var parts []string
	for _, p := range strings.Split(err.Error(), "\n") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}
