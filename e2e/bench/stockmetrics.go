//go:build e2e

package bench

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// reloadCountMetric counts the stock router's reloads: the count of its reload-duration summary,
// observed once per run of the reload script (commitAndReload in pkg/router/template/router.go),
// whether the reload succeeded or not.
const reloadCountMetric = "template_router_reload_seconds_count"

// Reloads returns how many times the router has run its reload script (each run starts a new HAProxy
// process), from its /metrics (template_router_reload_seconds_count).
func (r *StockRouter) Reloads() int {
	r.t.Helper()
	n, err := r.reloads()
	if err != nil {
		r.t.Fatalf("stock router reloads: %v", err)
	}
	return n
}

func (r *StockRouter) reloads() (int, error) {
	v, err := r.Metric(reloadCountMetric)
	if err != nil {
		return 0, err
	}
	return int(v), nil
}

// Metric returns the value of the unlabelled sample name from the router's /metrics (basic
// authentication with the stats credentials).
func (r *StockRouter) Metric(name string) (float64, error) {
	url := "http://127.0.0.1:" + strconv.Itoa(r.StatsPort) + "/metrics"
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("metrics request: %w", err)
	}
	req.SetBasicAuth(r.statsUser, r.statsPass)
	resp, err := (&http.Client{Timeout: probeTimeout}).Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		value, ok := strings.CutPrefix(sc.Text(), name+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s %q: %w", url, name, value, err)
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", url, err)
	}
	return 0, fmt.Errorf("%s: no sample %s", url, name)
}
