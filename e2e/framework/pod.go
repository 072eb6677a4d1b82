//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/manifests"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/runtime/socket"
)

// Bounds and fixed values of a replayed pod.
const (
	podVolumePath   = "/var/lib/haproxy"
	podInitTimeout  = 60 * time.Second
	podReadyTimeout = 60 * time.Second
	podStopTimeout  = 20 * time.Second
	podTokenSeconds = 3600
	// podImagePath is the PATH of the official HAProxy image (the haroute image, from scratch, has none).
	podImagePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	// saDir is where the kubelet mounts a pod's ServiceAccount token, CA and namespace.
	saDir = "/run/secrets/kubernetes.io/serviceaccount"
)

// Pod replays the pod of a rendered Deployment as processes on this machine, as the kubelet would run
// it: its objects are applied to the API server for real (ServiceAccount, ClusterRole and binding,
// Deployment, Services, PDB), and the pod template read back from the server. Each container is the
// template's command, args and env, started as the pod's user through setpriv (no new privileges, an
// empty capability bounding set) in a private mount namespace where the root filesystem is read-only
// (readOnlyRootFilesystem), the emptyDir is a writable directory mapped from /var/lib/haproxy, and
// /run/secrets/kubernetes.io/serviceaccount holds a token the API server issued for the manifest's
// ServiceAccount (TokenRequest), the cluster CA and the namespace. KUBERNETES_SERVICE_HOST and _PORT
// point at the API server, as the kubelet sets them. Secret and ConfigMap volumes are read from the
// API server and written the kubelet's way (WriteKubeletVolume) into directories of their own: one
// mounted inside the emptyDir is bound onto its place there; for one mounted elsewhere, its path is
// rewritten to its directory in the containers' args and env (the replay's root is the machine's,
// where /etc/pki and the like are not the test's to mount over). OpenShift's service CA is played for
// the objects applied (serving certificates, CA bundles). "haproxy" and the haroute image's
// entrypoint are the binaries under test. Processes share the host's network namespace: the
// containers' ports are the manifest's own (they must be free).
type Pod struct {
	// Dir is the emptyDir (mapped /var/lib/haproxy).
	Dir string
	// Spec is the pod template the API server stored.
	Spec corev1.PodSpec
	// HTTPPort, HTTPSPort and StatsPort are the manifest's ports.
	HTTPPort, HTTPSPort, StatsPort int
	// Client sends requests to HAProxy's public ports.
	Client *testkit.Client
	// Master talks to HAProxy's master socket (the haproxy container's -S).
	Master *socket.Master
	// HAProxy and Haroute are the running containers' processes.
	HAProxy, Haroute *testkit.Process

	t          *testing.T
	root       string // the "images" and the ServiceAccount files
	haproxyBin string
	harouteBin string
	kubelet    []string // the env the kubelet adds
	uid, gid   int64
	restarts   map[string]int
	// kube reads the volumes' Secrets and ConfigMaps of namespace; volumes holds the directories
	// written for them, by volume name.
	kube      kubernetes.Interface
	namespace string
	volumes   map[string]string
}

