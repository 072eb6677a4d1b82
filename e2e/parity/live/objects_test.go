//go:build e2e

package live

import (
	"context"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/e2e/parity"
)

// claimGap separates the creation of the corpus namespace's Routes from the other namespace's: the
// API server's creation times have a resolution of a second, and the older Route of a host must be
// older in the replay's manifests (a second apart) and here alike.
const claimGap = 1100 * time.Millisecond

// createObjects writes the corpus's objects through the admin clients: namespaces, Secrets,
// Services, EndpointSlices, then the Routes in corpus order. It reads every Route back and fails
// when the API server stored another spec than the corpus's (a default the corpus does not spell
// out), since the replay reads the corpus's objects as they are.
func createObjects(ctx context.Context, t *testing.T, c *framework.Cluster, o parity.Objects) {
	t.Helper()
	fresh := func(m *metav1.ObjectMeta) {
		m.UID, m.CreationTimestamp, m.ResourceVersion = "", metav1.Time{}, ""
	}
	for _, x := range o.Namespaces {
		x = x.DeepCopy()
		fresh(&x.ObjectMeta)
		if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, x, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", x.Name, err)
		}
	}
	for _, x := range o.Secrets {
		x = x.DeepCopy()
		fresh(&x.ObjectMeta)
		if _, err := c.Kube.CoreV1().Secrets(x.Namespace).Create(ctx, x, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create secret %s/%s: %v", x.Namespace, x.Name, err)
		}
	}
	grantSecrets(ctx, t, c, o)
	for _, x := range o.Services {
		x = x.DeepCopy()
		fresh(&x.ObjectMeta)
		if _, err := c.Kube.CoreV1().Services(x.Namespace).Create(ctx, x, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create service %s/%s: %v", x.Namespace, x.Name, err)
		}
	}
	for _, x := range o.EndpointSlices {
		x = x.DeepCopy()
		fresh(&x.ObjectMeta)
		if _, err := c.Kube.DiscoveryV1().EndpointSlices(x.Namespace).Create(ctx, x, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create endpointslice %s/%s: %v", x.Namespace, x.Name, err)
		}
	}
	last := ""
	for _, want := range o.Routes {
		if last != "" && want.Namespace != last {
			time.Sleep(claimGap)
		}
		last = want.Namespace
		x := want.DeepCopy()
		fresh(&x.ObjectMeta)
		got, err := c.Routes.RouteV1().Routes(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create route %s/%s: %v", x.Namespace, x.Name, err)
		}
		if !apiequality.Semantic.DeepEqual(got.Spec, want.Spec) {
			t.Fatalf("the API server stored route %s/%s with another spec than the corpus's (spell the defaults out in e2e/parity/objects.go):\nstored:\n%s\ncorpus:\n%s",
				x.Namespace, x.Name, specYAML(got.Spec), specYAML(want.Spec))
		}
	}
}

func specYAML(s routev1.RouteSpec) string {
	b, err := yaml.Marshal(s)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// stockRouterAccount is the service account the stock router checks a Route's external certificate
// Secret against (routerServiceAccount in pkg/router/routeapihelpers/validation.go: hard-coded).
const stockRouterAccount, stockRouterNamespace = "router", "openshift-ingress"

// grantSecrets lets OpenShift's router service account read each Secret the corpus grants it, with a
// Role and a RoleBinding in the Secret's namespace, as a Route's author does for externalCertificate.
func grantSecrets(ctx context.Context, t *testing.T, c *framework.Cluster, o parity.Objects) {
	t.Helper()
	for _, name := range o.Granted {
		ns := parity.Namespace
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "router-reads-" + name},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
				ResourceNames: []string{name}, Verbs: []string{"get", "list", "watch"}}},
		}
		if _, err := c.Kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create role %s/%s: %v", ns, role.Name, err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: stockRouterNamespace, Name: stockRouterAccount}},
		}
		if _, err := c.Kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create role binding %s/%s: %v", ns, binding.Name, err)
		}
	}
}
