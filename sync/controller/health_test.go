package controller

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestHandlerCodesAndMetricNames(t *testing.T) {
	src := newFakeSource(webInput("10.0.0.1"))
	up := newFakeHAProxy()
	c := newTestController(src, up)
	c.DriftInterval = 100 * time.Millisecond
	h := Handler(c)

	// Before Run: the loop does not run.
	if code, body := get(t, h, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not running") {
		t.Fatalf("/healthz before Run: %d %q", code, body)
	}
	run(t, c)
	// Running, admin answers, but not synced: healthy, not ready.
	waitFor(t, 3*time.Second, "healthy", func() bool { code, _ := get(t, h, "/healthz"); return code == 200 })
	if code, body := get(t, h, "/healthz/ready"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no sync") {
		t.Fatalf("/healthz/ready before the first sync: %d %q", code, body)
	}
	src.synced.Store(true)
	waitFor(t, 3*time.Second, "ready", func() bool { code, _ := get(t, h, "/healthz/ready"); return code == 200 })

	// The admin socket stops answering: both fail, with the reason.
	up.set(func(u *fakeHAProxy) { u.pingErr = errors.New("haproxy admin socket: connection refused") })
	if code, body := get(t, h, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "admin socket") {
		t.Fatalf("/healthz with a silent admin socket: %d %q", code, body)
	}
	if code, _ := get(t, h, "/healthz/ready"); code != http.StatusServiceUnavailable {
		t.Fatalf("/healthz/ready with a silent admin socket: %d", code)
	}
	up.set(func(u *fakeHAProxy) { u.pingErr = nil })

	// A runtime change so that the labelled series exist.
	src.set(webInput("10.0.0.1", "10.0.0.2"))
	waitFor(t, 3*time.Second, "the second update", func() bool { return up.count("update") == 2 })
	code, body := get(t, h, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, name := range []string{
		"haroute_reloads_total{reason=\"Initial\"} 1",
		"haroute_runtime_ops_total{op=\"add_server\",result=\"ok\"} 1",
		"haroute_sync_duration_seconds_bucket",
		"haroute_drift_repairs_total 0",
		"haroute_haproxy_workers ",
		"template_router_reload_seconds_count 1",
		"template_router_write_config_seconds_count 1",
	} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %q", name)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

func TestHealthyDetectsStalledLoop(t *testing.T) {
	c := &Controller{HAProxy: newFakeHAProxy(), DriftInterval: time.Millisecond}
	c.lastLoop.Store(time.Now().Add(-time.Minute).UnixNano())
	err := c.Healthy(t.Context())
	if err == nil || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("Healthy with a loop idle for 1 min (limit 10s): %v", err)
	}
	c.beat()
	if err := c.Healthy(t.Context()); err != nil {
		t.Fatalf("Healthy after a beat: %v", err)
	}
}
