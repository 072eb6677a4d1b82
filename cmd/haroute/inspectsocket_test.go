package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

// TestInspectionMasterSocketFromEnvironment checks that state, diff, explain and doctor, run with
// kubectl exec in the container whose environment names OpenShift's admin socket, talk to the
// master socket haroute run uses, and that --master-socket still wins.
func TestInspectionMasterSocketFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"ROUTER_HAPROXY_ADMIN_UNIX_SOCKET": "/var/lib/haproxy/run/admin.sock"}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"default", nil, nil, filepath.Join(dir, "run", "master.sock")},
		{"environment", env, nil, "/var/lib/haproxy/run/admin.sock"},
		{"flag wins", env, []string{"--master-socket", "/tmp/m.sock"}, "/tmp/m.sock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return tc.env[k] }}
			var f inspectFlags
			cmd := &cobra.Command{Use: "inspect"}
			f.add(a, cmd)
			if err := cmd.Flags().Parse(append([]string{"--haproxy-dir", dir}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			src, err := f.sources()
			if err != nil {
				t.Fatal(err)
			}
			if src.Master != tc.want {
				t.Errorf("master socket %q, want %q", src.Master, tc.want)
			}
		})
	}
}