// ReplayPod applies variant's objects, then runs its pod: the init containers to completion, then
// HAProxy and haroute, and waits until every container's readiness probe answers 200. sccUID is the
// user (and fsGroup) OpenShift's restricted SCC would assign, for a template that names none; 0 when
// the template must name them.
func (c *Cluster) ReplayPod(t *testing.T, variant string, sccUID int64) *Pod {
	t.Helper()
	if haroute == "" {
		t.Fatal("haroute binary not built: call framework.Main from TestMain")
	}
	objs, err := manifests.Render(variant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	applier, err := c.newApplier()
	if err != nil {
		t.Fatal(err)
	}
	var deps []manifests.Object
	for _, o := range objs {
		if err := applier.apply(ctx, o, false); err != nil {
			t.Fatal(err)
		}
		if o.Kind == "Deployment" {
			deps = append(deps, o)
		}
	}
	c.playServiceCA(ctx, t, objs)
	if len(deps) != 1 {
		t.Fatalf("%s: %d Deployments, want 1", variant, len(deps))
	}
	dep, err := c.Kube.AppsV1().Deployments(deps[0].Namespace).Get(ctx, deps[0].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read back the Deployment: %v", err)
	}
	p := c.newPod(ctx, t, dep, sccUID)
	for _, ic := range p.Spec.InitContainers {
		p.runInit(ic)
	}
	p.StartHAProxy()
	p.StartHaroute()
	return p
}

// newPod prepares the pod's directories, binaries and ServiceAccount files.
func (c *Cluster) newPod(ctx context.Context, t *testing.T, dep *appsv1.Deployment, sccUID int64) *Pod {
	t.Helper()
	spec := dep.Spec.Template.Spec
	p := &Pod{Spec: spec, t: t, uid: sccUID, gid: sccUID, restarts: map[string]int{},
		kube: c.Kube, namespace: dep.Namespace, volumes: map[string]string{}}
	if psc := spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			p.uid = *psc.RunAsUser
		}
		if psc.RunAsGroup != nil {
			p.gid = *psc.RunAsGroup
		}
		if psc.FSGroup != nil {
			p.gid = *psc.FSGroup
		}
	}
	if p.uid == 0 || p.gid == 0 {
		t.Fatalf("the replay runs the pod as a non-root user: the template names none (uid %d, gid %d) and no SCC user was given", p.uid, p.gid)
	}
	// The pod's user must reach the binaries and the volume: a directory of its own, not t.TempDir's
	// private one.
	p.root = testkit.TempDir(t)
	p.Dir = filepath.Join(p.root, "volume")
	if err := os.Chmod(p.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p.Dir, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p.Dir, int(p.uid), int(p.gid)); err != nil {
		t.Fatal(err)
	}
	p.haproxyBin = copyExecutable(t, testkit.HAProxyBinary(), filepath.Join(p.root, "haproxy"))
	p.harouteBin = copyExecutable(t, haroute, filepath.Join(p.root, "haroute"))

	sa := filepath.Join(p.root, "serviceaccount")
	if err := os.Mkdir(sa, 0o755); err != nil {
		t.Fatal(err)
	}
	ttl := int64(podTokenSeconds)
	tok, err := c.Kube.CoreV1().ServiceAccounts(dep.Namespace).CreateToken(ctx, spec.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for ServiceAccount %s/%s: %v", dep.Namespace, spec.ServiceAccountName, err)
	}
	for name, data := range map[string][]byte{"token": []byte(tok.Status.Token), "ca.crt": c.caPEM, "namespace": []byte(dep.Namespace)} {
		if err := os.WriteFile(filepath.Join(sa, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	p.kubelet = []string{"KUBERNETES_SERVICE_HOST=" + u.Hostname(), "KUBERNETES_SERVICE_PORT=" + u.Port()}

	for _, ctr := range spec.Containers {
		for _, port := range ctr.Ports {
			switch port.Name {
			case "http":
				p.HTTPPort = int(port.ContainerPort)
			case "https":
				p.HTTPSPort = int(port.ContainerPort)
			case "metrics":
				p.StatsPort = int(port.ContainerPort)
			}
		}
	}
	for _, port := range []int{p.HTTPPort, p.HTTPSPort, p.StatsPort} {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("the replayed pod listens on the manifest's port %d, which is taken on this machine: %v", port, err)
		}
		_ = l.Close()
	}
	p.Client = testkit.NewClient(t, p.HTTPPort, p.HTTPSPort, nil)
	p.Master = socket.NewMaster(p.masterSocket(), socket.Options{})
	return p
}

// masterSocket returns the path of HAProxy's master socket: the haproxy container's -S (its options
// after a comma left out, the volume path mapped), layout.MasterSocket when it has none.
func (p *Pod) masterSocket() string {
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name != "haproxy" {
			continue
		}
		argv := append(append([]string{}, c.Command...), c.Args...)
		for i := 0; i+1 < len(argv); i++ {
			if argv[i] == "-S" {
				path, _, _ := strings.Cut(argv[i+1], ",")
				return strings.Replace(path, podVolumePath, p.Dir, 1)
			}
		}
	}
	return layout.For(p.Dir).MasterSocket()
}

// copyExecutable copies the binary src to dst (mode 0755) and returns dst.
func copyExecutable(t *testing.T, src, dst string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// container returns the template's container name (init containers included).
func (p *Pod) container(name string) corev1.Container {
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == name {
			return c
		}
	}
	p.t.Fatalf("the pod has no container %s", name)
	return corev1.Container{}
}

