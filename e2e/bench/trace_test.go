//go:build e2e

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench/results"
	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Environment of TestTraces (besides OutEnv and RepeatsEnv).
const (
	// tracesEnv and modesEnv, comma-separated, run a subset of the traces and modes.
	tracesEnv = "HAROUTE_BENCH_TRACES"
	modesEnv  = "HAROUTE_BENCH_MODES"
	// smokeEnv set to 1 runs TestTraces at the smoke test's tiny sizes (a quick check of every trace).
	smokeEnv = "HAROUTE_BENCH_SMOKE"
)

// traceConfig is what runTraces runs.
type traceConfig struct {
	specs   []traceSpec
	modes   []traceMode
	repeats int
	sizes   traceSizes
	dir     string // where traces.json goes
	command string // the command named in the file's header
}

// TestTraces runs every trace (trace_plays.go) in every mode (runtime, reload-5s, reload-1s),
// interleaved — for each repeat, for each trace, each mode — so that drift on the machine hits every
// mode alike, and writes every run to traces.json in $HAROUTE_BENCH_OUT (default bin/bench at the
// module root) after each run. $HAROUTE_BENCH_REPEATS (default 3) sets the repeats,
// $HAROUTE_BENCH_TRACES and $HAROUTE_BENCH_MODES (comma-separated names) select a subset, and
// $HAROUTE_BENCH_SMOKE=1 runs them at the smoke test's sizes. HAProxy is $HAROUTE_HAPROXY (make
// bench: 3.2). It logs a TRACE line per run and a min/median/max table per trace and mode.
func TestTraces(t *testing.T) {
	dir := OutDir(t)
	specs := selected(t, tracesEnv, traceSpecs(), func(s traceSpec) string { return s.name })
	modes := selected(t, modesEnv, traceModes(), func(m traceMode) string { return m.name })
	repeats, sizes := Repeats(t), fullSizes()
	switch v := os.Getenv(smokeEnv); v {
	case "", "0":
	case "1":
		sizes = smokeSizes()
	default:
		t.Fatalf("%s=%q: want 0 or 1", smokeEnv, v)
	}
	var env []string
	for _, name := range []string{testkit.HAProxyEnv, RepeatsEnv, tracesEnv, modesEnv, smokeEnv} {
		if v := os.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	runTraces(t, traceConfig{specs: specs, modes: modes, repeats: repeats, sizes: sizes, dir: dir,
		command: strings.TrimSpace(strings.Join(env, " ") + " go test -tags e2e -run '^TestTraces$' -v ./e2e/bench/")})
}

// TestTracesSmoke runs three traces at tiny sizes, once, in runtime and reload-1s mode (no stock
// router needed; part of make e2e) and checks correctness only, never timings: the result file is
// written and well-formed, and in runtime mode no request failed or reached a wrong pod, every
// change was seen by traffic, every long-lived connection is still open and the endpoint trace
// reloaded nothing.
func TestTracesSmoke(t *testing.T) {
	dir := t.TempDir()
	var specs []traceSpec
	for _, s := range traceSpecs() {
		if s.name == traceRolling || s.name == tracePreview || s.name == traceCerts {
			specs = append(specs, s)
		}
	}
	modes := slices.DeleteFunc(traceModes(), func(m traceMode) bool { return m.name == results.ModeReload5s })
	outcomes := runTraces(t, traceConfig{specs: specs, modes: modes, repeats: 1, sizes: smokeSizes(), dir: dir,
		command: "go test -tags e2e -run '^TestTracesSmoke$' ./e2e/bench/"})
	if t.Failed() {
		return
	}
	if want := len(specs) * len(modes); len(outcomes) != want {
		t.Fatalf("%d runs, want %d", len(outcomes), want)
	}
	var file results.Traces
	found, err := results.Read(dir, results.TracesFile, &file)
	if err != nil || !found {
		t.Fatalf("%s: found %v, %v", results.TracesFile, found, err)
	}
	if len(file.Runs) != len(outcomes) || file.Machine.CPUs == 0 || file.HAProxy == "" || file.Elapsed <= 0 {
		t.Errorf("%s: %d runs, header %+v", results.TracesFile, len(file.Runs), file.Header)
	}
	for i, run := range file.Runs {
		if err := wellFormed(run); err != nil {
			t.Errorf("%s run %d: %v", results.TracesFile, i, err)
		}
	}
	for _, o := range outcomes {
		if o.Mode != results.ModeRuntime {
			continue
		}
		if o.Failed != 0 || o.Wrong != 0 || o.unobserved != 0 || o.settleErr != nil {
			t.Errorf("%s in runtime mode: %d failed, %d wrong, %d changes not observed (%v); first problems: %v",
				o.Trace, o.Failed, o.Wrong, o.unobserved, o.settleErr, o.notes)
		}
		if o.LongLived != o.opened {
			t.Errorf("%s in runtime mode: %d of %d long-lived connections open at the end", o.Trace, o.LongLived, o.opened)
		}
		if o.Trace == traceRolling && o.Reloads != 0 {
			t.Errorf("%s in runtime mode: %d reloads, want none for endpoint changes", o.Trace, o.Reloads)
		}
	}
}

// wellFormed checks what every run of a trace must hold.
func wellFormed(r results.TraceRun) error {
	switch {
	case !slices.Contains([]string{traceRolling, traceScale, traceChurn, tracePreview, traceBurst, traceCerts, traceBalance}, r.Trace):
		return fmt.Errorf("trace %q", r.Trace)
	case !slices.Contains([]string{results.ModeRuntime, results.ModeReload5s, results.ModeReload1s}, r.Mode):
		return fmt.Errorf("mode %q", r.Mode)
	case r.Repeat < 1 || r.Changes < 1 || r.Requests < 1 || len(r.ChangeToTraffic) == 0:
		return fmt.Errorf("repeat %d, %d changes, %d requests, %d change→traffic times", r.Repeat, r.Changes, r.Requests, len(r.ChangeToTraffic))
	case r.HAProxyProcsMax < 2 || r.HAProxyRSSMaxMB <= 0 || r.HarouteRSSMaxMB <= 0 || r.HarouteCPU <= 0 || r.LongLived < 1:
		return fmt.Errorf("%d HAProxy processes, %.1f MiB, haroute %.1f MiB %.2f s CPU, %d long-lived",
			r.HAProxyProcsMax, r.HAProxyRSSMaxMB, r.HarouteRSSMaxMB, r.HarouteCPU, r.LongLived)
	case len(r.Samples) == 0:
		return fmt.Errorf("no samples")
	}
	for _, d := range r.ChangeToTraffic {
		if d < 0 {
			return fmt.Errorf("negative change→traffic time %v", d)
		}
	}
	return nil
}

// runTraces starts one cluster and runs cfg's runs on it, each a subtest with its own namespace, pod
// network and haroute; traces.json is rewritten after every run. It returns the runs that passed.
func runTraces(t *testing.T, cfg traceConfig) []runOutcome {
	started := time.Now()
	c := framework.Start(t)
	file := results.Traces{Header: NewHeader(testkit.HAProxyBinary(), cfg.command, started), Runs: []results.TraceRun{}}
	var outcomes []runOutcome
	for repeat := 1; repeat <= cfg.repeats; repeat++ {
		for _, spec := range cfg.specs {
			for _, mode := range cfg.modes {
				t.Run(fmt.Sprintf("%s-%s-%d", spec.name, mode.name, repeat), func(t *testing.T) {
					o := runTrace(t, c, spec, mode, repeat, cfg.sizes)
					t.Log(summary(o))
					outcomes = append(outcomes, o)
					file.Runs = append(file.Runs, o.TraceRun)
				})
				file.Elapsed = time.Since(started).Seconds()
				if err := results.Write(cfg.dir, results.TracesFile, file); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Logf("%d runs in %v, written to %s\n%s", len(file.Runs), time.Since(started).Round(time.Second),
		filepath.Join(cfg.dir, results.TracesFile), table(file.Runs))
	return outcomes
}

// selected returns the items whose names $env lists (comma-separated), in all's order, or all of
// them when it is unset; an unknown name fails the test.
func selected[T any](t *testing.T, env string, all []T, name func(T) string) []T {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		return all
	}
	var known []string
	for _, it := range all {
		known = append(known, name(it))
	}
	want := strings.Split(v, ",")
	for _, w := range want {
		if !slices.Contains(known, strings.TrimSpace(w)) {
			t.Fatalf("%s=%q: unknown name %q (known: %s)", env, v, w, strings.Join(known, ", "))
		}
	}
	var out []T
	for _, it := range all {
		if slices.ContainsFunc(want, func(w string) bool { return strings.TrimSpace(w) == name(it) }) {
			out = append(out, it)
		}
	}
	return out
}
