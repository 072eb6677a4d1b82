package oracle

import (
	"fmt"
	"strings"
	"time"

	"github.com/haroute/haroute/mapping/plan"
)

// Stats are the figures of a walk, logged at its end.
type Stats struct {
	Steps      int
	Runtime    int
	Structural int
	// Delta counts the steps planned from the last desired state (plan.ComputeDelta).
	Delta   int
	Reasons map[plan.ReasonKind]int
	// Labels counts the reloads by their one reason (the label of haroute_reloads_total).
	Labels     map[plan.ReasonKind]int
	ByMutation map[MutationKind]*MutationStats
	Ops        map[string]int
	// Deferred counts deletions HAProxy deferred; Retried those that went through later.
	Deferred, Retried int
	ApplyErrors       int
	Requests          int
	Start             time.Time
}

// MutationStats count the steps of one mutation kind and how they were carried out.
type MutationStats struct{ Steps, Reloads, Runtime int }

// NewStats starts the clock.
func NewStats() *Stats {
	return &Stats{
		Reasons:    map[plan.ReasonKind]int{},
		Labels:     map[plan.ReasonKind]int{},
		ByMutation: map[MutationKind]*MutationStats{},
		Ops:        map[string]int{},
		Start:      time.Now(),
	}
}

// Record counts one driver step.
func (s *Stats) Record(m Mutation, res StepResult) {
	s.Steps++
	if res.Delta {
		s.Delta++
	}
	ms := s.ByMutation[m.Kind]
	if ms == nil {
		ms = &MutationStats{}
		s.ByMutation[m.Kind] = ms
	}
	ms.Steps++
	if res.Plan.NeedsReload() {
		s.Structural++
		ms.Reloads++
		kinds := map[plan.ReasonKind]bool{}
		for _, r := range res.Plan.Structural {
			kinds[r.Kind] = true
		}
		for k := range kinds {
			s.Reasons[k]++
		}
		label := res.Reason.Kind
		if res.Started {
			label = plan.Initial
		}
		s.Labels[label]++
	} else {
		s.Runtime++
		ms.Runtime++
	}
	for k, n := range res.Ops {
		s.Ops[k] += n
	}
	s.Retried += res.Retried
	if res.ApplyErr != nil {
		s.ApplyErrors++
	}
}

// Summary formats the figures.
func (s *Stats) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "steps %d: runtime %d, structural %d, planned from the last desired state %d; apply errors %d; deferred deletions retried %d; requests %d; %v\n",
		s.Steps, s.Runtime, s.Structural, s.Delta, s.ApplyErrors, s.Retried, s.Requests, time.Since(s.Start).Round(time.Millisecond))
	b.WriteString("structural steps by reason:")
	for _, k := range sortedKeys(stringKeys(s.Reasons)) {
		fmt.Fprintf(&b, " %s=%d", k, s.Reasons[plan.ReasonKind(k)])
	}
	b.WriteString("\nreloads by their one reason:")
	for _, k := range sortedKeys(stringKeys(s.Labels)) {
		fmt.Fprintf(&b, " %s=%d", k, s.Labels[plan.ReasonKind(k)])
	}
	b.WriteString("\nsteps by mutation (steps/reloads/runtime):")
	for _, k := range mutationOrder {
		if ms := s.ByMutation[k]; ms != nil {
			fmt.Fprintf(&b, " %s=%d/%d/%d", k, ms.Steps, ms.Reloads, ms.Runtime)
		}
	}
	for k, ms := range s.ByMutation {
		if !knownMutation(k) {
			fmt.Fprintf(&b, " %s=%d/%d/%d", k, ms.Steps, ms.Reloads, ms.Runtime)
		}
	}
	b.WriteString("\nops by type:")
	for _, k := range sortedKeys(s.Ops) {
		fmt.Fprintf(&b, " %s=%d", k, s.Ops[k])
	}
	return b.String()
}

func knownMutation(k MutationKind) bool {
	for _, m := range mutationOrder {
		if m == k {
			return true
		}
	}
	return false
}

func stringKeys(m map[plan.ReasonKind]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}