// command returns the process of container c as the kubelet would start it: argv from the
// template (the image's entrypoint when there is no command), the volume path mapped, in a private
// mount namespace with the ServiceAccount files and a read-only root, as the pod's user.
func (p *Pod) command(c corev1.Container) *exec.Cmd {
	t := p.t
	t.Helper()
	var argv []string
	switch {
	case len(c.Command) > 0 && c.Command[0] == "haproxy":
		argv = append([]string{p.haproxyBin}, c.Command[1:]...)
	case len(c.Command) == 0 && strings.Contains(c.Image, "haroute"):
		argv = []string{p.harouteBin}
	default:
		t.Fatalf("container %s: command %q of image %s: not one the replay knows", c.Name, c.Command, c.Image)
	}
	argv = append(argv, c.Args...)
	mounts, binds := p.containerPaths(c)
	for i := 1; i < len(argv); i++ {
		argv[i] = mapPaths(argv[i], mounts)
	}
	env := append([]string{}, p.kubelet...)
	if c.Name == "haproxy" {
		env = append(env, "PATH="+podImagePath)
	}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			// The replay has no pod or node address of its own: the pod's is stood for by a loopback
			// address that haroute's stats listener binds and the probes ask (as the kubelet asks the
			// pod's address), the node's by a documentation address, never routed.
			switch f := e.ValueFrom.FieldRef; {
			case f != nil && f.FieldPath == "status.podIPs":
				v = replayPodIP
			case f != nil && f.FieldPath == "status.hostIP":
				v = "192.0.2.2"
			case f != nil && f.FieldPath == "metadata.namespace":
				v = p.namespace
			default:
				t.Fatalf("container %s: env %s from a source the replay cannot give: %+v", c.Name, e.Name, e.ValueFrom)
			}
		}
		env = append(env, e.Name+"="+mapPaths(v, mounts))
	}
	tools := map[string]string{}
	for _, name := range []string{"unshare", "mount", "mkdir", "cp", "setpriv"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("the pod replay needs %s: %v", name, err)
		}
		tools[name] = path
	}
	// Run by unshare in a new mount namespace (private propagation): the volume stays writable, the
	// volumes mounted inside it are bound onto their places, /run is a fresh tmpfs with the
	// ServiceAccount files, the root becomes read-only, then setpriv takes the pod's identity and
	// execs the container's argv. The PID stays the same throughout.
	script := fmt.Sprintf(`set -e
%[1]s --bind "$1" "$1"
%[8]s%[1]s -t tmpfs -o mode=0755 tmpfs /run
%[2]s -p %[4]s
%[3]s "$2"/token "$2"/ca.crt "$2"/namespace %[4]s/
%[1]s -o remount,bind,ro /
shift 2
exec %[5]s --reuid=%[6]d --regid=%[7]d --clear-groups --no-new-privs --bounding-set=-all --pdeathsig=SIGKILL -- "$@"`,
		tools["mount"], tools["mkdir"], tools["cp"], saDir, tools["setpriv"], p.uid, p.gid, bindScript(tools["mount"], binds))
	args := append([]string{"--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", p.Dir, filepath.Join(p.root, "serviceaccount")}, argv...)
	cmd := exec.Command(tools["unshare"], args...)
	cmd.Env = env
	return cmd
}

// runInit runs init container c to completion.
func (p *Pod) runInit(c corev1.Container) {
	t := p.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), podInitTimeout)
	defer cancel()
	proto := p.command(c)
	cmd := exec.CommandContext(ctx, proto.Path, proto.Args[1:]...)
	cmd.Env = proto.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("init container %s: %v\n%s", c.Name, err, out)
	}
	t.Logf("init container %s: done", c.Name)
}

// start runs container name and waits until its readiness probe answers 200.
func (p *Pod) start(name string) *testkit.Process {
	t := p.t
	t.Helper()
	c := p.container(name)
	opts := processOptions()
	opts.StopTimeout = podStopTimeout
	label := fmt.Sprintf("container %s", name)
	if n := p.restarts[name]; n > 0 {
		label = fmt.Sprintf("container %s (restart %d)", name, n)
	}
	proc := testkit.StartProcess(t, label, p.command(c), opts)
	if err := p.WaitProbe(c, c.ReadinessProbe, podReadyTimeout, proc); err != nil {
		t.Fatalf("%s: readiness: %v", label, err)
	}
	return proc
}

// StartHAProxy starts the haproxy container and waits until it is ready.
func (p *Pod) StartHAProxy() { p.t.Helper(); p.HAProxy = p.start("haproxy") }

// StartHaroute starts the haroute container and waits until it is ready.
func (p *Pod) StartHaroute() { p.t.Helper(); p.Haroute = p.start("haroute") }

