package parity

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Report is the outcome of one comparison of haroute's answers with the stock router's.
type Report struct {
	// Mode says how haroute's answers were obtained: "live" (beside the stock router, make parity)
	// or "replay" (alone, against the recorded stock answers).
	Mode string `json:"mode"`
	// StockCommit and StockHAProxy name the stock router's build and HAProxy; HAProxy is haroute's.
	StockCommit  string `json:"stockCommit"`
	StockHAProxy string `json:"stockHAProxy"`
	HAProxy      string `json:"haproxy"`
	// Requests is how many requests were compared, Agreeing how many agreed on every field compared.
	Requests int `json:"requests"`
	Agreeing int `json:"agreeing"`
	// ByField counts the requests that differ on each field.
	ByField map[Field]int `json:"byField"`
	// Accepted are the differences a known difference matches, with the entry; Unexpected the others.
	Accepted   []Accepted   `json:"accepted"`
	Unexpected []Difference `json:"unexpected"`
	// Conditions are the fields left out under a version condition.
	Conditions []Condition `json:"conditions,omitempty"`
	// Unused are the known differences that matched nothing in this run (fixed since, or a pick at
	// random that happened to agree).
	Unused []Known `json:"unused,omitempty"`
}

// Accepted is a difference and the known difference that accepts it.
type Accepted struct {
	Difference
	Known Known `json:"known"`
}

// Evaluate compares haroute's answers with the stock router's, request by request, and sorts the
// differences into accepted (by known) and unexpected.
func Evaluate(mode string, reqs []Request, stock, haroute []Answer, c Comparison, known []Known) (Report, error) {
	if len(stock) != len(reqs) || len(haroute) != len(reqs) {
		return Report{}, fmt.Errorf("evaluate: %d requests, %d stock answers, %d haroute answers", len(reqs), len(stock), len(haroute))
	}
	rep := Report{Mode: mode, HAProxy: c.HAProxy.String(), Requests: len(reqs), ByField: map[Field]int{}}
	used := make([]bool, len(known))
	for i, r := range reqs {
		if stock[i].ID != r.ID || haroute[i].ID != r.ID {
			return Report{}, fmt.Errorf("evaluate: request %d is %s, answers are for %s and %s", i, r.ID, stock[i].ID, haroute[i].ID)
		}
		diffs, conds := c.Compare(r, stock[i], haroute[i])
		rep.Conditions = append(rep.Conditions, conds...)
		if len(diffs) == 0 {
			rep.Agreeing++
			continue
		}
		fields := map[Field]bool{}
		for _, d := range diffs {
			fields[d.Field] = true
			j := matchKnown(known, d, c.HAProxy)
			if j < 0 {
				rep.Unexpected = append(rep.Unexpected, d)
				continue
			}
			used[j] = true
			rep.Accepted = append(rep.Accepted, Accepted{Difference: d, Known: known[j]})
		}
		for f := range fields {
			rep.ByField[f]++
		}
	}
	for j, k := range known {
		if !used[j] {
			if ok, _ := versionIn(c.HAProxy, k.HAProxy); ok {
				rep.Unused = append(rep.Unused, k)
			}
		}
	}
	return rep, nil
}

// matchKnown returns the index of the first known difference that accepts d, or -1.
func matchKnown(known []Known, d Difference, v Version) int {
	for j, k := range known {
		if k.Matches(d, v) {
			return j
		}
	}
	return -1
}

// Summary writes the figures for people: requests compared, agreeing and differing by field; the
// differences no entry accepts; the accepted ones counted by entry; the fields not compared; the
// entries that matched nothing.
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "parity (%s): haroute on HAProxy %s against the stock router at %s (%s)\n",
		r.Mode, r.HAProxy, r.StockCommit, r.StockHAProxy)
	fmt.Fprintf(&b, "requests compared: %d, agreeing: %d, differing: %d\n", r.Requests, r.Agreeing, r.Requests-r.Agreeing)
	b.WriteString("requests differing by field:\n")
	for _, f := range Fields {
		if n := r.ByField[f]; n > 0 {
			fmt.Fprintf(&b, "  %-18s %d\n", f, n)
		}
	}
	fmt.Fprintf(&b, "differences: %d accepted (known), %d unexpected\n", len(r.Accepted), len(r.Unexpected))
	if len(r.Unexpected) > 0 {
		b.WriteString("\nunexpected differences (none may remain: fix them, or accept them in testdata/known-differences.yaml):\n")
		for _, d := range r.Unexpected {
			b.WriteString("  " + d.String() + "\n")
		}
	}
	if len(r.Accepted) > 0 {
		b.WriteString("\naccepted differences by known difference (differences, requests):\n")
		for _, e := range r.byEntry() {
			fmt.Fprintf(&b, "  %4d %4d  %s %v [%s]: %s\n", e.diffs, e.requests, strings.Join(e.k.Requests, ","), e.k.Fields, e.k.why(), e.k.Note)
		}
	}
	if len(r.Conditions) > 0 {
		counts := map[Field]int{}
		for _, c := range r.Conditions {
			counts[c.Field]++
		}
		fmt.Fprintf(&b, "\nfields not compared on HAProxy %s (%s):\n", r.HAProxy, r.Conditions[0].Reason)
		for _, f := range Fields {
			if n := counts[f]; n > 0 {
				fmt.Fprintf(&b, "  %-18s %d\n", f, n)
			}
		}
	}
	if len(r.Unused) > 0 {
		b.WriteString("\nknown differences not seen in this run (fixed? then remove them):\n")
		for _, k := range r.Unused {
			fmt.Fprintf(&b, "  %s %v: %s\n", strings.Join(k.Requests, ","), k.Fields, k.Note)
		}
	}
	return b.String()
}

// Text writes the summary, then every accepted difference and every field not compared.
func (r Report) Text() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	if len(r.Accepted) > 0 {
		b.WriteString("\naccepted differences:\n")
		for _, a := range r.Accepted {
			fmt.Fprintf(&b, "  %s [%s]\n", a.Difference, a.Known.why())
		}
	}
	if len(r.Conditions) > 0 {
		b.WriteString("\nfields not compared:\n")
		for _, c := range r.Conditions {
			fmt.Fprintf(&b, "  %s: %s\n", c.Request, c.Field)
		}
	}
	return b.String()
}

// why names the row of a known difference, or says it is open.
func (k Known) why() string {
	if k.Row != nil {
		return "row: " + k.Row.String()
	}
	return "open: " + OpenIssue
}

// entryCount is how many differences, and of how many requests, one known difference accepted.
type entryCount struct {
	k               Known
	diffs, requests int
}

// byEntry counts the accepted differences per known difference, in the order first seen.
func (r Report) byEntry() []entryCount {
	var out []entryCount
	index := map[string]int{}
	seen := map[string]bool{}
	for _, a := range r.Accepted {
		key := fmt.Sprintf("%v|%v|%s|%s", a.Known.Requests, a.Known.Fields, a.Known.Detail, a.Known.HAProxy)
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, entryCount{k: a.Known})
		}
		out[i].diffs++
		if !seen[key+"|"+a.Request] {
			seen[key+"|"+a.Request] = true
			out[i].requests++
		}
	}
	return out
}

// Write writes the report as text (<name>.txt) and JSON (<name>.json) into dir.
func (r Report) Write(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(r.Text()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
