package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRouteMetricsOptions(t *testing.T) {
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	o, err := routeMetricsOptions(env(nil))
	if err != nil || o.Timeout != 0 || o.ServerThreshold != 0 || o.Fields != nil {
		t.Fatalf("no variables: %+v, %v; want the zero options (the collector's defaults)", o, err)
	}
	o, err = routeMetricsOptions(env(map[string]string{
		envMetricsTimeout:   "2s",
		envMetricsThreshold: "1000",
		envMetricsExported:  "2, 4,40",
	}))
	if err != nil || o.Timeout != 2*time.Second || o.ServerThreshold != 1000 || !slices.Equal(o.Fields, []int{2, 4, 40}) {
		t.Fatalf("options %+v, %v", o, err)
	}
	_, err = routeMetricsOptions(env(map[string]string{
		envMetricsTimeout:   "soon",
		envMetricsThreshold: "-1",
		envMetricsExported:  "2,x",
	}))
	for _, name := range []string{envMetricsTimeout, envMetricsThreshold, envMetricsExported} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}