// RestartHAProxy is the kubelet restarting the haproxy container after it died: every process of the
// container (master and workers, by PID) is killed with SIGKILL, then the container starts again on
// the same volume.
func (p *Pod) RestartHAProxy() {
	t := p.t
	t.Helper()
	var pids []int
	if st, err := p.Master.ShowProc(context.Background()); err == nil {
		for _, w := range st.Workers {
			pids = append(pids, w.PID)
		}
	}
	if err := p.HAProxy.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL) // gone already when the master's death ended it
	}
	<-p.HAProxy.Done()
	if err := Eventually(func() error {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil && !zombie(pid) {
				return fmt.Errorf("worker %d still runs", pid)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p.restarts["haproxy"]++
	p.StartHAProxy()
}

// RestartHaroute is the kubelet restarting the haroute container (a new image, a failed liveness
// probe): SIGTERM, the wait for its exit (bounded by the pod's stop timeout), then a new start.
func (p *Pod) RestartHaroute() {
	t := p.t
	t.Helper()
	if err := p.Haroute.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Haroute.Done():
	case <-time.After(podStopTimeout):
		t.Fatalf("haroute did not stop within %v of SIGTERM", podStopTimeout)
	}
	p.restarts["haroute"]++
	p.StartHaroute()
}

// zombie reports whether pid has exited and waits to be reaped by its new parent.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return !ok || strings.HasPrefix(rest, "Z")
}

// replayPodIP stands for the replayed pod's address (status.podIPs).
const replayPodIP = "127.0.0.61"

// WaitProbe waits (bounded by timeout) until probe of container c answers as the kubelet wants it:
// an HTTP GET on the named or numbered port of the pod's address with a 2xx or 3xx status.
func (p *Pod) WaitProbe(c corev1.Container, probe *corev1.Probe, timeout time.Duration, proc *testkit.Process) error {
	if probe == nil || probe.HTTPGet == nil {
		return fmt.Errorf("container %s: no HTTP probe", c.Name)
	}
	port := probe.HTTPGet.Port.IntValue()
	if probe.HTTPGet.Port.StrVal != "" {
		for _, cp := range c.Ports {
			if cp.Name == probe.HTTPGet.Port.StrVal {
				port = int(cp.ContainerPort)
			}
		}
	}
	if port == 0 {
		return fmt.Errorf("container %s: probe port %s not found", c.Name, probe.HTTPGet.Port.String())
	}
	target := "http://" + replayPodIP + ":" + strconv.Itoa(port) + probe.HTTPGet.Path
	hc := &http.Client{Timeout: time.Second}
	return testkit.Eventually(timeout, waitInterval, func() error {
		if proc != nil && proc.Exited() {
			return testkit.Final(fmt.Errorf("%s exited", proc.Name))
		}
		resp, err := hc.Get(target)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s: %d", target, resp.StatusCode)
		}
		return nil
	})
}

// CheckProbes checks that every probe of every running container answers now.
func (p *Pod) CheckProbes() {
	t := p.t
	t.Helper()
	for _, c := range p.Spec.Containers {
		for _, probe := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
			if err := p.WaitProbe(c, probe, WaitTimeout, nil); err != nil {
				t.Errorf("container %s: %v", c.Name, err)
			}
		}
	}
}

// Reloads returns the master's reload counter.
func (p *Pod) Reloads() int {
	t := p.t
	t.Helper()
	var n int
	if err := Eventually(func() error {
		st, err := p.Master.ShowProc(context.Background())
		n = st.Master.Reloads
		return err
	}); err != nil {
		t.Fatalf("show proc: %v", err)
	}
	return n
}

// CheckSockets checks that every socket on the volume (HAProxy's master, admin and internal ones,
// haroute's state socket) is the pod user's alone: mode 600, owned by the pod's UID. Sockets are the
// only way to HAProxy's runtime API, and none listens on a network address.
func (p *Pod) CheckSockets() {
	t := p.t
	t.Helper()
	entries, err := os.ReadDir(layout.For(p.Dir).RunDir())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || info.Mode().Type() != os.ModeSocket {
			continue
		}
		n++
		st, ok := info.Sys().(*syscall.Stat_t)
		if info.Mode().Perm() != 0o600 || !ok || int64(st.Uid) != p.uid {
			t.Errorf("socket run/%s: mode %v, owner %v; want 0600, the pod's UID %d", e.Name(), info.Mode().Perm(), info.Sys(), p.uid)
		}
	}
	if n < 3 {
		t.Errorf("%d sockets under run/, want at least the master, admin and state sockets", n)
	}
}
