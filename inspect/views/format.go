package views

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"sigs.k8s.io/yaml"
)

// Output formats (-o).
const (
	OutputTable = "table"
	OutputWide  = "wide"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
)

// Outputs lists the output formats, for flag help and completion.
var Outputs = []string{OutputTable, OutputWide, OutputJSON, OutputYAML}

// Print writes v as JSON or YAML (the machine formats); other formats are the caller's.
func Print(w io.Writer, format string, v any) error {
	switch format {
	case OutputJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case OutputYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("yaml: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("output %q: want one of %s", format, strings.Join(Outputs, ", "))
}

// PrintRoutes writes rows as a table (wide adds the backend and the reason's message); ages are
// counted from now.
func PrintRoutes(w io.Writer, rows []RouteRow, wide, headers bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	cols := []string{"NAMESPACE", "NAME", "HOST", "PATH", "TLS", "SERVERS", "STATUS", "CHANGED", "REASON"}
	if wide {
		cols = append(cols, "BACKEND", "MESSAGE")
	}
	if headers {
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	for _, r := range rows {
		servers := "-"
		if r.Servers >= 0 {
			servers = strconv.Itoa(r.Usable) + "/" + strconv.Itoa(r.Servers)
		}
		changed := "-"
		if r.Changed != nil {
			changed = r.Via + " " + age(now.Sub(*r.Changed)) + " ago"
		}
		cells := []string{r.Namespace, r.Name, r.Host, orDash(r.Path), orDash(r.TLS), servers, r.Status, changed, orDash(r.Reason)}
		if wide {
			cells = append(cells, orDash(r.Backend), orDash(r.Message))
		}
		for i := range cells {
			cells[i] = Cell(cells[i])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// PrintSummary writes the overview as aligned "key: value" lines.
func PrintSummary(w io.Writer, s Summary) error {
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	line := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, Cell(v)) }
	line("HAProxy", orDash(s.HAProxyVersion))
	line("Workers", fmt.Sprintf("%s current with %s connections, %s old with %s (master reloads %d, failed %d)",
		workersText(s.Workers), workersText(s.Conns), workersText(s.OldWorkers), workersText(s.OldConns), s.MasterReloads, s.FailedReloads))
	if s.MaxWorkerReloads > 0 {
		oldest := "no old worker"
		if s.OldestWorkerReloads >= 0 {
			oldest = fmt.Sprintf("the oldest has seen %d", s.OldestWorkerReloads)
		}
		line("Old workers", fmt.Sprintf("stopped after %d reloads (mworker-max-reloads); %s", s.MaxWorkerReloads, oldest))
	}
	last := "none"
	if s.LastReload != nil {
		last = s.LastReload.Reason + " at " + s.LastReload.At.Format(time.RFC3339)
	}
	line("Reloads", fmt.Sprintf("%d since start, last: %s", s.Reloads, last))
	line("Runtime ops", strconv.Itoa(s.RuntimeOps))
	line("Drift", fmt.Sprintf("%d found at the last check, %d servers held by an operator", s.Drift, s.Held))
	line("Spare backends", fmt.Sprintf("%d free (new Routes served without a reload)", s.FreeSpares))
	line("Routes", fmt.Sprintf("%d admitted, %d rejected, %d without a usable server", s.Admitted, s.Rejected, s.NoServer))
	line("Certificates", fmt.Sprintf("%d expiring within 30 days, %d expired", s.CertsExpiring, s.CertsExpired))
	line("Ready", strconv.FormatBool(s.Ready))
	for _, n := range s.Notes {
		line("Note", oneLineOf(n))
	}
	return tw.Flush()
}

// Cell returns s with every control character escaped (\n, \t, \x1b, ...), so that no value from a
// Route can break a table or drive the terminal.
func Cell(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsControl(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// PrintExplanation writes an explanation as text: the steps (model and HAProxy where they were both
// asked, "≠" where they differ), the backend's servers, the verdict and the hint.
func PrintExplanation(w io.Writer, ex Explanation) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for i, st := range ex.Steps {
		fmt.Fprintf(tw, "%d. %s\t%s\n", i+1, Cell(st.Stage), Cell(st.Detail))
		switch {
		case st.HAProxy == "" && st.Model != "":
			fmt.Fprintf(tw, "\tmodel: %s\n", Cell(st.Model))
		case st.HAProxy != "":
			mark := "="
			if st.Disagree {
				mark = "≠ DISAGREE"
			}
			fmt.Fprintf(tw, "\tmodel: %s  %s  HAProxy: %s\n", Cell(st.Model), mark, Cell(st.HAProxy))
		}
	}
	switch {
	case ex.Backend != "":
		fmt.Fprintf(tw, "Route:\t%s (backend %s)\n", Cell(orDash(ex.Route)), Cell(ex.Backend))
	case ex.Route != "":
		fmt.Fprintf(tw, "Route:\t%s\n", Cell(ex.Route))
	}
	for _, sv := range ex.Servers {
		fmt.Fprintf(tw, "  server\t%s %s %s\n", Cell(sv.Name), Cell(sv.Addr), sv.State)
	}
	for _, c := range ex.Competing {
		fmt.Fprintf(tw, "Also on this host:\t%s\n", Cell(c))
	}
	for _, r := range ex.Rejected {
		fmt.Fprintf(tw, "Rejected for this host:\t%s\n", Cell(r))
	}
	fmt.Fprintf(tw, "Verdict:\t%s\n", ex.Verdict)
	if ex.Hint != "" {
		fmt.Fprintf(tw, "Hint:\t%s\n", Cell(ex.Hint))
	}
	return tw.Flush()
}

// age formats d as kubectl does: the largest unit or two (5s, 3m20s, 4h, 2d).
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < 10*time.Minute:
		return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 3*time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// PrintTable writes a table of cells (each escaped with Cell), with or without the header line.
func PrintTable(w io.Writer, cols []string, rows [][]string, headers bool) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	if headers {
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = Cell(orDash(c))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
