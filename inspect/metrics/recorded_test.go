package metrics_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/haroute/haroute/inspect/metrics"
	"github.com/haroute/haroute/mapping/model"
)

// recording is one folder of testdata: a real `show stat` reply and the applied state of the moment.
type recording struct {
	dir     string
	reply   string
	applied *model.Config
}

// recordings loads every folder of testdata (see testdata/README.md).
func recordings(t testing.TB) []recording {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "haproxy-*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recordings under testdata (%v)", err)
	}
	var out []recording
	for _, dir := range dirs {
		raw, err := os.ReadFile(filepath.Join(dir, "show_stat.txt"))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "applied.json"))
		if err != nil {
			t.Fatal(err)
		}
		var cfg model.Config
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		// The reply as Admin.Command returns it: without the empty line that ends it.
		reply := string(raw)
		if len(reply) >= 2 && reply[len(reply)-2:] == "\n\n" {
			reply = reply[:len(reply)-1]
		}
		out = append(out, recording{dir: dir, reply: reply, applied: &cfg})
	}
	return out
}

// lateSpare returns the name of the spare web/late claimed in the recording.
func (r recording) lateSpare(t testing.TB) string {
	t.Helper()
	for _, b := range r.applied.Backends {
		if b.Route == "web/late" && b.Spare {
			return b.Name
		}
	}
	t.Fatalf("%s: no spare serves web/late", r.dir)
	return ""
}

// TestRecordedReplies reads the `show stat` of every recorded HAProxy version with its applied state:
// the same series as the live test, whatever the version's columns.
func TestRecordedReplies(t *testing.T) {
	for _, r := range recordings(t) {
		t.Run(r.dir, func(t *testing.T) {
			run := &replies{reply: r.reply}
			c := newCollector(t, run, func() *model.Config { return r.applied }, metrics.Options{Fields: metrics.AllFields()})
			g := gather(t, c)
			checkFixtureSeries(t, g, r.lateSpare(t))
			if failures := g.value(t, "haproxy_exporter_csv_parse_failures", map[string]string{}); failures != 0 {
				t.Errorf("%v parse failures", failures)
			}
			if got := run.commands(); len(got) != 1 || got[0] != "show stat -1 7 -1" {
				t.Errorf("sent %q, want one show stat -1 7 -1", got)
			}
			// Every metric has its column in every version (TestRecordedHeaders): each gives a series
			// for the Route www's backend or one of its servers, but idle_connections_limit, empty
			// without pool-max-conn.
			for _, name := range []string{
				"haproxy_backend_current_queue", "haproxy_backend_max_queue", "haproxy_backend_current_sessions",
				"haproxy_backend_max_sessions", "haproxy_backend_limit_sessions", "haproxy_backend_connections_total",
				"haproxy_backend_bytes_in_total", "haproxy_backend_bytes_out_total", "haproxy_backend_connection_errors_total",
				"haproxy_backend_response_errors_total", "haproxy_backend_retry_warnings_total",
				"haproxy_backend_redispatch_warnings_total", "haproxy_backend_up", "haproxy_backend_weight",
				"haproxy_backend_current_session_rate", "haproxy_backend_max_session_rate",
				"haproxy_backend_http_average_queue_latency_milliseconds", "haproxy_backend_http_average_connect_latency_milliseconds",
				"haproxy_backend_http_average_response_latency_milliseconds", "haproxy_backend_connections_reused_total",
			} {
				if !g.has(name, map[string]string{"backend": "http", "namespace": "web", "route": "www"}) {
					t.Errorf("no %s of web/www", name)
				}
			}
			for _, name := range []string{
				"haproxy_server_check_failures_total", "haproxy_server_downtime_seconds_total",
				"haproxy_server_idle_connections_current",
				"haproxy_server_connections_total", "haproxy_server_up", "haproxy_server_weight",
			} {
				if len(g.match(name, map[string]string{"route": "www", "pod": "www-0", "service": "www"})) != 1 {
					t.Errorf("no %s of web/www's pod www-0", name)
				}
			}
			for _, name := range []string{
				"haproxy_frontend_limit_sessions", "haproxy_frontend_bytes_in_total", "haproxy_frontend_requests_denied_total",
				"haproxy_frontend_request_errors_total", "haproxy_frontend_limit_session_rate", "haproxy_frontend_max_session_rate",
				"haproxy_frontend_http_requests_total", "haproxy_frontend_connections_total",
			} {
				if !g.has(name, map[string]string{"frontend": "public"}) {
					t.Errorf("no %s of public", name)
				}
			}
		})
	}
}

// TestRecordedDefaultFields: with OpenShift's default selection, each series OpenShift exports by
// default and no other.
func TestRecordedDefaultFields(t *testing.T) {
	r := recordings(t)[0]
	c := newCollector(t, &replies{reply: r.reply}, func() *model.Config { return r.applied }, metrics.Options{})
	g := gather(t, c)
	got := map[string]bool{}
	for _, s := range g.prefixed("haproxy_") {
		got[s.name] = true
	}
	for _, absent := range []string{
		"haproxy_backend_max_queue", "haproxy_backend_weight", "haproxy_frontend_limit_sessions",
		"haproxy_frontend_http_requests_total", "haproxy_server_idle_connections_current",
	} {
		if got[absent] {
			t.Errorf("%s exported without its column selected", absent)
		}
	}
	for _, present := range []string{
		"haproxy_backend_http_responses_total", "haproxy_backend_up", "haproxy_server_check_failures_total",
		"haproxy_frontend_connections_total", "haproxy_backend_connections_reused_total",
	} {
		if !got[present] {
			t.Errorf("%s missing from the default selection", present)
		}
	}
}
