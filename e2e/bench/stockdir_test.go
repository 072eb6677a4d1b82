//go:build e2e

package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptHAProxy: the HAProxy path comes from the reload script's own lines that start HAProxy
// (OpenShift's script names Debian's path today); two different paths, or none, are refused.
func TestScriptHAProxy(t *testing.T) {
	for _, c := range []struct {
		name, script, want, err string
	}{
		{"both starts agree", "old_pids=$(pidof haproxy)\nif [ -n \"$old_pids\" ]; then\n  /opt/hap/sbin/haproxy -f $config_file -p $pid_file -sf $old_pids\nelse\n  /opt/hap/sbin/haproxy -f $config_file -p $pid_file\nfi\n", "/opt/hap/sbin/haproxy", ""},
		{"two executables", "  /opt/a/haproxy -f a\n  /opt/b/haproxy -f a\n", "", "two HAProxy executables"},
		{"none", "echo reload\npidof haproxy\n", "", "no line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, stockReload), []byte(c.script), 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := scriptHAProxy(dir)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	// The pinned build's own script, when it is there (make bench-stock).
	if build := os.Getenv(StockEnv); build != "" {
		got, err := scriptHAProxy(build)
		if err != nil || !filepath.IsAbs(got) {
			t.Errorf("the build's reload script: %q, %v", got, err)
		}
		t.Logf("%s runs %s", filepath.Join(build, stockReload), got)
	}
}
