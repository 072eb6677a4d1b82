//go:build e2e

package cluster

import (
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
)

// TestPathRoutes: three Routes share a host with the paths /, /api and /api/v2; each request goes to
// the most specific path that contains it (on segment boundaries); deleting /api moves its requests
// to / while /api/v2 keeps its own.
func TestPathRoutes(t *testing.T) {
	c, ns, pods := framework.Setup(t, "path")
	bs := pods.StartBackends("root-pod", "api-pod", "v2-pod")
	c.CreateService(t, ns, "root", bs[0])
	c.CreateService(t, ns, "api", bs[1])
	c.CreateService(t, ns, "v2", bs[2])
	r := c.StartRouter(t)

	const host = "paths.e2e.test"
	c.CreateRoute(t, ns, "api", host, "api", framework.Path("/api"))
	c.CreateRoute(t, ns, "v2", host, "v2", framework.Path("/api/v2"))
	c.CreateRoute(t, ns, "root", host, "root")
	want := map[string]string{
		"/":             "root-pod",
		"/index.html":   "root-pod",
		"/apiary":       "root-pod",
		"/api":          "api-pod",
		"/api/":         "api-pod",
		"/api/users":    "api-pod",
		"/api/v2":       "v2-pod",
		"/api/v2/items": "v2-pod",
		"/api/v20":      "api-pod",
	}
	for path, backend := range want {
		r.WaitAnswer(host, path, http.StatusOK, backend)
	}
	// A path Route alone does not serve the rest of its host.
	r.WaitAnswer("other-"+host, "/api", http.StatusServiceUnavailable, "")

	c.DeleteRoute(t, ns, "api")
	r.WaitAnswer(host, "/api/users", http.StatusOK, "root-pod")
	r.WaitAnswer(host, "/api/v2/items", http.StatusOK, "v2-pod")
}
