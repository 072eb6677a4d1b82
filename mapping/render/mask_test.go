package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// TestMaskRuntime: the mask drops exactly the server lines, so a change of servers (the runtime
// path's) leaves it unchanged, and a change of anything else does not.
func TestMaskRuntime(t *testing.T) {
	f := newFixture(t)
	opts := defaultOpts(f, t)
	cfg := f.model(t)
	mask := func(c *model.Config) string {
		t.Helper()
		text := renderConfig(t, c, opts)
		m, err := MaskRuntime([]byte(text), c, testDir)
		if err != nil {
			t.Fatal(err)
		}
		return string(m)
	}
	base := mask(cfg)
	text := renderConfig(t, cfg, opts)
	// A backend with a cookie writes each server twice: with its cookie value (HAProxy 3.0+) and
	// without (dynamic cookies before 3.0); one with TLS three times (also without automatic SNI,
	// 3.3+).
	servers := 0
	for _, b := range cfg.Backends {
		switch {
		case b.Kind == model.KindReencrypt:
			servers += 3 * len(b.Servers)
		case b.Cookie != nil:
			servers += 2 * len(b.Servers)
		default:
			servers += len(b.Servers)
		}
	}
	dropped := strings.Count(text, "\n") - strings.Count(base, "\n")
	if servers == 0 || dropped != servers {
		t.Fatalf("the mask dropped %d lines for %d servers", dropped, servers)
	}
	if strings.Contains(base, " check inter ") || !strings.Contains(base, "\nbackend ") {
		t.Fatalf("mask kept server lines or lost the backends:\n%s", base)
	}

	// Servers added, removed, reweighted: the runtime path's, the mask does not change.
	servs := cfg.Clone()
	b := servs.Backends[0]
	extra := b.Servers[0]
	extra.Name, extra.ID, extra.Weight = "zz-extra", extra.ID+1, 3
	b.Servers = append(slices.Clone(b.Servers), extra)
	b.Servers[0].Weight = 1
	if got := mask(servs); got != base {
		t.Fatalf("a server change changed the mask:\n%s", lineDiffs(base, got))
	}

	// A backend option: outside the runtime path, the mask changes.
	opt := cfg.Clone()
	opt.Backends[0].Allowlist = []string{"10.0.0.0/8"}
	if mask(opt) == base {
		t.Fatal("a backend option change left the mask unchanged")
	}
}

// lineDiffs lists the lines of b that a lacks, for failure messages.
func lineDiffs(a, b string) string {
	have := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		have[l] = true
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !have[l] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
