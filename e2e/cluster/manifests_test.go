//go:build e2e

package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/manifests"
	"github.com/haroute/haroute/mapping/layout"
)

// TestManifestsDryRun applies every rendered variant of manifests/ to the API server with a
// server-side dry run and strict field validation: schemas (the CRD's too), defaulting, admission and
// the RBAC escalation check of the ClusterRoles. A field the schema does not know is refused (the
// test checks that it would notice one).
func TestManifestsDryRun(t *testing.T) {
	c := framework.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, v := range manifests.Variants() {
		n, errs := c.DryRunVariant(ctx, v)
		for _, err := range errs {
			t.Errorf("%s: %v", v, err)
		}
		t.Logf("dry run %s: %d objects accepted, %d refused", v, n, len(errs))
		if n == 0 && len(errs) == 0 {
			t.Errorf("%s: no object", v)
		}
	}
	bad := manifests.Object{APIVersion: "v1", Kind: "Service", Namespace: "haroute", Name: "strict",
		YAML: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: strict\n  namespace: haroute\nspec:\n  ports:\n  - port: 80\n    targetPortt: 8080\n")}
	if err := c.DryRunObject(ctx, bad); err == nil || !strings.Contains(err.Error(), "targetPortt") {
		t.Errorf("a Service with an unknown field passed the dry run (err %v)", err)
	}
}

// TestManifestPod replays the pod of the kubernetes overlay (framework.ReplayPod): its objects are
// applied, the init container writes the first configuration, HAProxy and the haroute sidecar run
// with exactly the template's commands, args and env, as the pod's user, on a read-only root, with a
// ServiceAccount token bound by the manifest's ClusterRole. Under continuous load it then takes an
// endpoint change (no reload), a new Route, a HAProxy container restart (killed, restarted by the
// "kubelet") and a haroute container restart: no request fails outside the HAProxy restart.
func TestManifestPod(t *testing.T) {
	c, ns, pods := framework.Setup(t, "pod")
	bs := pods.StartBackends("web-1", "web-2", "web-3")
	c.CreateService(t, ns, "web", bs[0])
	c.CreateRoute(t, ns, "shop", "shop.e2e.test", "web")

	p := c.ReplayPod(t, "overlays/kubernetes", 0)
	p.CheckProbes()
	p.CheckSockets()
	const shop = "http://shop.e2e.test/"
	wait := func(url string, want ...string) {
		t.Helper()
		if err := framework.Eventually(func() error { return answersFrom(p.Client, url, want...) }); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
	}
	wait(shop, "web-1")
	c.WaitAdmitted(t, ns, "shop", "True", "")
	start := p.Reloads()

	// Runtime changes: an endpoint added, a Route added.
	load := testkit.StartLoad(t, p.Client, shop, "web-1")
	c.SetEndpoints(t, ns, "web", bs[0], bs[1])
	load.Allow("web-1", "web-2")
	load.WaitFirst(t, "web-2", framework.WaitTimeout)
	endpointReloads := p.Reloads() - start
	c.CreateRoute(t, ns, "more", "more.e2e.test", "web")
	wait("http://more.e2e.test/", "web-1", "web-2")
	routeReloads := p.Reloads() - start - endpointReloads
	load.Check(t, 50)
	n, _, _ := load.Counts()
	t.Logf("replay: endpoint change %d reloads, Route add %d reloads, %d requests, 0 failed", endpointReloads, routeReloads, n)
	if endpointReloads != 0 {
		t.Errorf("the endpoint change took %d reloads, want 0", endpointReloads)
	}

	// The HAProxy container dies and is restarted from the files on the volume.
	during := testkit.StartLoad(t, p.Client, shop, "web-1", "web-2")
	killed := time.Now()
	p.RestartHAProxy()
	wait(shop, "web-1", "web-2")
	wait("http://more.e2e.test/", "web-1", "web-2")
	serving := time.Since(killed)
	n, failed, wrong := during.Counts()
	t.Logf("replay: HAProxy container restart: serving again %v after the kill; %d requests, %d failed, %d wrong",
		serving.Round(time.Millisecond), n, failed, wrong)
	if wrong != 0 {
		t.Errorf("%d answers from a wrong backend across the HAProxy restart", wrong)
	}
	p.CheckProbes()
	after := testkit.StartLoad(t, p.Client, shop, "web-1", "web-2")
	c.SetEndpoints(t, ns, "web", bs[1], bs[2])
	after.Allow("web-1", "web-2", "web-3")
	after.WaitFirst(t, "web-3", framework.WaitTimeout)
	wait(shop, "web-2", "web-3")
	after.Allow("web-2", "web-3")
	after.Check(t, 50)

	// The haroute container restarts (SIGTERM, then started again): HAProxy keeps serving throughout.
	base := p.Reloads()
	across := testkit.StartLoad(t, p.Client, shop, "web-2", "web-3")
	p.RestartHaroute()
	c.UpdateRoute(t, ns, "more", framework.Annotations("haproxy.router.openshift.io/balance", "leastconn"))
	wait("http://more.e2e.test/", "web-2", "web-3")
	c.SetEndpoints(t, ns, "web", bs[0], bs[2])
	across.Allow("web-1", "web-2", "web-3")
	across.WaitFirst(t, "web-1", framework.WaitTimeout)
	wait(shop, "web-1", "web-3")
	across.Allow("web-1", "web-3")
	across.Check(t, 50)
	n, _, _ = across.Counts()
	t.Logf("replay: haroute container restart, a structural change and an endpoint change: %d requests, 0 failed, %d reloads", n, p.Reloads()-base)
	p.CheckProbes()
	if p.HAProxy.Exited() || p.Haroute.Exited() {
		t.Error("a container exited")
	}
}

// TestManifestPodOpenShift replays the openshift overlay's pod as OpenShift's restricted SCC runs it:
// as an arbitrary UID the template does not name, with the stats Secret docs/deploy.md has the user
// create and the Secrets and CA bundle OpenShift's service CA makes (the replay plays it). It serves
// only the Routes labelled router=haroute and writes its status under the name haroute, so that the
// default router, told to skip that label, can run next to it; /metrics answers over HTTPS with the
// service CA's certificate and the stats credentials; an endpoint change is still applied without a
// reload.
func TestManifestPodOpenShift(t *testing.T) {
	c, ns, pods := framework.Setup(t, "ocp")
	bs := pods.StartBackends("web-1", "web-2")
	c.CreateService(t, ns, "web", bs[0])
	c.CreateRoute(t, ns, "mine", "mine.e2e.test", "web", framework.Labels("router", "haroute"))
	c.CreateRoute(t, ns, "theirs", "theirs.e2e.test", "web")
	const statsUser, statsPassword = "scraper", "e2e-stats-password"
	if _, err := c.Kube.CoreV1().Secrets(framework.RouterNamespace).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "router-stats-haroute"},
		StringData: map[string]string{"statsUsername": statsUser, "statsPassword": statsPassword},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const sccUID = 1000650000
	p := c.ReplayPod(t, "overlays/openshift", sccUID)
	p.CheckProbes()
	if err := framework.Eventually(func() error {
		return metricsOverHTTPS(p.StatsPort, "haroute-metrics."+framework.RouterNamespace+".svc", c.ServiceCA(t).Pool(), statsUser, statsPassword)
	}); err != nil {
		t.Error(err)
	}
	if err := framework.Eventually(func() error { return answersFrom(p.Client, "http://mine.e2e.test/", "web-1") }); err != nil {
		t.Fatal(err)
	}
	c.WaitAdmittedBy(t, ns, "mine", "haroute", "True", "")
	if resp, err := p.Client.Do("GET", "http://theirs.e2e.test/", nil); err != nil || resp.Status == 200 {
		t.Errorf("the unlabelled Route, the default router's, is served by haroute: %v %+v", err, resp)
	}
	if got := c.Admissions(t, ns, "theirs"); len(got) != 0 {
		t.Errorf("haroute wrote status for the default router's Route: %+v", got)
	}
	start := p.Reloads()
	load := testkit.StartLoad(t, p.Client, "http://mine.e2e.test/", "web-1")
	c.SetEndpoints(t, ns, "web", bs[0], bs[1])
	load.Allow("web-1", "web-2")
	load.WaitFirst(t, "web-2", framework.WaitTimeout)
	load.Check(t, 50)
	if n := p.Reloads() - start; n != 0 {
		t.Errorf("the endpoint change took %d reloads, want 0", n)
	}
	if st, err := os.Stat(layout.For(p.Dir).Config()); err != nil || st.Sys().(*syscall.Stat_t).Uid != sccUID {
		t.Errorf("haproxy.cfg is not the SCC user's: %v", err)
	}
}

// metricsOverHTTPS checks that GET /metrics over HTTPS on port answers 200 with the credentials, with
// a certificate roots trust for serverName.
func metricsOverHTTPS(port int, serverName string, roots *x509.CertPool, user, password string) error {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(user, password)
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("GET /metrics over https: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "haroute_") {
		return fmt.Errorf("GET /metrics over https: %d %.200q", resp.StatusCode, body)
	}
	return nil
}

// answersFrom checks that a few GETs of url are answered 200 by exactly the backends want (each of
// them at least once, no other).
func answersFrom(client *testkit.Client, url string, want ...string) error {
	seen := map[string]bool{}
	for range 8 * len(want) {
		resp, err := client.Do("GET", url, nil)
		if err != nil {
			return err
		}
		if resp.Status != 200 {
			return fmt.Errorf("status %d from %q", resp.Status, resp.Backend)
		}
		seen[resp.Backend] = true
	}
	for _, w := range want {
		if !seen[w] {
			return fmt.Errorf("no answer from %s in %d requests (answers from %v)", w, 8*len(want), seen)
		}
		delete(seen, w)
	}
	for b := range seen {
		return fmt.Errorf("an answer from %s", b)
	}
	return nil
}
