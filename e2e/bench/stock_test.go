//go:build e2e

package bench

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/framework"
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m))
}

// requireStock fails the test, saying how to build it, when the stock router's build is missing.
func requireStock(t *testing.T) string {
	t.Helper()
	build := os.Getenv(StockEnv)
	if err := checkStockBuild(build); err != nil {
		t.Fatal(err)
	}
	return build
}

// TestStockRouterServes: the stock OpenShift router, run by StartStockRouter against the test's
// cluster, serves a plain HTTP Route to a backend in the pod network, admits it under its own name,
// runs its HAProxy in its own mount namespace and counts its reloads.
func TestStockRouterServes(t *testing.T) {
	requireStock(t)
	c, ns, pods := framework.Setup(t, "stock")
	be := pods.StartBackend("pod-a")
	c.CreateService(t, ns, "web", be)
	c.CreateRoute(t, ns, "web", "web.bench.test", "web")

	r := StartStockRouter(t, c, "", StockOptions{ReloadInterval: time.Second})
	if err := framework.Eventually(func() error {
		code, backend, err := r.Get("web.bench.test", "/")
		if err != nil {
			return err
		}
		if code != http.StatusOK || backend != be.Name {
			return fmt.Errorf("answer %d from %q", code, backend)
		}
		return nil
	}); err != nil {
		t.Fatalf("GET web.bench.test through the stock router: %v", err)
	}
	c.WaitAdmittedBy(t, ns, "web", r.Name, "True", "")

	pids := r.HAProxyPIDs()
	if len(pids) == 0 {
		t.Fatal("no HAProxy process in the stock router's mount namespace")
	}
	if reloads := r.Reloads(); reloads < 1 {
		t.Errorf("stock router reload count %d, want at least 1 (it started HAProxy)", reloads)
	}
	rss, err := RSS(append([]int{r.PID()}, pids...))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stock router pid %d, HAProxy %v, %d reloads, RSS %d kB in all", r.PID(), pids, r.Reloads(), rss)
}
