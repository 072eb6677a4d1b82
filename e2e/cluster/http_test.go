//go:build e2e

package cluster

import (
	"context"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/e2e/framework"
)

// TestHTTPRoute: a plain HTTP Route to a Service whose EndpointSlice lists two backends in a network
// namespace is served by both; changing the slice to one backend moves all traffic to it; an unknown
// host gets HAProxy's 503; the Route is Admitted in its status; haroute diff, reading the cluster,
// finds nothing.
func TestHTTPRoute(t *testing.T) {
	c, ns, pods := framework.Setup(t, "http")
	a, b := pods.StartBackend("pod-a"), pods.StartBackend("pod-b")
	c.CreateService(t, ns, "web", a, b)
	// The router runs with its RBAC-limited token, not as an admin.
	if _, err := c.RouterKube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("router token lists pods: want Forbidden, got %v", err)
	}
	r := c.StartRouter(t)

	c.CreateRoute(t, ns, "web", "web.e2e.test", "web")
	r.WaitBackends("web.e2e.test", "/", "pod-a", "pod-b")
	adm := c.WaitAdmitted(t, ns, "web", "True", "")
	if adm.RouterName == "" {
		t.Errorf("Admitted condition without a router name: %+v", adm)
	}

	// haroute diff, reading the cluster with the router's kubeconfig: desired, applied, HAProxy and
	// the files agree.
	if out, code := r.Inspect(t, "diff", "--kubeconfig", c.Kubeconfig, "-o", "json"); code != 0 || strings.TrimSpace(string(out)) != "[]" {
		t.Errorf("haroute diff against the cluster: exit %d\n%s", code, out)
	}

	c.SetEndpoints(t, ns, "web", b)
	r.WaitBackends("web.e2e.test", "/", "pod-b")
	r.WaitAnswer("other.e2e.test", "/", http.StatusServiceUnavailable, "")
}
