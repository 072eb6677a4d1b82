package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/manifests"
)

// podVolume is where the manifests mount the shared emptyDir.
const podVolume = "/var/lib/haproxy"

// TestManifestCommandLines parses every container's command line of every rendered Deployment with
// the real command lines: each haroute container's args and env go through `haroute run` (in this
// process, with --manifests on an empty folder and --once, the volume mapped to a temporary
// directory) and must be accepted, with every env variable actually read; HAProxy's command is run
// with -c against the configuration the init container wrote. Every flag and variable must be
// explained in docs/deploy.md.
func TestManifestCommandLines(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range manifests.Variants() {
		objs, err := manifests.Render(variant)
		if err != nil {
			t.Fatal(err)
		}
		deps, err := manifests.Decode[appsv1.Deployment](objs, "Deployment")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deps {
			t.Run(strings.ReplaceAll(variant, "/", "_")+"_"+d.Name, func(t *testing.T) {
				checkPodCommandLines(t, d.Spec.Template.Spec, string(doc))
			})
		}
	}
}

// checkPodCommandLines runs the init containers and the haroute container as `run --once`, then
// HAProxy's command with -c.
func checkPodCommandLines(t *testing.T, spec corev1.PodSpec, doc string) {
	dir := t.TempDir()
	empty := t.TempDir()
	// Every other volume (the Secrets and ConfigMaps of the openshift overlay) gets a directory of its
	// own, which the files the variables name are written into below.
	mounts := map[string]string{podVolume: dir}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if _, ok := mounts[m.MountPath]; !ok && !strings.HasPrefix(m.MountPath, podVolume+"/") {
				mounts[m.MountPath] = t.TempDir()
			}
		}
	}
	mapPath := func(s string) string {
		for from, to := range mounts { // none lies inside another
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}
	var haproxy *corev1.Container
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if c.Name == "haproxy" {
			haproxy = &c
			continue
		}
		if len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != "run" || !strings.Contains(c.Image, "haroute") {
			t.Fatalf("container %s: want the haroute image's entrypoint with `run` args, got command %q args %q image %s", c.Name, c.Command, c.Args, c.Image)
		}
		args := []string{c.Args[0], "--manifests", empty}
		for _, a := range c.Args[1:] {
			args = append(args, mapPath(a))
			if name, _, _ := strings.Cut(a, "="); strings.HasPrefix(name, "-") {
				requireDocumented(t, doc, name)
			}
		}
		if !slices.Contains(args, "--once") {
			args = append(args, "--once")
		}
		env := map[string]string{}
		for _, e := range c.Env {
			v, err := downwardValue(e)
			if err != nil {
				t.Fatalf("container %s: %v", c.Name, err)
			}
			env[e.Name] = mapPath(v)
			requireDocumented(t, doc, e.Name)
		}
		writeNamedFiles(t, env)
		read := recordReads(env)
		if res := runCLIWith(t, read.getenv, args...); res.err != nil {
			t.Fatalf("container %s: haroute %q refused: %v\n%s", c.Name, args, res.err, res.stderr)
		}
		for name := range env {
			if !read.seen(name) {
				t.Errorf("container %s: env %s is not read by haroute", c.Name, name)
			}
		}
	}
	if haproxy == nil {
		t.Fatal("no haproxy container")
	}
	if len(haproxy.Command) == 0 || haproxy.Command[0] != "haproxy" || len(haproxy.Args) != 0 {
		t.Fatalf("haproxy container: command %q args %q, want the command only, starting with haproxy", haproxy.Command, haproxy.Args)
	}
	var args []string
	for _, a := range haproxy.Command[1:] {
		args = append(args, mapPath(a))
		if strings.HasPrefix(a, "-") {
			requireDocumented(t, doc, a)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, testkit.HAProxyBinary(), append(args, "-c")...).CombinedOutput()
	if err != nil {
		t.Fatalf("haproxy %q -c: %v\n%s", args, err, out)
	}
	// The root filesystem is read-only: everything HAProxy opens by path lives on the volume.
	cfg := testbed.ReadConfig(t, dir)
	for _, p := range regexp.MustCompile(`(?m)(?:^|\s)(/[^\s:,]+)`).FindAllStringSubmatch(cfg, -1) {
		if !strings.HasPrefix(p[1], dir) && !strings.HasPrefix(p[1], "/_") {
			t.Errorf("the configuration names %s, outside the shared volume", p[1])
		}
	}
}

// downwardValue returns e's value: its literal value, or for a downward API field an example of
// what the kubelet gives (documentation addresses).
func downwardValue(e corev1.EnvVar) (string, error) {
	if e.ValueFrom == nil {
		return e.Value, nil
	}
	if f := e.ValueFrom.FieldRef; f != nil {
		switch f.FieldPath {
		case "status.podIPs":
			return "192.0.2.1,2001:db8::1", nil
		case "status.hostIP":
			return "192.0.2.2", nil
		case "metadata.namespace":
			return "haroute", nil
		}
	}
	return "", fmt.Errorf("env %s from a source the test cannot give: %+v", e.Name, e.ValueFrom)
}

// writeNamedFiles writes what the Secrets and ConfigMaps of a pod would hold into the files env's
// variables name: a default certificate Secret (tls.crt, tls.key), a metrics serving certificate,
// the stats credentials and a service CA bundle.
func writeNamedFiles(t *testing.T, env map[string]string) {
	t.Helper()
	ca := testkit.NewCA(t, "manifests CA")
	write := func(p string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if d := env["DEFAULT_CERTIFICATE_DIR"]; d != "" {
		crt, key := ca.Issue(t, "*.apps.example.com")
		write(filepath.Join(d, "tls.crt"), crt)
		write(filepath.Join(d, "tls.key"), key)
	}
	if c, k := env["ROUTER_METRICS_TLS_CERT_FILE"], env["ROUTER_METRICS_TLS_KEY_FILE"]; c != "" && k != "" {
		crt, key := ca.Issue(t, "haroute-metrics.haroute.svc")
		write(c, crt)
		write(k, key)
	}
	for name, value := range map[string]string{"STATS_USERNAME_FILE": "admin", "STATS_PASSWORD_FILE": "secret"} {
		if p := env[name]; p != "" {
			write(p, []byte(value))
		}
	}
	for _, name := range []string{"DEFAULT_DESTINATION_CA_PATH", "ROUTER_MUTUAL_TLS_AUTH_CA"} {
		if p := env[name]; p != "" {
			write(p, ca.PEM())
		}
	}
}

// requireDocumented fails the test when docs/deploy.md does not name word in backquotes.
func requireDocumented(t *testing.T, doc, word string) {
	t.Helper()
	if !strings.Contains(doc, "`"+word+"`") {
		t.Errorf("docs/deploy.md does not explain `%s`, which the manifests use", word)
	}
}

// envReads records which variables a command read.
type envReads struct {
	env  map[string]string
	mu   sync.Mutex
	read map[string]bool
}

func recordReads(env map[string]string) *envReads {
	return &envReads{env: env, read: map[string]bool{}}
}

func (r *envReads) getenv(k string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read[k] = true
	return r.env[k]
}

func (r *envReads) seen(k string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.read[k]
}
