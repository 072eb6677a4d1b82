package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/mappingtest"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// casesDir holds the translation's test cases, the seeds of FuzzApplyPlan.
var casesDir = filepath.Join("..", "..", "mapping", "testdata", "cases")

// fuzzApplyDir is the HAProxy directory the fuzzed plans are applied for.
const fuzzApplyDir = "/var/lib/haproxy"

// FuzzApplyPlan translates two test cases (manifests as mappingtest.ParseCase reads them, both with
// the settings of the second), plans the way from the first, as a reload leaves it (with its spare
// pool), to the second, and applies the plan's runtime ops to a fake HAProxy that accepts every
// command. Every op a plan of Translate's models holds must go through (Apply returns nil), and every
// command it sends must be one line that HAProxy reads as one command: no line break, carriage
// return, NUL or ';', no last word that opens a payload ("<<" at its end or start), and payloads
// without an empty line. runtime/socket's FuzzCommandBuilders checks the builders with any argument;
// this target checks that the arguments Routes lead to are among those they send whole.
//
// The seeds are every case after nothing (each Route added at runtime) and every case after the
// one before it, in name order.
func FuzzApplyPlan(f *testing.F) {
	cases, err := filepath.Glob(filepath.Join(casesDir, "*.yaml"))
	if err != nil || len(cases) < 30 {
		f.Fatalf("found %d cases under %s (%v)", len(cases), casesDir, err)
	}
	prev := []byte{}
	for _, p := range cases {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte{}, data)
		f.Add(prev, data)
		prev = data
	}
	f.Fuzz(func(t *testing.T, from, to []byte) {
		if len(from)+len(to) > 128<<10 {
			t.Skip("input too large")
		}
		inFrom, _, err := mappingtest.ParseCase(from, "from")
		if err != nil {
			return
		}
		inTo, opts, err := mappingtest.ParseCase(to, "to")
		if err != nil {
			return
		}
		applied, _ := mapping.Translate(inFrom, opts)
		desired, _ := mapping.Translate(inTo, opts)
		p := plan.Compute(plan.WithPool(applied), desired)
		if p.NeedsReload() || len(p.Ops) == 0 {
			return
		}
		paths, err := render.PathsFor(p.Next, fuzzApplyDir)
		if err != nil {
			t.Fatalf("paths of the plan's next state: %v", err)
		}
		r := &checkedRunner{t: t, fake: &fakeHAProxy{}}
		_, err = Apply(context.Background(), r, p.Next, paths, fuzzApplyDir, p.Ops)
		if err != nil {
			t.Fatalf("Apply of a plan between two translations: %v", err)
		}
	})
}

// checkedRunner checks every command before the fake HAProxy answers it. It is called on the fuzz
// function's goroutine, so it may fail the test.
type checkedRunner struct {
	t    *testing.T
	fake *fakeHAProxy
}

func (r *checkedRunner) Command(ctx context.Context, cmd string) (string, error) {
	r.t.Helper()
	r.checkLine(cmd)
	return r.fake.Command(ctx, cmd)
}

func (r *checkedRunner) Payload(ctx context.Context, cmd, payload string) (string, error) {
	r.t.Helper()
	r.checkLine(cmd)
	for i, l := range strings.Split(strings.TrimSuffix(payload, "\n"), "\n") {
		if strings.TrimSpace(l) == "" || strings.ContainsAny(l, "\r\x00") {
			r.t.Fatalf("%s <<: payload line %d %q would end the payload or hold a control character", cmd, i+1, l)
		}
	}
	return r.fake.Payload(ctx, cmd, payload)
}

// checkLine fails the test unless HAProxy reads cmd as one whole command.
func (r *checkedRunner) checkLine(cmd string) {
	r.t.Helper()
	words := strings.Fields(cmd)
	if len(words) == 0 || strings.ContainsAny(cmd, "\n\r\x00") {
		r.t.Fatalf("command %q is empty or holds a line break or NUL", cmd)
	}
	for i := 0; i < len(cmd); i++ {
		switch {
		case cmd[i] == '\\' && i+1 == len(cmd):
			r.t.Fatalf("command %q ends with a backslash that escapes its line feed", cmd)
		case cmd[i] == '\\':
			i++
		case cmd[i] == ';':
			r.t.Fatalf("command %q holds an unescaped ';'", cmd)
		}
	}
	if last := words[len(words)-1]; strings.HasPrefix(last, "<<") || strings.HasSuffix(last, "<<") {
		r.t.Fatalf("command %q ends with a word HAProxy reads as a payload marker", cmd)
	}
}

var _ socket.Runner = (*checkedRunner)(nil)
