package metrics

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRecordedHeaders: every column a metric is read from is in the header of every recorded
// version, found by name although the versions number the later columns differently.
func TestRecordedHeaders(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "haproxy-*", "show_stat.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings (%v)", err)
	}
	all, err := selectFields(AllFields())
	if err != nil {
		t.Fatal(err)
	}
	widths := map[int]bool{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(raw), "\n")
		widths[strings.Count(first, ",")+1] = true
		h, err := parseHeader(first, &all)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if h.proxy != 0 || h.server != 1 || h.typ != 32 {
			t.Errorf("%s: pxname, svname, type at %d, %d, %d", file, h.proxy, h.server, h.typ)
		}
		for fam, fs := range all {
			for i, f := range fs {
				if h.cols[fam][i] != f.number {
					t.Errorf("%s: column %s at %d, want %d (its static position)", file, f.column, h.cols[fam][i], f.number)
				}
			}
		}
	}
	if len(widths) < 2 {
		t.Errorf("the recorded versions all have %v columns: the test no longer shows that columns differ", widths)
	}
}

func TestParseHeaderRefusesOtherReplies(t *testing.T) {
	all, _ := selectFields(AllFields())
	for _, line := range []string{
		"Unknown command: 'show stats', but maybe one of the following ones is a better match:",
		"Permission denied",
		"",
		"# pxname,svname,qcur", // no type column
	} {
		if _, err := parseHeader(line, &all); err == nil {
			t.Errorf("%q: no error", line)
		}
	}
}

func TestSplitRow(t *testing.T) {
	for _, c := range []struct {
		line  string
		width int
		want  []string
	}{
		{"a,b,c", 3, []string{"a", "b", "c"}},
		{"a,b,c,d,e", 2, []string{"a", "b"}},
		{"a,,c,", 5, []string{"a", "", "c", ""}},
		{`a,"x,y",c`, 3, []string{"a", "x,y", "c"}},
		{`a,"say ""hi""",c`, 3, []string{"a", `say "hi"`, "c"}},
		{`"",b`, 2, []string{"", "b"}},
		{`a,"last"`, 3, []string{"a", "last"}},
	} {
		dst := make([]string, c.width)
		n, err := splitRow(c.line, dst)
		if err != nil || !slices.Equal(dst[:n], c.want) {
			t.Errorf("splitRow(%q) = %q, %v; want %q", c.line, dst[:n], err, c.want)
		}
	}
	for _, bad := range []string{`a,"open`, `a,"x"y,c`} {
		if _, err := splitRow(bad, make([]string, 3)); err == nil {
			t.Errorf("splitRow(%q): no error", bad)
		}
	}
}

func TestStatusUp(t *testing.T) {
	for s, want := range map[string]float64{
		"UP": 1, "UP 1/3": 1, "OPEN": 1, "no check": 1,
		"DOWN": 0, "DOWN 1/2": 0, "NOLB": 0, "DRAIN": 0, "MAINT": 0, "MAINT (via b/s)": 0, "MAINT (resolution)": 0,
	} {
		if got := statusUp(s); got != want {
			t.Errorf("statusUp(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestNameLabels(t *testing.T) {
	for name, want := range map[string]serverLabels{
		"pod:web-1:web:http:10.0.0.5:8080":     {addr: "10.0.0.5:8080", pod: "web-1", service: "web", export: true},
		"pod:web-1:web::10.0.0.5:8080":         {addr: "10.0.0.5:8080", pod: "web-1", service: "web", export: true},
		"pod:web-1:web:http:fd00::1:5:8080":    {addr: "[fd00::1:5]:8080", pod: "web-1", service: "web", export: true},
		"pod:web-1:web:https:2001:db8::1:8443": {addr: "[2001:db8::1]:8443", pod: "web-1", service: "web", export: true},
	} {
		got, ok := nameLabels(name)
		if !ok || got != want {
			t.Errorf("nameLabels(%q) = %+v, %v; want %+v", name, got, ok, want)
		}
	}
	for _, bad := range []string{"fe_sni", "ept:web:10.0.0.5:8080", "pod:a:b:c", "pod:a:b:c:noport"} {
		if _, ok := nameLabels(bad); ok {
			t.Errorf("nameLabels(%q): ok", bad)
		}
	}
}

func TestSelectFields(t *testing.T) {
	if _, err := selectFields([]int{2, 99}); err == nil {
		t.Error("column 99 (no metric) accepted")
	}
	sel, err := selectFields([]int{79})
	if err != nil {
		t.Fatal(err)
	}
	// conn_tot is a frontend column only; backends and servers count connections in stot (7).
	if len(sel[frontendFamily]) != 1 || len(sel[backendFamily]) != 0 || len(sel[serverFamily]) != 0 {
		t.Errorf("column 79 selects %v", sel)
	}
	def, err := selectFields(DefaultFields)
	if err != nil {
		t.Fatal(err)
	}
	if n := [3]int{len(def[0]), len(def[1]), len(def[2])}; n != [3]int{13, 21, 23} {
		t.Errorf("default selection: %v frontend, backend and server metrics, want OpenShift's 13, 21, 23", n)
	}
}
