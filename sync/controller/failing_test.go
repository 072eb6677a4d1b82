package controller

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping/model"
)

// TestFixDuringBackoffIsPickedUp: a bad input makes every sync fail and the backoff long (a minute
// here); a change that fixes it is applied after about retryOnChange, not when the backoff ends.
// Meanwhile /healthz/ready stays 200 (HAProxy serves the last state it took) and says that syncs
// fail, and haroute_update_failures_total counts them.
func TestFixDuringBackoffIsPickedUp(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	c := newTestController(src, up)
	c.retryStart = time.Minute
	h := Handler(c)
	run(t, c)
	waitFor(t, 3*time.Second, "the first update", func() bool { return up.count("update") == 1 })

	up.mu.Lock()
	up.failIf = func(cfg *model.Config) bool { return slices.Contains(serversOf(cfg, "demo", "web"), "10.0.0.66") }
	up.mu.Unlock()
	src.set(webInput("10.0.0.1", "10.0.0.66"))
	waitFor(t, 3*time.Second, "the failed sync", func() bool { return c.Failing() != nil })
	if code, body := get(t, h, "/healthz/ready"); code != http.StatusOK || !strings.Contains(body, "1 syncs failed in a row") ||
		!strings.Contains(body, "injected failure") {
		t.Fatalf("/healthz/ready while syncs fail: %d %q", code, body)
	}
	if got := value(t, c.Metrics.UpdateFailures.WithLabelValues("Initial")); got != 1 {
		t.Fatalf("haroute_update_failures_total = %v, want 1", got)
	}

	// The fix: without it, the next try would come after the minute's backoff.
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	// The fake records an update before the loop learns its outcome: wait for both.
	waitFor(t, 10*time.Second, "the fix applied and the failure cleared", func() bool {
		ups, _ := up.snapshot()
		return slices.Equal(serversOf(ups[len(ups)-1], "demo", "web"), []string{"10.0.0.1", "10.0.0.2"}) && c.Failing() == nil
	})
	if code, body := get(t, h, "/healthz/ready"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz/ready after the fix: %d %q", code, body)
	}
}

// TestNotReadySaysWhy: before the first sync is applied, /healthz/ready answers 503 and its body
// carries the error of the syncs that keep failing, not only that none was applied.
func TestNotReadySaysWhy(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	src.synced.Store(true)
	up := newFakeHAProxy()
	up.failIf = func(*model.Config) bool { return true }
	c := newTestController(src, up)
	c.retryStart = time.Minute
	h := Handler(c)
	run(t, c)
	waitFor(t, 3*time.Second, "the failed sync", func() bool { return c.Failing() != nil })
	if code, body := get(t, h, "/healthz/ready"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "no sync applied yet") || !strings.Contains(body, "injected failure") {
		t.Fatalf("/healthz/ready before any sync applied, while syncs fail: %d %q", code, body)
	}
}
