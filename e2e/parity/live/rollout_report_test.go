//go:build e2e

package live

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// fleetFile is the mixed fleet's report, in the parity output directory.
const fleetFile = "fleet.txt"

// fleetReport is what TestMixedFleet measured.
type fleetReport struct {
	stockCommit, haproxy string
	phases               []string
	routes               []*fleetRoute
	replicas             []*replica
	sessions             []*session
	events               *timeline
	emptyPicks           int64
}

// totals sums the clients' counts.
func (r *fleetReport) totals() (requests, failures, podChanges, reissued, badCookie, crossings int) {
	for _, s := range r.sessions {
		requests += s.requests
		failures += s.failures
		podChanges += s.podChanges
		reissued += s.reissued
		badCookie += s.badCookie
		crossings += s.crossings
	}
	return
}

// String is the report: the setting, the timeline, one line per client and the totals.
func (r *fleetReport) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Mixed fleet: stock router %s and haroute, each replica with its own %s\n\n", r.stockCommit, r.haproxy)
	b.WriteString("Routes (the stock router's cookie name):\n")
	for _, rt := range r.routes {
		fmt.Fprintf(&b, "  %-8s %-30s %s, %d pods\n", rt.name, rt.url, rt.cookie, len(rt.pods))
	}
	b.WriteString("\nPhases:\n")
	for i, p := range r.phases {
		fmt.Fprintf(&b, "  %d  %s\n", i, p)
	}
	b.WriteString("\nTimeline:\n")
	for _, line := range strings.Split(r.events.String(), "\n") {
		b.WriteString("  " + line + "\n")
	}
	b.WriteString("\nReplicas (HAProxy reloads while in the fleet):\n")
	for _, rep := range r.replicas {
		fmt.Fprintf(&b, "  %-10s %-8s %d\n", rep.name, rep.kind, rep.reloadsOut-rep.reloadsIn)
	}
	b.WriteString("\nClients (requests per phase; crossings: requests sent to another kind of router than the one before):\n")
	tw := tabwriter.NewWriter(&b, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "client\troute\tpod\tfirst via\trequests\tper phase\tcrossings\tfailures\tpod changes\tcookie set again\tcookie not stock's\t\n")
	for _, s := range r.sessions {
		var per []string
		for i, n := range s.perPhase {
			if i >= s.firstPhase {
				per = append(per, fmt.Sprint(n))
			} else {
				per = append(per, "-")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t\n", s.id, s.route.name, s.pod, s.firstReplica,
			s.requests, strings.Join(per, "/"), s.crossings, s.failures, s.podChanges, s.reissued, s.badCookie)
	}
	requests, failures, podChanges, reissued, badCookie, crossings := r.totals()
	fmt.Fprintf(tw, "total\t\t\t\t%d\t\t%d\t%d\t%d\t%d\t%d\t\n", requests, crossings, failures, podChanges, reissued, badCookie)
	_ = tw.Flush() // writes to a bytes.Buffer
	fmt.Fprintf(&b, "\nPicks that found no replica in rotation: %d\n", r.emptyPicks)
	for _, s := range r.sessions {
		for _, e := range s.errs {
			fmt.Fprintf(&b, "%s: %s\n", s.id, e)
		}
	}
	return b.String()
}

// write writes the report into dir.
func (r *fleetReport) write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("fleet report: %w", err)
	}
	path := filepath.Join(dir, fleetFile)
	if err := os.WriteFile(path, []byte(r.String()), 0o644); err != nil {
		return "", fmt.Errorf("fleet report: %w", err)
	}
	return path, nil
}

// problems returns what the scenario must not show, one line per client and kind of problem.
func (r *fleetReport) problems() []string {
	var out []string
	for _, s := range r.sessions {
		add := func(format string, args ...any) {
			out = append(out, s.id+" ("+s.route.name+"): "+fmt.Sprintf(format, args...))
		}
		if s.failures > 0 {
			add("%d of %d requests failed: %s", s.failures, s.requests, strings.Join(s.errs, "; "))
		}
		if s.podChanges > 0 {
			add("%d requests answered by another pod than %s: %s", s.podChanges, s.pod, strings.Join(s.errs, "; "))
		}
		if s.reissued > 0 {
			add("%d answers set the sticky cookie again (the router did not take the client's cookie)", s.reissued)
		}
		if s.badCookie > 0 {
			add("its first cookie is not the stock router's: %s", strings.Join(s.errs, "; "))
		}
		if s.crossings == 0 {
			add("never went from one kind of router to the other")
		}
		for i := s.firstPhase; i < len(s.perPhase); i++ {
			if s.perPhase[i] == 0 {
				add("sent no request in phase %d (%s)", i, r.phases[i])
			}
		}
	}
	if r.emptyPicks > 0 {
		out = append(out, fmt.Sprintf("the rotation was empty at %d picks (a replica reported NotReady while it was the only one)", r.emptyPicks))
	}
	return out
}
