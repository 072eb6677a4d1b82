//go:build e2e

package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/e2e/framework"
)

// TestMetricsNeedAToken: in cluster mode /metrics answers only a bearer token that the API server
// authenticates (a TokenReview) and whose user may get routers/metrics in route.openshift.io (a
// SubjectAccessReview), as OpenShift's router has it; the probes stay open. The router runs with the
// manifests' ClusterRole, so this proves it may ask both reviews.
func TestMetricsNeedAToken(t *testing.T) {
	c := framework.Start(t)
	ns := c.Namespace(t, "metrics")
	r := c.StartRouter(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ttl := int64(600)
	tr, err := c.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "scraper",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	get := func(path, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", r.StatsPort, path), nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b), err
	}
	want := func(path, token string, code int, body string) {
		t.Helper()
		if err := framework.Eventually(func() error {
			got, b, err := get(path, token)
			if err != nil || got != code || !strings.Contains(b, body) {
				return fmt.Errorf("GET %s = %d %.200q (%v), want %d with %q", path, got, b, err, code, body)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	want("/healthz/ready", "", http.StatusOK, "ok")
	want("/metrics", "", http.StatusUnauthorized, "bearer token")
	want("/metrics", "not-a-token", http.StatusUnauthorized, "does not authenticate")
	want("/metrics", tr.Status.Token, http.StatusForbidden, "may not get routers/metrics")

	// The scraper is granted get on routers/metrics, as a monitoring stack is.
	role := "haroute-metrics-reader-" + ns
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"route.openshift.io"}, Resources: []string{"routers/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "scraper"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("/metrics", tr.Status.Token, http.StatusOK, "haroute_")
}
