//go:build e2e

package cluster

import (
	"net/http"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// apiserverDown is how long the API server stays away while traffic is checked.
const apiserverDown = 5 * time.Second

// TestAPIServerRestart: kube-apiserver is killed while a client sends requests: HAProxy keeps serving
// the last state and haroute keeps running; once the API server is back (same etcd), a new Route and
// an endpoint change made after its return are applied.
func TestAPIServerRestart(t *testing.T) {
	c, ns, pods := framework.Setup(t, "apiserver")
	bs := pods.StartBackends("web-1", "web-2", "new-pod")
	c.CreateService(t, ns, "web", bs[0])
	c.CreateService(t, ns, "new", bs[2])
	r := c.StartRouter(t)
	c.CreateRoute(t, ns, "web", "web.e2e.test", "web")
	r.WaitBackends("web.e2e.test", "/", "web-1")

	load := testkit.StartLoad(t, r.Client, "http://web.e2e.test/", "web-1")
	c.KillAPIServer(t)
	time.Sleep(apiserverDown)
	if r.Proc.Exited() {
		t.Fatal("haroute exited while the API server was down")
	}
	before := load.Requests()
	time.Sleep(time.Second)
	if load.Requests() == before {
		t.Fatal("no request completed while the API server was down")
	}
	c.RestartAPIServer(t)

	load.Allow("web-1", "web-2")
	c.SetEndpoints(t, ns, "web", bs[0], bs[1])
	c.CreateRoute(t, ns, "new", "new.e2e.test", "new")
	r.WaitAnswer("new.e2e.test", "/", http.StatusOK, "new-pod")
	r.WaitBackends("web.e2e.test", "/", "web-1", "web-2")
	c.WaitAdmitted(t, ns, "new", "True", "")
	load.Check(t, 500)
}
