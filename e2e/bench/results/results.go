// Package results holds what the benchmark harness (e2e/bench) measures, as JSON files in one
// directory, and reads them back for the report that regenerates docs/bench.md. It has no build tag,
// so that the report command builds without the e2e harness.
//
// Each test writes its own file (traces.json, scale.json, dataplane.json, idle.json); a later run of
// the same test replaces its file. Go benchmark output (BenchmarkUpdateOneEndpoint) is kept as text in
// update.txt. Durations are seconds, memory is MiB (1 MiB = 1,048,576 bytes).
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// File names in a results directory.
const (
	TracesFile    = "traces.json"
	ScaleFile     = "scale.json"
	DataPlaneFile = "dataplane.json"
	IdleFile      = "idle.json"
	// UpdateFile is `go test -bench UpdateOneEndpoint -benchmem` output, as text.
	UpdateFile = "update.txt"
)

// Modes a trace runs in. The reload modes are haroute's `--mode reload` with the stock router's
// coalescing interval.
const (
	ModeRuntime  = "runtime"
	ModeReload5s = "reload-5s"
	ModeReload1s = "reload-1s"
)

// Header says where and how a file's figures were measured.
type Header struct {
	Machine Machine   `json:"machine"`
	HAProxy string    `json:"haproxy"` // the first line of `haproxy -v`
	Commit  string    `json:"commit"`  // git describe of the tree measured
	Command string    `json:"command"` // the command that produced the file
	Started time.Time `json:"started"`
	Elapsed float64   `json:"elapsed"` // seconds the whole test took
}

