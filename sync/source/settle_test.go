package source

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
)

// testClock is a clock that stands still until the test moves it, safe to read from Run's goroutine.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time                { return clockBase.Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration)       { c.offset.Add(int64(d)) }
func newTestClock() (*testClock, func() time.Time) { c := &testClock{}; return c, c.now }

// logBuffer collects a Folder's log lines, safe for concurrent use.
type logBuffer struct{ testkit.Buffer }

// count returns how many lines hold s.
func (b *logBuffer) count(s string) int {
	n := 0
	for line := range strings.Lines(b.String()) {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// newClockedFolder returns a Folder on dir whose clock stands still until the test moves it, and a
// buffer with its log.
func newClockedFolder(dir string) (*Folder, *testClock, *logBuffer) {
	logs := &logBuffer{}
	f := NewFolder(dir, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	var clock *testClock
	clock, f.now = newTestClock()
	return f, clock, logs
}

// writeInPlace rewrites path in place (truncate, then write), as an editor or a shell redirection does.
func writeInPlace(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// heldFor is a waitFor condition: path is held, dropping n objects, and the Routes are hosts.
func heldFor(path string, n string, hosts ...string) func(mapping.Input, []FileError) bool {
	return func(in mapping.Input, errs []FileError) bool {
		return len(errs) == 1 && errs[0].Path == path && strings.Contains(errs[0].Err.Error(), "drops "+n) &&
			slices.Equal(routeHosts(in), hosts)
	}
}

// neverWithout wraps a waitFor condition: every snapshot it sees must hold the Routes hosts (in order,
// among others after them), or the test fails.
func neverWithout(t *testing.T, hosts []string, cond func(mapping.Input, []FileError) bool) func(mapping.Input, []FileError) bool {
	return func(in mapping.Input, errs []FileError) bool {
		if got := routeHosts(in); len(got) < len(hosts) || !slices.Equal(got[:len(hosts)], hosts) {
			t.Errorf("Routes withdrawn: %v, want %v first", got, hosts)
		}
		return cond(in, errs)
	}
}

// TestFolderHoldsRewriteInPlace: a file truncated and written again in place shows empty, then cut at
// a document boundary; its Routes stay in force throughout (the clock stands still, so the settle time
// never ends), the hold is reported as a FileError and logged once per state, and the complete content
// ends it without withdrawing anything.
func TestFolderHoldsRewriteInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	full := route("ns", "a1", "a1.example.com") + route("ns", "a2", "a2.example.com")
	write(t, path, full)
	f, _, logs := newClockedFolder(dir)
	runFolder(t, f)
	both := []string{"ns/a1=a1.example.com", "ns/a2=a2.example.com"}
	waitFor(t, f, "first load", hostsAre(both...))

	// Emptied by one open with O_TRUNC: no scan can see another state.
	writeInPlace(t, path, "")
	_, errs := waitFor(t, f, "the empty file held", neverWithout(t, both, heldFor(path, "2 objects", both...)))
	msg := errs[0].Err.Error()
	for _, want := range []string{path + ": the new content drops 2 objects", "Route ns/a1, Route ns/a2", "held for 2s until the file stops changing"} {
		if !strings.Contains(msg, want) {
			t.Errorf("hold message %q does not say %q", msg, want)
		}
	}
	// Scans for other files leave the hold as it is, and do not log it again.
	write(t, filepath.Join(dir, "b.yaml"), route("ns", "b", "b.example.com"))
	waitFor(t, f, "another file", neverWithout(t, both, heldFor(path, "2 objects", append(slices.Clone(both), "ns/b=b.example.com")...)))
	if n := logs.count("held for 2s"); n != 1 {
		t.Errorf("the hold was logged %d times, want once:\n%s", n, logs)
	}

	// Cut after the first document.
	writeInPlace(t, path, route("ns", "a1", "a1.example.com"))
	waitFor(t, f, "the cut file held", neverWithout(t, both, heldFor(path, "1 object ", append(slices.Clone(both), "ns/b=b.example.com")...)))
	writeInPlace(t, path, full)
	waitFor(t, f, "the complete file", neverWithout(t, both, hostsAre(append(slices.Clone(both), "ns/b=b.example.com")...)))

	if n := logs.count("complete again before its settle time"); n != 1 {
		t.Errorf("the end of the hold was logged %d times, want 1:\n%s", n, logs)
	}
	if n := logs.count("manifest file fixed"); n != 0 {
		t.Errorf("a hold was logged as fixed:\n%s", logs)
	}
}

// TestFolderSettleWithdraws: a file emptied in place and left empty is held until its bytes have not
// changed for the settle time, and the settle timer alone (no other event) then withdraws its Routes.
func TestFolderSettleWithdraws(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	write(t, path, route("ns", "a1", "a1.example.com")+route("ns", "a2", "a2.example.com"))
	write(t, other, route("ns", "b", "b.example.com"))
	f, clock, logs := newClockedFolder(dir)
	f.settle = 100 * time.Millisecond
	runFolder(t, f)
	all := []string{"ns/a1=a1.example.com", "ns/a2=a2.example.com", "ns/b=b.example.com"}
	waitFor(t, f, "first load", hostsAre(all...))

	writeInPlace(t, path, route("ns", "a1", "a1.example.com"))
	waitFor(t, f, "the cut file held", heldFor(path, "1 object", all...))

	// New bytes that still drop objects start the settle time again: 80 ms into the first hold, the
	// file is emptied; 80 ms later (160 ms after the first change, 80 ms after the second) it is still
	// held. The scan that shows it is the one that shows the new Route of b.yaml.
	clock.advance(80 * time.Millisecond)
	writeInPlace(t, path, "")
	waitFor(t, f, "the empty file held", heldFor(path, "2 objects", all...))
	clock.advance(80 * time.Millisecond)
	write(t, other, route("ns", "b", "b.example.com")+route("ns", "c", "c.example.com"))
	waitFor(t, f, "b.yaml's new Route, a.yaml still held", heldFor(path, "2 objects", append(slices.Clone(all), "ns/c=c.example.com")...))

	// The settle time ends: the settle timer re-scans and takes the empty content.
	clock.advance(20 * time.Millisecond)
	waitFor(t, f, "the empty file in force", hostsAre("ns/b=b.example.com", "ns/c=c.example.com"))
	if n := logs.count("stopped changing: its new content is in force"); n != 1 {
		t.Errorf("the end of the hold was logged %d times, want 1:\n%s", n, logs)
	}
}

// TestFolderNoHoldWithoutDrops: content that adds or changes objects is in force at once, and so is a
// file replaced by a rename or deleted, even when it drops objects; the clock stands still, so a hold
// would never end.
func TestFolderNoHoldWithoutDrops(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	write(t, path, route("ns", "a1", "a1.example.com"))
	write(t, other, route("ns", "b", "b.example.com"))
	f, _, _ := newClockedFolder(dir)
	runFolder(t, f)
	waitFor(t, f, "first load", hostsAre("ns/a1=a1.example.com", "ns/b=b.example.com"))

	writeInPlace(t, path, route("ns", "a1", "a1.example.com")+route("ns", "a2", "a2.example.com"))
	waitFor(t, f, "an added Route", hostsAre("ns/a1=a1.example.com", "ns/a2=a2.example.com", "ns/b=b.example.com"))
	writeInPlace(t, path, route("ns", "a1", "a1-new.example.com")+route("ns", "a2", "a2.example.com"))
	waitFor(t, f, "a changed Route", hostsAre("ns/a1=a1-new.example.com", "ns/a2=a2.example.com", "ns/b=b.example.com"))

	// Written elsewhere and renamed over the file: complete, in force at once though it drops a2.
	write(t, path, route("ns", "a1", "a1-new.example.com"))
	waitFor(t, f, "a file replaced by a rename", hostsAre("ns/a1=a1-new.example.com", "ns/b=b.example.com"))

	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "a deleted file", hostsAre("ns/a1=a1-new.example.com"))

	// A held file that is deleted is withdrawn at once too.
	writeInPlace(t, path, "")
	waitFor(t, f, "the empty file held", heldFor(path, "1 object", "ns/a1=a1-new.example.com"))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, "the held file deleted", hostsAre())
}

// TestFolderHeldThenBroken: a held file whose content then does not decode reports the decoding
// error and keeps its content in force; fixed content that drops objects is held again.
func TestFolderHeldThenBroken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	both := []string{"ns/a1=a1.example.com", "ns/a2=a2.example.com"}
	write(t, path, route("ns", "a1", "a1.example.com")+route("ns", "a2", "a2.example.com"))
	f, clock, _ := newClockedFolder(dir)
	runFolder(t, f)
	waitFor(t, f, "first load", hostsAre(both...))

	writeInPlace(t, path, "")
	waitFor(t, f, "the empty file held", heldFor(path, "2 objects", both...))
	writeInPlace(t, path, "kind: [")
	waitFor(t, f, "the broken file", func(in mapping.Input, errs []FileError) bool {
		return len(errs) == 1 && strings.Contains(errs[0].Err.Error(), "document 1 (line 1)") && slices.Equal(routeHosts(in), both)
	})
	// Fixed content that drops objects is held again, from the time it appears.
	clock.advance(time.Hour)
	writeInPlace(t, path, route("ns", "a2", "a2.example.com"))
	waitFor(t, f, "the cut file held", heldFor(path, "1 object", both...))
}

// TestFolderSettleTimerStops: Run returns at once on cancel while a file is held.
func TestFolderSettleTimerStops(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, route("ns", "a", "a.example.com"))
	f, _, _ := newClockedFolder(dir)
	stop := runFolder(t, f)
	waitFor(t, f, "first load", hostsAre("ns/a=a.example.com"))
	writeInPlace(t, path, "")
	waitFor(t, f, "the empty file held", heldFor(path, "1 object", "ns/a=a.example.com"))
	stop()
}

func TestDropped(t *testing.T) {
	for _, c := range []struct {
		old, now, want []string
	}{
		{nil, nil, nil},
		{[]string{"a", "b"}, nil, []string{"a", "b"}},
		{[]string{"a", "b"}, []string{"b", "c"}, []string{"a"}},
		{[]string{"a"}, []string{"a", "b"}, nil},
	} {
		if got := dropped(c.old, c.now); !slices.Equal(got, c.want) {
			t.Errorf("dropped(%v, %v) = %v, want %v", c.old, c.now, got, c.want)
		}
	}
	if got := summarize([]string{"a", "b", "c", "d", "e"}, 3); got != "a, b, c and 2 more" {
		t.Errorf("summarize = %q", got)
	}
}
