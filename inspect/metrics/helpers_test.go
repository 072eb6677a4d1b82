package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/haroute/haroute/inspect/metrics"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// series is one gathered series: its name, labels and value.
type series struct {
	name   string
	labels map[string]string
	value  float64
	typ    dto.MetricType
}

func (s series) String() string {
	keys := slices.Sorted(maps.Keys(s.labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, s.labels[k])
	}
	return fmt.Sprintf("%s{%s} %v", s.name, strings.Join(parts, ","), s.value)
}

// gathered is the result of one Gather.
type gathered []series

// gather registers c on a pedantic registry (which checks every series against Describe) and
// gathers it once.
func gather(t testing.TB, c prometheus.Collector) gathered {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var out gathered
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			s := series{name: f.GetName(), labels: map[string]string{}, typ: f.GetType()}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				s.value = m.GetGauge().GetValue()
			case m.Counter != nil:
				s.value = m.GetCounter().GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// match returns the series named name whose labels include want.
func (g gathered) match(name string, want map[string]string) []series {
	var out []series
	for _, s := range g {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range want {
			if s.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// value returns the value of the one series named name with exactly the labels want.
func (g gathered) value(t testing.TB, name string, want map[string]string) float64 {
	t.Helper()
	for _, s := range g.match(name, want) {
		if len(s.labels) == len(want) {
			return s.value
		}
	}
	t.Fatalf("no series %s%v; series of that name:\n%s", name, want, g.dump(name))
	return 0
}

// has reports whether a series named name has exactly the labels want.
func (g gathered) has(name string, want map[string]string) bool {
	for _, s := range g.match(name, want) {
		if len(s.labels) == len(want) {
			return true
		}
	}
	return false
}

// prefixed returns the series whose name starts with prefix.
func (g gathered) prefixed(prefix string) gathered {
	var out gathered
	for _, s := range g {
		if strings.HasPrefix(s.name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// dump lists the series named name (all series when name is empty), sorted.
func (g gathered) dump(name string) string {
	var out []string
	for _, s := range g {
		if name == "" || s.name == name {
			out = append(out, s.String())
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// labelValues returns every value of label in the series named with prefix.
func (g gathered) labelValues(prefix, label string) []string {
	set := map[string]bool{}
	for _, s := range g.prefixed(prefix) {
		if v, ok := s.labels[label]; ok {
			set[v] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// replies is a socket.Runner answering every command with one reply (or error) and recording the
// commands it was sent.
type replies struct {
	reply string
	err   error
	mu    sync.Mutex
	sent  []string
}

func (r *replies) Command(_ context.Context, cmd string) (string, error) {
	r.mu.Lock()
	r.sent = append(r.sent, cmd)
	r.mu.Unlock()
	return r.reply, r.err
}

func (r *replies) Payload(context.Context, string, string) (string, error) {
	return "", errors.New("the collector sends no payload")
}

func (r *replies) commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

var _ socket.Runner = (*replies)(nil)

// newCollector returns a Collector or fails the test.
func newCollector(t testing.TB, r socket.Runner, applied func() *model.Config, opts metrics.Options) *metrics.Collector {
	t.Helper()
	c, err := metrics.New(r, applied, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