// Machine describes the host.
type Machine struct {
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpuModel"`
	MemoryMB int    `json:"memoryMB"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
}

// ThisMachine reads the host's description from /proc.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			m.MemoryMB = kb / 1024
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// Traces is traces.json: every run of every trace in every mode.
type Traces struct {
	Header
	Runs []TraceRun `json:"runs"`
}

// TraceRun is one trace in one mode, one repeat.
type TraceRun struct {
	Trace  string `json:"trace"`  // rolling, scale, churn, preview, burst, certs, balance
	Mode   string `json:"mode"`   // ModeRuntime, ModeReload5s, ModeReload1s
	Repeat int    `json:"repeat"` // 1, 2, 3, ...
	// Changes is the number of API writes the trace made.
	Changes int `json:"changes"`
	// Reloads counts HAProxy reloads during the trace; RuntimeOps the runtime API ops haroute sent.
	Reloads    int `json:"reloads"`
	RuntimeOps int `json:"runtimeOps"`
	// ChangeToTraffic holds, per change whose effect traffic can see, the seconds from the API write
	// to the first request that saw it.
	ChangeToTraffic []float64 `json:"changeToTraffic"`
	// Requests, Failed and Wrong count the load generator's requests, the failed ones (error or
	// non-2xx) and the ones answered by a backend the Route did not have at the time.
	Requests int64 `json:"requests"`
	Failed   int64 `json:"failed"`
	Wrong    int64 `json:"wrong"`
	// LongLived is the number of long-lived connections open at the end of the trace.
	LongLived int `json:"longLived"`
	// HAProxyProcsMax and HAProxyRSSMaxMB are the most HAProxy processes (master included) and their
	// largest total RSS seen during the trace; HarouteCPU is haroute's user+system CPU seconds and
	// HarouteRSSMaxMB its largest RSS.
	HAProxyProcsMax int     `json:"haproxyProcsMax"`
	HAProxyRSSMaxMB float64 `json:"haproxyRSSMaxMB"`
	HarouteCPU      float64 `json:"harouteCPU"`
	HarouteRSSMaxMB float64 `json:"harouteRSSMaxMB"`
	// Samples are taken every SampleInterval during the trace.
	Samples []Sample `json:"samples"`
}

// SampleInterval is how often a trace samples processes and reloads.
const SampleInterval = 250 * time.Millisecond

// Sample is the state at T seconds after the trace's first change.
type Sample struct {
	T            float64 `json:"t"`
	Reloads      int     `json:"reloads"` // since the trace started
	HAProxyProcs int     `json:"haproxyProcs"`
	HAProxyRSSMB float64 `json:"haproxyRSSMB"`
}

// Scale is scale.json: haroute at growing numbers of Routes.
type Scale struct {
	Header
	Points []ScalePoint `json:"points"`
}

// ScalePoint is one size.
type ScalePoint struct {
	Routes    int `json:"routes"`
	Endpoints int `json:"endpoints"` // per Route
	// Memory once every Route is served and idle.
	HarouteRSSMB float64 `json:"harouteRSSMB"`
	HAProxyRSSMB float64 `json:"haproxyRSSMB"`
	HAProxyPSSMB float64 `json:"haproxyPSSMB"`
	// StartToServed is the seconds from haroute's start until every Route answers (a sample of them
	// is checked); StartToStatus until every Route's status is written.
	StartToServed float64 `json:"startToServed"`
	StartToStatus float64 `json:"startToStatus"`
	// EndpointChange and RouteAdd are the seconds from the API write to traffic seeing it, one
	// sample per repeat.
	EndpointChange []float64 `json:"endpointChange"`
	RouteAdd       []float64 `json:"routeAdd"`
	// MetricsScrape is the seconds of each GET /metrics, MetricsBytes the size of the last one.
	MetricsScrape []float64 `json:"metricsScrape"`
	MetricsBytes  int       `json:"metricsBytes"`
}

// DataPlane is dataplane.json: requests per second through HAProxy.
type DataPlane struct {
	Header
	Points []DataPlanePoint `json:"points"`
}

// DataPlanePoint is one configuration, one repeat.
type DataPlanePoint struct {
	Routes int `json:"routes"`
	// Form is "haroute" (the rendered maps) or "map_reg" (the same Routes as OpenShift's regular
	// expression map).
	Form   string  `json:"form"`
	Repeat int     `json:"repeat"`
	RPS    float64 `json:"rps"`
	// Hosts is how many different Routes the requests were spread over.
	Hosts int `json:"hosts"`
}

// Idle is idle.json: the stock router and haroute side by side, idle.
type Idle struct {
	Header
	Points []IdlePoint `json:"points"`
}

// IdlePoint is one router at one size.
type IdlePoint struct {
	Router    string  `json:"router"` // "stock" or "haroute"
	Routes    int     `json:"routes"`
	Endpoints int     `json:"endpoints"`
	RouterMB  float64 `json:"routerMB"` // the router process's RSS
	HAProxyMB float64 `json:"haproxyMB"`
	// HAProxyPSSMB is the HAProxy processes' total PSS (0 when not measured).
	HAProxyPSSMB  float64 `json:"haproxyPSSMB"`
	StartToServed float64 `json:"startToServed"`
	StartToStatus float64 `json:"startToStatus"` // 0 when not waited for
	Reloads       int     `json:"reloads"`
	// Held is the measurement with long-lived connections held through endpoint churn, taken after
	// the idle one (nil when not measured).
	Held *HeldPoint `json:"held,omitempty"`
}

// HeldPoint is one router after endpoint churn with long-lived connections held: one more
// connection opened every second while one EndpointSlice a second changed, measured once the last
// change could have been applied, with every connection still open.
type HeldPoint struct {
	Changes     int `json:"changes"`     // EndpointSlice updates
	Reloads     int `json:"reloads"`     // HAProxy reloads during the churn
	Connections int `json:"connections"` // long-lived connections open when measured
	Procs       int `json:"procs"`       // HAProxy processes, old ones kept by connections included
	// HAProxyMB and HAProxyPSSMB are the HAProxy processes' total RSS and PSS.
	HAProxyMB    float64 `json:"haproxyMB"`
	HAProxyPSSMB float64 `json:"haproxyPSSMB"`
}

// Write stores v as dir/name, indented, through a temporary file and a rename.
func Write(dir, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("results %s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results %s: %w", name, err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("results %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("results %s: %w", name, err)
	}
	return nil
}

// Read loads dir/name into v; found is false (and err nil) when the file does not exist.
func Read(dir, name string, v any) (found bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("results %s: %w", name, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("results %s: %w", name, err)
	}
	return true, nil
}
