//go:build e2e

package cluster

import (
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
)

// TestConflictingRoutes: two Routes claim the same host; the older one is served and admitted, the
// younger gets Admitted=False HostAlreadyClaimed; deleting the older admits the younger and traffic
// moves to its Service.
func TestConflictingRoutes(t *testing.T) {
	c, ns, pods := framework.Setup(t, "conflict")
	oldPod, newPod := pods.StartBackend("old-pod"), pods.StartBackend("new-pod")
	c.CreateService(t, ns, "old", oldPod)
	c.CreateService(t, ns, "new", newPod)
	r := c.StartRouter(t)

	const host = "shared.e2e.test"
	c.CreateRoute(t, ns, "older", host, "old")
	r.WaitBackends(host, "/", "old-pod")
	// creationTimestamp has one-second resolution: make the age difference visible.
	time.Sleep(1100 * time.Millisecond)
	c.CreateRoute(t, ns, "younger", host, "new")
	c.WaitAdmitted(t, ns, "younger", "False", "HostAlreadyClaimed")
	c.WaitAdmitted(t, ns, "older", "True", "")
	r.WaitBackends(host, "/", "old-pod")

	c.DeleteRoute(t, ns, "older")
	c.WaitAdmitted(t, ns, "younger", "True", "")
	r.WaitBackends(host, "/", "new-pod")
}
