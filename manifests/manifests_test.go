package manifests_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/haroute/haroute/e2e/operatorenv"
	"github.com/haroute/haroute/manifests"
)

// variants are the folders a user renders.
var variants = manifests.Variants()

// render returns the objects of a variant.
func render(t *testing.T, variant string) []manifests.Object {
	t.Helper()
	objs, err := manifests.Render(variant)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// objects decodes the variant's objects of kind into T.
func objects[T any](t *testing.T, variant, kind string) []T {
	t.Helper()
	out, err := manifests.Decode[T](render(t, variant), kind)
	if err != nil {
		t.Fatalf("%s: %v", variant, err)
	}
	return out
}

// TestEveryVariantRenders: each variant renders and holds what it promises.
func TestEveryVariantRenders(t *testing.T) {
	want := map[string]map[string]int{
		"base":                 {"Deployment": 1, "ClusterRole": 1, "Service": 2, "PodDisruptionBudget": 1},
		"crd":                  {"CustomResourceDefinition": 1},
		"overlays/kubernetes":  {"Deployment": 1, "CustomResourceDefinition": 1},
		"overlays/openshift":   {"Deployment": 1, "CustomResourceDefinition": 0},
		"overlays/sharded":     {"Deployment": 2, "ClusterRole": 2, "Namespace": 1},
		"overlays/hostnetwork": {"Deployment": 1},
	}
	for _, v := range variants {
		counts := map[string]int{}
		for _, o := range render(t, v) {
			counts[o.Kind]++
		}
		for kind, n := range want[v] {
			if counts[kind] != n {
				t.Errorf("%s: %d %s, want %d (%v)", v, counts[kind], kind, n, counts)
			}
		}
	}
}

// TestPodIsLocked: every container of every variant runs without privilege escalation, on a read-only
// root filesystem, with every capability dropped (NET_BIND_SERVICE only for HAProxy in hostnetwork),
// under seccomp RuntimeDefault, with resource requests and probes; non-root except hostnetwork.
func TestPodIsLocked(t *testing.T) {
	for _, v := range variants {
		for _, d := range objects[appsv1.Deployment](t, v, "Deployment") {
			spec := d.Spec.Template.Spec
			psc := spec.SecurityContext
			if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("%s: pod without seccomp RuntimeDefault", v)
			}
			hostnet := v == "overlays/hostnetwork"
			if !hostnet && (psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot) {
				t.Errorf("%s: pod may run as root", v)
			}
			for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
				sc := c.SecurityContext
				if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
					sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil ||
					!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
					t.Errorf("%s: container %s is not locked down: %+v", v, c.Name, sc)
					continue
				}
				wantAdd := []corev1.Capability(nil)
				if hostnet && c.Name == "haproxy" {
					wantAdd = []corev1.Capability{"NET_BIND_SERVICE"}
				}
				if !slices.Equal(sc.Capabilities.Add, wantAdd) {
					t.Errorf("%s: container %s adds %v, want %v", v, c.Name, sc.Capabilities.Add, wantAdd)
				}
				if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
					t.Errorf("%s: container %s without cpu and memory requests", v, c.Name)
				}
			}
			for _, c := range spec.Containers {
				if c.ReadinessProbe == nil || c.LivenessProbe == nil {
					t.Errorf("%s: container %s without readiness and liveness probes", v, c.Name)
				}
			}
		}
	}
}

