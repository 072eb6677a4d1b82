package oracle

import (
	"testing"
)

func TestHistoryJudge(t *testing.T) {
	set := func(eps ...string) map[string]map[string]bool {
		m := map[string]bool{}
		for _, e := range eps {
			m[e] = true
		}
		return map[string]map[string]bool{"ns/r": m}
	}
	h := NewHistory(set("a", "b")) // step 0
	h.Begin(set("b", "c"))         // step 1 in flight
	from := h.Completed()          // a request sent now
	for be, want := range map[string]string{"a": "current", "c": "current", "z": ""} {
		if got := h.Judge("ns/r", be, from); got != want {
			t.Errorf("step 1 in flight: %s judged %q, want %q", be, got, want)
		}
	}
	h.Complete()
	h.Begin(set("c", "d")) // step 2 in flight
	h.Complete()
	from = h.Completed() // 2
	for be, want := range map[string]string{"c": "current", "d": "current", "b": "previous", "a": ""} {
		if got := h.Judge("ns/r", be, from); got != want {
			t.Errorf("after step 2: %s judged %q, want %q", be, got, want)
		}
	}
	if got := h.Judge("ns/other", "c", from); got != "" {
		t.Errorf("an endpoint of another route judged %q", got)
	}
}

func TestScopeRunsCleanupsAtClose(t *testing.T) {
	var order []int
	s := NewScope(t)
	s.Cleanup(func() { order = append(order, 1) })
	s.Cleanup(func() { order = append(order, 2) })
	if len(order) != 0 {
		t.Fatal("cleanups ran before Close")
	}
	s.Close()
	s.Close()
	if len(order) != 2 || order[0] != 2 || order[1] != 1 {
		t.Fatalf("cleanups ran as %v, want [2 1] once", order)
	}
}
