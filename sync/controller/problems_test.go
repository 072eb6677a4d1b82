package controller

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
)

// TestProblemLogLogsChanges: a rejection is logged once with its reason and message, a warning once,
// an unchanged set not at all, and a Route that is admitted again says so.
func TestProblemLogLogsChanges(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	pl := problemLog{}
	claimed := mapping.Problem{Namespace: "b", Name: "shop", Reason: mapping.ReasonHostAlreadyClaimed, Message: "route a/shop has host shop.example.com"}
	refused := mapping.Problem{Namespace: "a", Name: "web", Reason: "EndpointRefused", Message: "endpoint address 127.0.0.1 refused", Warning: true}
	lines := func() []string {
		out := strings.Split(strings.TrimSpace(buf.String()), "\n")
		buf.Reset()
		if len(out) == 1 && out[0] == "" {
			return nil
		}
		return out
	}

	pl.update(log, []mapping.Problem{claimed, refused})
	got := lines()
	if len(got) != 2 || !strings.Contains(got[0], `msg="route warning" route=a/web`) ||
		!strings.Contains(got[1], `msg="route rejected" route=b/shop reason=HostAlreadyClaimed message="route a/shop has host shop.example.com"`) {
		t.Fatalf("first sync logged:\n%s", strings.Join(got, "\n"))
	}
	pl.update(log, []mapping.Problem{refused, claimed})
	if got := lines(); got != nil {
		t.Fatalf("an unchanged set logged:\n%s", strings.Join(got, "\n"))
	}
	pl.update(log, []mapping.Problem{refused})
	if got := lines(); len(got) != 1 || !strings.Contains(got[0], `msg="route admitted" route=b/shop`) {
		t.Fatalf("the admitted Route logged:\n%s", strings.Join(got, "\n"))
	}
	pl.update(log, nil)
	if got := lines(); got != nil {
		t.Fatalf("a warning that went away logged:\n%s", strings.Join(got, "\n"))
	}
	if len(pl) != 0 {
		t.Fatalf("the log keeps %d Routes without problems", len(pl))
	}
}