// TestGraceAndHardStopAgree: the kubelet waits longer than HAProxy's hard-stop-after, so that a
// soft-stopped HAProxy ends its long connections itself.
func TestGraceAndHardStopAgree(t *testing.T) {
	for _, v := range variants {
		for _, d := range objects[appsv1.Deployment](t, v, "Deployment") {
			spec := d.Spec.Template.Spec
			var hardStop time.Duration
			for _, c := range spec.Containers {
				for _, e := range c.Env {
					if e.Name == "ROUTER_HARD_STOP_AFTER" {
						var err error
						if hardStop, err = time.ParseDuration(e.Value); err != nil {
							t.Fatalf("%s: ROUTER_HARD_STOP_AFTER=%q: %v", v, e.Value, err)
						}
					}
				}
			}
			// The preStop pause comes first and counts against the grace period.
			var pause time.Duration
			for _, c := range spec.Containers {
				if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Exec != nil {
					cmd := l.PreStop.Exec.Command
					secs, err := strconv.Atoi(cmd[len(cmd)-1])
					if len(cmd) != 2 || cmd[0] != "sleep" || err != nil {
						t.Fatalf("%s: container %s: preStop %q, want sleep SECONDS", v, c.Name, cmd)
					}
					pause = max(pause, time.Duration(secs)*time.Second)
				}
			}
			grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
			if hardStop == 0 || pause+hardStop >= grace {
				t.Errorf("%s: preStop %v + hard-stop-after %v, terminationGracePeriodSeconds %v: want hard-stop-after set and both shorter", v, pause, hardStop, grace)
			}
		}
	}
}

// TestClusterRoleIsWhatTheRouterIsGranted: the base ClusterRole grants exactly what haroute calls
// (informers: list and watch, and get; the status writer's get and update of routes/status; the
// token and access reviews of /metrics), no more.
// The e2e suite runs its router with this ClusterRole (e2e/framework reads manifests/base/rbac.yaml),
// so every scenario proves it is enough; this test makes any widening a visible change.
func TestClusterRoleIsWhatTheRouterIsGranted(t *testing.T) {
	roles := objects[rbacv1.ClusterRole](t, "base", "ClusterRole")
	if len(roles) != 1 {
		t.Fatalf("%d ClusterRoles", len(roles))
	}
	got := map[string]bool{}
	for _, r := range roles[0].Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, verb := range r.Verbs {
					got[g+"/"+res+":"+verb] = true
				}
			}
		}
	}
	var want []string
	for _, res := range []string{"route.openshift.io/routes", "/services", "/namespaces", "/secrets", "discovery.k8s.io/endpointslices"} {
		for _, verb := range []string{"get", "list", "watch"} {
			want = append(want, res+":"+verb)
		}
	}
	want = append(want, "route.openshift.io/routes/status:update",
		"authentication.k8s.io/tokenreviews:create", "authorization.k8s.io/subjectaccessreviews:create")
	for _, w := range want {
		if !got[w] {
			t.Errorf("the ClusterRole lacks %s", w)
		}
		delete(got, w)
	}
	for g := range got {
		t.Errorf("the ClusterRole grants %s, which haroute does not use", g)
	}
}

// TestCRDIsOpenShiftAPIs: the CRD the manifests install is the one the e2e suite installs, and both
// are route/v1/zz_generated.crd-manifests/routes.crd.yaml of the github.com/openshift/api version
// go.mod requires (the module cache holds it: the module is a dependency).
func TestCRDIsOpenShiftAPIs(t *testing.T) {
	a, err := os.ReadFile("crd/routes.crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/openshift/api: %v", err)
	}
	upstream, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "route", "v1", "zz_generated.crd-manifests", "routes.crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(upstream) {
		t.Error("manifests/crd/routes.crd.yaml differs from the openshift/api module's: copy it again after a bump")
	}
	b, err := os.ReadFile(filepath.Join("..", "e2e", "framework", "testdata", "routes.crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) || !strings.Contains(string(a), "name: routes.route.openshift.io") {
		t.Error("manifests/crd/routes.crd.yaml differs from e2e/framework/testdata/routes.crd.yaml")
	}
}

