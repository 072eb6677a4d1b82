package manifests_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/haroute/haroute/mapping/layout"
)

// TestPodFollowsTheLayout: in every Deployment of every variant, the haroute containers (init and
// sidecar) and HAProxy mount one volume at the HAProxy directory haroute is given (--haproxy-dir),
// writable, and every path into that directory on their command lines and in their environment is
// where mapping/layout puts it: HAProxy's -f are the configuration and the backend folder, its -S is
// the master socket haroute reaches (layout.MasterSocket, or the one ROUTER_HAPROXY_ADMIN_UNIX_SOCKET
// or --master-socket names, inside the socket folder), haroute's socket flags name the layout's
// sockets. Paths under another volume mounted inside the directory by any container of the pod (the
// openshift overlay's stats Secret, which only the sidecar mounts) are that volume's.
func TestPodFollowsTheLayout(t *testing.T) {
	checked := 0
	for _, v := range variants {
		for _, d := range objects[appsv1.Deployment](t, v, "Deployment") {
			t.Run(strings.ReplaceAll(v, "/", "_")+"_"+d.Name, func(t *testing.T) {
				checkPodLayout(t, d.Spec.Template.Spec)
			})
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no Deployment in any variant")
	}
}

// checkPodLayout checks one pod against the layout.
func checkPodLayout(t *testing.T, spec corev1.PodSpec) {
	var haproxy *corev1.Container
	var haroutes []corev1.Container
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		switch {
		case c.Name == "haproxy":
			haproxy = &c
		case len(c.Command) == 0 && len(c.Args) > 0 && c.Args[0] == "run":
			haroutes = append(haroutes, c)
		}
	}
	if haproxy == nil || len(haroutes) == 0 {
		t.Fatalf("want an haproxy container and haroute run containers, got %d haroute containers", len(haroutes))
	}

	// One directory, one volume, mounted writable at it by every container.
	dir := ""
	for _, c := range haroutes {
		d, ok := flags(c.Args[1:])["haproxy-dir"]
		switch {
		case !ok:
			t.Fatalf("container %s: no --haproxy-dir", c.Name)
		case dir != "" && d != dir:
			t.Fatalf("container %s: --haproxy-dir=%s, another container's is %s", c.Name, d, dir)
		}
		dir = d
	}
	l := layout.For(dir)
	volume := ""
	for _, c := range append(slices.Clone(haroutes), *haproxy) {
		m, ok := holding(c.VolumeMounts, dir)
		switch {
		case !ok || m.MountPath != dir:
			t.Errorf("container %s does not mount a volume at the HAProxy directory %s (%+v)", c.Name, dir, c.VolumeMounts)
		case m.ReadOnly:
			t.Errorf("container %s mounts the HAProxy directory %s read-only", c.Name, dir)
		case volume != "" && m.Name != volume:
			t.Errorf("container %s mounts volume %s at %s, another container %s", c.Name, m.Name, dir, volume)
		default:
			volume = m.Name
		}
	}

	// The master socket haroute reaches: ROUTER_HAPROXY_ADMIN_UNIX_SOCKET or --master-socket (the same
	// in every haroute container), else the layout's.
	master := ""
	for _, c := range haroutes {
		m := l.MasterSocket()
		for _, e := range c.Env {
			if e.Name == "ROUTER_HAPROXY_ADMIN_UNIX_SOCKET" {
				m = e.Value
			}
		}
		if f, ok := flags(c.Args[1:])["master-socket"]; ok {
			m = f
		}
		if master != "" && m != master {
			t.Errorf("container %s reaches the master socket %s, another container %s", c.Name, m, master)
		}
		master = m
	}
	if !strings.HasPrefix(master, l.RunDir()+"/") {
		t.Errorf("the master socket %s is not in the socket folder %s", master, l.RunDir())
	}

	// HAProxy: -S the master socket, -f the configuration then the backend folder.
	argv := append(slices.Clone(haproxy.Command), haproxy.Args...)
	var sockets, configs []string
	for i := 0; i+1 < len(argv); i++ {
		switch argv[i] {
		case "-S":
			s, _, _ := strings.Cut(argv[i+1], ",")
			sockets = append(sockets, s)
		case "-f":
			configs = append(configs, argv[i+1])
		}
	}
	if !slices.Equal(sockets, []string{master}) {
		t.Errorf("haproxy %q: -S %q, haroute reaches the master socket at %s", argv, sockets, master)
	}
	if want := []string{l.Config(), l.BackendsDir()}; !slices.Equal(configs, want) {
		t.Errorf("haproxy %q: -f %q, want -f %q", argv, configs, want)
	}

	// haroute's socket flags name the layout's sockets.
	for _, c := range haroutes {
		fl := flags(c.Args[1:])
		for name, want := range map[string]string{"admin-socket": l.AdminSocket(), "state-socket": l.StateSocket()} {
			if got, ok := fl[name]; ok && got != want {
				t.Errorf("container %s: --%s=%s, the layout's is %s", c.Name, name, got, want)
			}
		}
	}

	// Every other path into the directory, in an argument or a variable, is one the layout names.
	known := map[string]bool{}
	for _, rel := range []string{layout.ConfDir, layout.BackendsDir, layout.CertDir, layout.CADir, layout.RunDir,
		layout.Config, layout.DefaultCertificate, layout.ClientCA, layout.ClientCRL, layout.ErrorPage503,
		layout.ErrorPage404, layout.AdminSocket, layout.MasterSocket, layout.StatsSocket, layout.SNISocket,
		layout.NoSNISocket, layout.StateSocket, layout.DeletionLock} {
		known[l.Path(rel)] = true
	}
	var podMounts []corev1.VolumeMount
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		podMounts = append(podMounts, c.VolumeMounts...)
	}
	for _, c := range append(slices.Clone(haroutes), *haproxy) {
		words := append(slices.Clone(c.Command), c.Args...)
		for _, e := range c.Env {
			if e.Name != "ROUTER_HAPROXY_ADMIN_UNIX_SOCKET" { // the master socket, checked above
				words = append(words, e.Value)
			}
		}
		for _, w := range words {
			if i := strings.Index(w, dir+"/"); i >= 0 {
				p, _, _ := strings.Cut(w[i:], ",")
				if m, _ := holding(podMounts, p); m.Name == volume && !known[p] && p != master {
					t.Errorf("container %s: %q names %s, which mapping/layout does not", c.Name, w, p)
				}
			}
		}
	}
}

// flags returns the long flags of args by name: "--name=value" and "--name value" forms.
func flags(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			continue
		}
		if n, v, eq := strings.Cut(name, "="); eq {
			out[n] = v
		} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out[name] = args[i+1]
			i++
		} else {
			out[name] = "true"
		}
	}
	return out
}
