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