// TestOpenShiftOverlayFollowsTheOperator: the openshift overlay runs haroute with the names and files
// of the router OpenShift's ingress operator deploys, as captured from the operator
// (e2e/cluster/testdata/operator/default.yaml): the operator's variable names (not haroute's older
// ones), the operator's values but for the stated differences, each file a variable names in a
// volume of the same kind mounted at the operator's path (read-only as there, and never optional:
// haroute refuses to start without any of these files), HAProxy's master socket at
// ROUTER_HAPROXY_ADMIN_UNIX_SOCKET, the Secrets and the CA bundle asked of OpenShift's service CA
// under the names the volumes use, and the same variables for the init container.
func TestOpenShiftOverlayFollowsTheOperator(t *testing.T) {
	captured, err := operatorenv.Load(filepath.Join("..", "e2e", "cluster", "testdata", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	op, ok := captured["default"]
	if !ok {
		t.Fatal("no captured default variant")
	}
	opEnv := op.Env()
	const variant = "overlays/openshift"
	deps := objects[appsv1.Deployment](t, variant, "Deployment")
	if len(deps) != 1 {
		t.Fatalf("%d Deployments", len(deps))
	}
	spec := deps[0].Spec.Template.Spec
	haroute, init, haproxy := container(t, spec, "haroute"), container(t, spec, "init"), container(t, spec, "haproxy")
	env := map[string]corev1.EnvVar{}
	for _, e := range haroute.Env {
		env[e.Name] = e
	}

	// The operator's names for what the overlay sets.
	for _, name := range []string{"ROUTER_SERVICE_NAME", "ROUTER_SERVICE_NAMESPACE", "DEFAULT_CERTIFICATE_DIR",
		"DEFAULT_DESTINATION_CA_PATH", "ROUTER_HAPROXY_ADMIN_UNIX_SOCKET", "ROUTER_DISABLE_HTTP2", "ROUTER_METRICS_TYPE",
		"ROUTER_METRICS_TLS_CERT_FILE", "ROUTER_METRICS_TLS_KEY_FILE", "STATS_USERNAME_FILE", "STATS_PASSWORD_FILE",
		"ROUTER_SERVICE_HTTP_PORT", "ROUTER_SERVICE_HTTPS_PORT", "STATS_PORT"} {
		if _, ok := opEnv[name]; !ok {
			t.Errorf("the operator's capture no longer sets %s: review the overlay against it", name)
		}
		if _, ok := env[name]; !ok {
			t.Errorf("the haroute container does not set %s, which the operator sets", name)
		}
	}
	for _, old := range []string{"ROUTER_NAME", "DEFAULT_CERTIFICATE", "DEFAULT_CERTIFICATE_PATH", "STATS_USERNAME", "STATS_PASSWORD"} {
		if _, ok := env[old]; ok {
			t.Errorf("the haroute container sets %s: the operator uses another variable for it", old)
		}
	}

	// The operator's values, but for these.
	differ := map[string]string{
		"ROUTER_SERVICE_NAME":       "haroute", // the IngressController's name there
		"ROUTER_SERVICE_HTTP_PORT":  "8080",    // a non-root pod; the operator's HostNetwork binds 80
		"ROUTER_SERVICE_HTTPS_PORT": "8443",
	}
	for name, e := range env {
		opValue, both := opEnv[name]
		switch {
		case !both:
		case name == "ROUTER_SERVICE_NAMESPACE":
			// The operator writes its namespace (openshift-ingress); the overlay's is the pod's own.
			if f := e.ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "metadata.namespace" {
				t.Errorf("ROUTER_SERVICE_NAMESPACE: want the downward API's metadata.namespace, got %+v", e)
			}
		case differ[name] != "":
			if e.Value != differ[name] {
				t.Errorf("%s=%q, want %q", name, e.Value, differ[name])
			}
		case e.ValueFrom != nil || e.Value != opValue:
			t.Errorf("%s=%q (from %v), the operator's is %q", name, e.Value, e.ValueFrom, opValue)
		}
	}

	// Each file a variable names: a volume of the same kind at the operator's mount path.
	opVolumes := map[string]string{}
	for _, v := range op.Volumes {
		opVolumes[v.Name] = v.Kind
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	for name, value := range opEnv {
		if _, both := env[name]; !both || !strings.HasPrefix(value, "/") {
			continue
		}
		opMount, ok := holding(op.VolumeMounts, value)
		if !ok {
			t.Errorf("%s=%s: no mount of the operator's router holds it", name, value)
			continue
		}
		m, ok := holding(haroute.VolumeMounts, value)
		switch {
		case !ok || m.MountPath != opMount.MountPath:
			t.Errorf("%s=%s: the operator mounts %s at %s, the haroute container %q", name, value, opMount.Name, opMount.MountPath, m.MountPath)
		case volumeKind(volumes[m.Name]) != opVolumes[opMount.Name]:
			t.Errorf("%s=%s: volume %s is a %s, the operator's %s a %s", name, value, m.Name, volumeKind(volumes[m.Name]), opMount.Name, opVolumes[opMount.Name])
		case m.ReadOnly != opMount.ReadOnly:
			t.Errorf("%s=%s: mount %s read-only %v, the operator's %v", name, value, m.MountPath, m.ReadOnly, opMount.ReadOnly)
		case optional(volumes[m.Name]):
			t.Errorf("%s=%s: volume %s is optional, and haroute refuses to start without the file", name, value, m.Name)
		}
	}

	// HAProxy's master socket is ROUTER_HAPROXY_ADMIN_UNIX_SOCKET; HAProxy reads the service CA
	// bundle itself (the configuration names DEFAULT_DESTINATION_CA_PATH), so it mounts it too.
	sock := env["ROUTER_HAPROXY_ADMIN_UNIX_SOCKET"].Value
	if i := slices.Index(haproxy.Command, "-S"); i < 0 || i+1 >= len(haproxy.Command) || strings.Split(haproxy.Command[i+1], ",")[0] != sock {
		t.Errorf("haproxy %q: want -S %s", haproxy.Command, sock)
	}
	ca := env["DEFAULT_DESTINATION_CA_PATH"].Value
	if m, ok := holding(haproxy.VolumeMounts, ca); !ok || m.Name != "service-ca-bundle" {
		t.Errorf("the haproxy container does not mount the service CA bundle for %s (%+v)", ca, m)
	}

	// OpenShift's service CA makes the two TLS Secrets and fills the bundle, under the volumes' names.
	annotated := map[string]string{}
	for _, svc := range objects[corev1.Service](t, variant, "Service") {
		annotated[svc.Name] = svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"]
	}
	for svc, vol := range map[string]string{"haroute": "default-certificate", "haroute-metrics": "metrics-certs"} {
		if v := volumes[vol]; v.Secret == nil || annotated[svc] != v.Secret.SecretName {
			t.Errorf("Service %s asks the service CA for Secret %q; volume %s mounts %+v", svc, annotated[svc], vol, v.VolumeSource)
		}
	}
	bundle := volumes["service-ca-bundle"]
	found := false
	for _, cm := range objects[corev1.ConfigMap](t, variant, "ConfigMap") {
		if bundle.ConfigMap != nil && cm.Name == bundle.ConfigMap.Name {
			found = cm.Annotations["service.beta.openshift.io/inject-cabundle"] == "true"
		}
	}
	if !found {
		t.Errorf("no ConfigMap for volume service-ca-bundle that asks the service CA for its bundle")
	}

	// The init container writes what the sidecar would: the same variables.
	if !slices.EqualFunc(init.Env, haroute.Env, func(a, b corev1.EnvVar) bool {
		return a.Name == b.Name && a.Value == b.Value && (a.ValueFrom == nil) == (b.ValueFrom == nil)
	}) {
		t.Error("the init and haroute containers have different environments")
	}
}

// container returns the pod's container (init containers included) named name.
func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

// holding returns the mount whose path holds path (the longest such mount path).
func holding(mounts []corev1.VolumeMount, path string) (corev1.VolumeMount, bool) {
	var best corev1.VolumeMount
	for _, m := range mounts {
		if (path == m.MountPath || strings.HasPrefix(path, m.MountPath+"/")) && len(m.MountPath) > len(best.MountPath) {
			best = m
		}
	}
	return best, best.MountPath != ""
}

// volumeKind names a volume's source as operatorenv.Volume.Kind does.
func volumeKind(v corev1.Volume) string {
	switch {
	case v.Secret != nil:
		return "secret"
	case v.ConfigMap != nil:
		return "configMap"
	case v.EmptyDir != nil:
		return "emptyDir"
	case v.Projected != nil:
		return "projected"
	}
	return "unknown"
}

// optional reports whether a Secret or ConfigMap volume may be missing.
func optional(v corev1.Volume) bool {
	switch {
	case v.Secret != nil:
		return v.Secret.Optional != nil && *v.Secret.Optional
	case v.ConfigMap != nil:
		return v.ConfigMap.Optional != nil && *v.ConfigMap.Optional
	}
	return false
}
