//go:build e2e

package cluster

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/e2e/operatorenv"
	"github.com/haroute/haroute/mapping/layout"
)

// What the operator-environment scenarios (operatorenv_test.go) need to run a captured router
// environment on a test machine: where the mounted Secrets and ConfigMaps go (the test writes them
// with framework.WriteKubeletVolume), and the environment remapped onto them and onto the harness's
// ports and sockets.

// Paths of the operator's pod that the remapping knows.
const (
	// podHAProxyDir is the haproxy-config emptyDir, shared by the router and HAProxy: the harness's
	// HAProxy directory (--haproxy-dir) stands for it.
	podHAProxyDir = "/var/lib/haproxy"
	// podServiceAccountDir is the kube-api-access projected volume: the harness gives haroute a
	// kubeconfig instead, and no variable names a file in it.
	podServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// podMounts maps the mount paths of a variant's router container to directories on this machine:
// the haproxy-config emptyDir to the harness's HAProxy directory, a mount nested inside it (the stats
// credentials, the error pages) to the same place inside that directory, as in the pod, and every
// other Secret, ConfigMap or emptyDir mount to a directory of its own under root, named after the
// volume.
type podMounts struct {
	// local maps a mount path to its directory here.
	local map[string]string
	// volume maps a mount path to its volume's name.
	volume map[string]string
}

// newPodMounts maps the router container's mounts of d; haproxyDir is the harness's HAProxy
// directory and root a directory for the others.
func newPodMounts(d operatorenv.Deployment, haproxyDir, root string) (podMounts, error) {
	m := podMounts{local: map[string]string{}, volume: map[string]string{}}
	for _, vm := range d.VolumeMounts {
		switch {
		case vm.MountPath == podServiceAccountDir:
			continue
		case vm.MountPath == podHAProxyDir:
			m.local[vm.MountPath] = haproxyDir
		case strings.HasPrefix(vm.MountPath, podHAProxyDir+"/"):
			m.local[vm.MountPath] = filepath.Join(haproxyDir, strings.TrimPrefix(vm.MountPath, podHAProxyDir+"/"))
		default:
			m.local[vm.MountPath] = filepath.Join(root, vm.Name)
		}
		m.volume[vm.MountPath] = vm.Name
	}
	if m.local[podHAProxyDir] == "" {
		return podMounts{}, fmt.Errorf("%s: the router container does not mount %s", d.Variant, podHAProxyDir)
	}
	return m, nil
}

// path returns where the pod's path p is on this machine: under the longest mount path that holds
// it. ok is false when no mount holds p.
func (m podMounts) path(p string) (local string, ok bool) {
	best := ""
	for mp := range m.local {
		if (p == mp || strings.HasPrefix(p, mp+"/")) && len(mp) > len(best) {
			best = mp
		}
	}
	if best == "" {
		return "", false
	}
	return m.local[best] + strings.TrimPrefix(p, best), true
}

// dirOf returns the directory here of the mount of volume name ("" when the container does not
// mount it).
func (m podMounts) dirOf(name string) string {
	for mp, v := range m.volume {
		if v == name {
			return m.local[mp]
		}
	}
	return ""
}

// harnessEnv is a variant's environment as haroute gets it here, with the reason of every change.
type harnessEnv struct {
	// vars is NAME=value, sorted by name.
	vars []string
	// changed names each remapped variable with its new value and the reason.
	changed []string
}

// remapEnv returns the environment of variant d for a router r of the harness. Every variable is
// kept; a value that cannot be taken as it is on a test machine is remapped, and why is said here:
//
//   - ROUTER_SERVICE_HTTP_PORT, ROUTER_SERVICE_HTTPS_PORT, STATS_PORT: the operator's 80, 443 and
//     1936 are the node's ports (HostNetwork); the harness picks free loopback ports and passes them
//     as --http-port, --https-port and --stats-port, which win over the variables. The variables are
//     set to the same ports, so that both say the same.
//   - ROUTER_HAPROXY_ADMIN_UNIX_SOCKET: the operator points it at its HAProxy sidecar's master socket
//     (/var/lib/haproxy/run/admin.sock, HAProxy's -S); the harness's HAProxy, managed by haroute or
//     started by the test, has its master socket at <haproxy-dir>/run/master.sock, so the variable
//     names that one (haroute refuses any other master socket for a managed HAProxy).
//   - ROUTER_SYSLOG_ADDRESS: a host:port (a remote syslog server) becomes syslogUDP, a UDP receiver of
//     the test on loopback; a socket path is remapped as files are (below) and the test listens there.
//   - Every other absolute path (DEFAULT_CERTIFICATE_DIR=/etc/pki/tls/private, the service CA
//     bundle, the metrics certificate and key, STATS_USERNAME_FILE and STATS_PASSWORD_FILE, the
//     error pages, the client CA bundle): /etc/pki and /var/run/configmaps are not the test's to
//     write, and /var/lib/haproxy is the harness's HAProxy directory. Each path is moved to where
//     mounts puts the volume that holds it; the test writes the files there with generated content.
//     A path no mount holds fails the test: nothing is dropped silently.
func remapEnv(t *testing.T, d operatorenv.Deployment, r *framework.ClusterRouter, mounts podMounts, syslogUDP string) harnessEnv {
	t.Helper()
	var out harnessEnv
	names := make([]string, 0, len(d.EnvVars))
	env := d.Env()
	for _, e := range d.EnvVars {
		if e.ValueFrom != nil {
			t.Fatalf("%s: %s is set from %+v: the scenarios know plain values only", d.Variant, e.Name, e.ValueFrom)
		}
		names = append(names, e.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, why := env[name], ""
		switch {
		case name == "ROUTER_SERVICE_HTTP_PORT":
			v, why = strconv.Itoa(r.HTTPPort), "the harness's free port (--http-port wins)"
		case name == "ROUTER_SERVICE_HTTPS_PORT":
			v, why = strconv.Itoa(r.HTTPSPort), "the harness's free port (--https-port wins)"
		case name == "STATS_PORT":
			v, why = strconv.Itoa(r.StatsPort), "the harness's free port (--stats-port wins)"
		case name == "ROUTER_HAPROXY_ADMIN_UNIX_SOCKET":
			v, why = layout.For(r.Dir).MasterSocket(), "the master socket of the harness's HAProxy"
		case name == "ROUTER_SYSLOG_ADDRESS" && !strings.HasPrefix(v, "/"):
			if syslogUDP == "" {
				t.Fatalf("%s: ROUTER_SYSLOG_ADDRESS=%q and no UDP receiver", d.Variant, v)
			}
			v, why = syslogUDP, "the test's UDP syslog receiver on loopback"
		case strings.HasPrefix(v, "/"):
			local, ok := mounts.path(v)
			if !ok {
				t.Fatalf("%s: %s=%q: no volume of the router container holds this path", d.Variant, name, v)
			}
			v, why = local, "the test's file for the mounted volume"
		}
		if why != "" {
			out.changed = append(out.changed, fmt.Sprintf("%s=%s (%s; was %s)", name, v, why, env[name]))
		}
		out.vars = append(out.vars, name+"="+v)
	}
	return out
}
