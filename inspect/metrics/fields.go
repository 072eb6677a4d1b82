package metrics

import (
	"fmt"
	"slices"
)

// family is the kind of `show stat` row a metric is read from.
type family int

const (
	frontendFamily family = iota
	backendFamily
	serverFamily
	numFamilies
)

// prefix is the metric name prefix of the family.
func (f family) prefix() string {
	return [...]string{"haproxy_frontend_", "haproxy_backend_", "haproxy_server_"}[f]
}

// field is one metric read from one `show stat` column.
type field struct {
	// number is the column's position among the static fields of `show stat` (HAProxy's
	// management.txt, section 9.1), which OpenShift's ROUTER_METRICS_HAPROXY_EXPORTED lists. It only
	// selects metrics: columns are found by name in the header line.
	number int
	// column is the column's name in the header line.
	column string
	// name is the metric name without the family prefix.
	name    string
	help    string
	counter bool
	// code is the value of the code label of http_responses_total ("" for other metrics).
	code string
}

// Column names with a meaning of their own.
const (
	colProxy  = "pxname"
	colServer = "svname"
	colType   = "type"
	colStatus = "status"
)

// Values of the type column.
const (
	typeFrontend = "0"
	typeBackend  = "1"
	typeServer   = "2"
)

// The fields of each family: OpenShift's router exporter's metric names, help and column numbers,
// and two server gauges of HAProxy's own Prometheus exporter (idle connections). Cumulative columns
// are counters here; OpenShift exports every one as a gauge, which PromQL reads the same.
var (
	sessionFields = []field{
		{4, "scur", "current_sessions", "Current number of active sessions.", false, ""},
		{5, "smax", "max_sessions", "Maximum observed number of active sessions.", false, ""},
		{6, "slim", "limit_sessions", "Configured session limit.", false, ""},
	}
	bytesFields = []field{
		{8, "bin", "bytes_in_total", "Current total of incoming bytes.", true, ""},
		{9, "bout", "bytes_out_total", "Current total of outgoing bytes.", true, ""},
	}
	queueFields = []field{
		{2, "qcur", "current_queue", "Current number of queued requests.", false, ""},
		{3, "qmax", "max_queue", "Maximum observed number of queued requests.", false, ""},
	}
	responseFields = []field{
		{39, "hrsp_1xx", "http_responses_total", "Total of HTTP responses.", true, "1xx"},
		{40, "hrsp_2xx", "http_responses_total", "Total of HTTP responses.", true, "2xx"},
		{41, "hrsp_3xx", "http_responses_total", "Total of HTTP responses.", true, "3xx"},
		{42, "hrsp_4xx", "http_responses_total", "Total of HTTP responses.", true, "4xx"},
		{43, "hrsp_5xx", "http_responses_total", "Total of HTTP responses.", true, "5xx"},
		{44, "hrsp_other", "http_responses_total", "Total of HTTP responses.", true, "other"},
	}
	// proxyFields are common to backends and servers.
	proxyFields = []field{
		{7, "stot", "connections_total", "Total number of connections.", true, ""},
		{13, "econ", "connection_errors_total", "Total of connection errors.", true, ""},
		{14, "eresp", "response_errors_total", "Total of response errors.", true, ""},
		{15, "wretr", "retry_warnings_total", "Total of retry warnings.", true, ""},
		{16, "wredis", "redispatch_warnings_total", "Total of redispatch warnings.", true, ""},
		{17, colStatus, "up", "Current health status (1 = UP, 0 = DOWN).", false, ""},
		{18, "weight", "weight", "Total effective weight (backend), effective weight (server).", false, ""},
		{33, "rate", "current_session_rate", "Current number of sessions per second over last elapsed second.", false, ""},
		{35, "rate_max", "max_session_rate", "Maximum observed number of sessions per second.", false, ""},
		{58, "qtime", "http_average_queue_latency_milliseconds", "Average latency to be dequeued of the last 1024 requests in milliseconds.", false, ""},
		{59, "ctime", "http_average_connect_latency_milliseconds", "Average connect latency of the last 1024 requests in milliseconds.", false, ""},
		{60, "rtime", "http_average_response_latency_milliseconds", "Average response latency of the last 1024 requests in milliseconds.", false, ""},
		{85, "reuse", "connections_reused_total", "Total number of connections reused.", true, ""},
	}
	frontendOnly = []field{
		{10, "dreq", "requests_denied_total", "Total of requests denied for security.", true, ""},
		{12, "ereq", "request_errors_total", "Total of request errors.", true, ""},
		{33, "rate", "current_session_rate", "Current number of sessions per second over last elapsed second.", false, ""},
		{34, "rate_lim", "limit_session_rate", "Configured limit on new sessions per second.", false, ""},
		{35, "rate_max", "max_session_rate", "Maximum observed number of sessions per second.", false, ""},
		{48, "req_tot", "http_requests_total", "Total HTTP requests.", true, ""},
		{79, "conn_tot", "connections_total", "Total number of connections.", true, ""},
	}
	serverOnly = []field{
		{21, "chkfail", "check_failures_total", "Total number of failed health checks.", true, ""},
		{24, "downtime", "downtime_seconds_total", "Total downtime in seconds.", true, ""},
		{38, "check_duration", "check_duration_milliseconds", "Previously run health check duration, in milliseconds.", false, ""},
		{88, "srv_icur", "idle_connections_current", "Current number of idle connections available for reuse.", false, ""},
		// "src_ilim" is HAProxy's spelling of the column, in every version from 2.6 to 3.4.
		{89, "src_ilim", "idle_connections_limit", "Limit on the number of available idle connections.", false, ""},
	}

	familyFields = [numFamilies][]field{
		frontendFamily: slices.Concat(sessionFields, bytesFields, frontendOnly, responseFields),
		backendFamily:  slices.Concat(queueFields, sessionFields, bytesFields, proxyFields, responseFields),
		serverFamily:   slices.Concat(queueFields, sessionFields, bytesFields, proxyFields, serverOnly, responseFields),
	}
)

// DefaultFields are the column numbers exported when Options.Fields is empty: the default of
// OpenShift's router (ROUTER_METRICS_HAPROXY_EXPORTED unset), so that the same series exist.
var DefaultFields = []int{2, 4, 5, 7, 8, 9, 13, 14, 17, 21, 24, 33, 35, 39, 40, 41, 42, 43, 44, 58, 59, 60, 79, 85}

// AllFields returns every column number some metric is read from, sorted.
func AllFields() []int {
	var out []int
	for _, fs := range familyFields {
		for _, f := range fs {
			out = append(out, f.number)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// selectFields returns, per family, the fields whose number is in numbers. A number no metric reads
// is an error.
func selectFields(numbers []int) ([numFamilies][]field, error) {
	var out [numFamilies][]field
	known := AllFields()
	for _, n := range numbers {
		if _, ok := slices.BinarySearch(known, n); !ok {
			return out, fmt.Errorf("show stat column %d: no metric is read from it (known: %v)", n, known)
		}
	}
	for fam, fs := range familyFields {
		for _, f := range fs {
			if slices.Contains(numbers, f.number) {
				out[fam] = append(out[fam], f)
			}
		}
	}
	return out, nil
}
