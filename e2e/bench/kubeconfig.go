//go:build e2e

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// The stock router's identity: a ServiceAccount bound to cluster-admin. The Cluster's kubeconfig is
// haroute's (RBAC-limited to what haroute needs); the stock router also creates SubjectAccessReviews
// and TokenReviews (its metrics listener), reads Secrets (external certificates) and more.
const (
	stockAccount      = "stock-router"
	stockUser         = "system:serviceaccount:" + framework.RouterNamespace + ":" + stockAccount
	stockBinding      = "haroute-bench-stock-router"
	stockTokenSeconds = 6 * 3600
	rbacTimeout       = 30 * time.Second
	rbacPoll          = 100 * time.Millisecond
)

// writeAdminKubeconfig writes dir/admin.kubeconfig: the server and CA of c.Kubeconfig with the token
// of a cluster-admin ServiceAccount (the Cluster keeps its own admin token to itself), and waits until
// the API server's RBAC lets that account list Routes.
func writeAdminKubeconfig(t testing.TB, c *framework.Cluster, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rbacTimeout)
	defer cancel()
	token, err := adminToken(ctx, c)
	if err != nil {
		t.Fatalf("stock router identity: %v", err)
	}
	raw, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatalf("stock router kubeconfig: %v", err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("stock router kubeconfig: decode %s: %v", c.Kubeconfig, err)
	}
	users, _ := cfg["users"].([]any)
	if len(users) == 0 {
		t.Fatalf("stock router kubeconfig: %s has no users", c.Kubeconfig)
	}
	for _, u := range users {
		entry, _ := u.(map[string]any)
		if entry == nil {
			t.Fatalf("stock router kubeconfig: %s: unexpected user entry %v", c.Kubeconfig, u)
		}
		entry["user"] = map[string]any{"token": token}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatalf("stock router kubeconfig: encode: %v", err)
	}
	path := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatalf("stock router kubeconfig: %v", err)
	}
	if err := waitCanList(ctx, c); err != nil {
		t.Fatalf("stock router identity: %v", err)
	}
	return path
}

// adminToken creates (once per cluster) the ServiceAccount and its cluster-admin binding and returns a
// new token for it from the TokenRequest API.
func adminToken(ctx context.Context, c *framework.Cluster) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: stockAccount, Namespace: framework.RouterNamespace}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create service account %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: stockBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: sa.Namespace, Name: sa.Name}},
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create cluster role binding %s: %w", binding.Name, err)
	}
	seconds := int64(stockTokenSeconds)
	tr, err := c.Kube.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	return tr.Status.Token, nil
}

// waitCanList waits until a SubjectAccessReview says the stock router's account may list Routes.
func waitCanList(ctx context.Context, c *framework.Cluster) error {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               stockUser,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Group: "route.openshift.io", Resource: "routes"},
	}}
	return testkit.Eventually(rbacTimeout, rbacPoll, func() error {
		got, err := c.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("subject access review: %w", err)
		}
		if !got.Status.Allowed {
			return fmt.Errorf("%s may not list routes yet: %s", stockUser, got.Status.Reason)
		}
		return nil
	})
}
