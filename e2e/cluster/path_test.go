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
	// The most specific Route first: once /api/v2 answers, every Route is in place (the router
	// applies each sync whole), so the paths that must fall through to a shorter one are checked
	// against the complete set.
	for _, c := range []struct{ path, backend string }{
		{"/api/v2", "v2-pod"},
		{"/api/v2/items", "v2-pod"},
		{"/api", "api-pod"},
		{"/api/", "api-pod"},
		{"/api/users", "api-pod"},
		{"/api/v20", "api-pod"},
		{"/", "root-pod"},
		{"/index.html", "root-pod"},
		{"/apiary", "root-pod"},
	} {
		r.WaitAnswer(host, c.path, http.StatusOK, c.backend)
	}
	// A path Route alone does not serve the rest of its host.
	r.WaitAnswer("other-"+host, "/api", http.StatusServiceUnavailable, "")

	c.DeleteRoute(t, ns, "api")
	r.WaitAnswer(host, "/api/users", http.StatusOK, "root-pod")
	r.WaitAnswer(host, "/api/v2/items", http.StatusOK, "v2-pod")
}
