//go:build e2e

package live

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/bench"
	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/e2e/parity"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds and fixed values of the run.
const (
	// podSubnet is the pod network's 198.18.N.0/24: fixed, so that the pods' addresses, and with them
	// the stock router's cookie values in the recording, are the same on every run.
	podSubnet = 231
	// stockReload is the stock router's RELOAD_INTERVAL: short, the corpus is written before it starts.
	stockReload   = time.Second
	statusTimeout = 3 * time.Minute
	settleTimeout = time.Minute
	settleQuiet   = 3 * stockReload
	passTimeout   = 5 * time.Minute
	// readyHost is the host of the Route written after the corpus: once both routers serve it, they
	// have read everything before it.
	readyHost    = "ready.parity.test"
	harouteName  = "haroute"
	defaultOut   = "../../../bin/parity"
	testdataPath = ".."
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m))
}

// TestParity puts the corpus's requests to the stock router and to haroute, side by side on one API
// server with the same objects and pods, records the stock router's answers, and fails on a
// difference that the known differences do not accept.
func TestParity(t *testing.T) {
	build := os.Getenv(bench.StockEnv)
	if build == "" {
		t.Fatalf("%s is not set: run `make parity`, which builds the stock router", bench.StockEnv)
	}
	hb := bench.HAProxy(t)
	versionLine, version, err := parity.HAProxyVersion(hb)
	if err != nil {
		t.Fatal(err)
	}
	corpus := parity.Build()
	if err := corpus.Check(); err != nil {
		t.Fatal(err)
	}
	known, err := parity.ReadKnown(filepath.Join(testdataPath, parity.KnownFile))
	if err != nil {
		t.Fatal(err)
	}

	c := framework.Start(t)
	pki := parity.NewPKI(t)
	addrs := startPods(t, framework.NewPodNetworkAt(t, podSubnet), corpus, pki)
	objs, err := corpus.Objects(addrs, pki)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), passTimeout)
	defer cancel()
	createObjects(ctx, t, c, objs)
	c.CreateRoute(t, parity.Namespace, "zz-parity-ready", readyHost, "a")

	files, err := parity.WriteRouterFiles(testkit.TempDir(t), pki)
	if err != nil {
		t.Fatal(err)
	}
	env := parity.RouterEnv(files)
	stock := bench.StartStockRouter(t, c, "", bench.StockOptions{Build: build, HAProxy: hb, ReloadInterval: stockReload, Env: env})
	haroute := c.StartRouterArgs(t, []string{"--managed-haproxy=" + hb}, append(env, "ROUTER_NAME="+harouteName)...)
	waitReady(t, "stock", stock.Client)
	waitReady(t, "haroute", haroute.Client)
	waitStatus(ctx, t, c, objs, stock.Name, harouteName)
	logAdmissions(t, c, objs, stock.Name, harouteName)
	settle(t, stock)

	endpoints, err := corpus.EndpointsAt(addrs)
	if err != nil {
		t.Fatal(err)
	}
	reqs := corpus.Requests()
	reloads := stock.Reloads()
	stockAnswers, err := parity.Send(ctx, parity.Target{Name: "stock", HTTPPort: stock.HTTPPort, HTTPSPort: stock.HTTPSPort}, endpoints, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if n := stock.Reloads(); n != reloads {
		t.Fatalf("the stock router reloaded %d times while it was asked: its answers may mix two configurations", n-reloads)
	}
	checkStockCookies(t, reqs, stockAnswers)
	rec := parity.Recording{StockCommit: stock.Commit, HAProxy: versionLine, Corpus: corpus.Digest(), Answers: stockAnswers}
	if err := rec.Write(filepath.Join(testdataPath, parity.RecordingFile)); err != nil {
		t.Fatal(err)
	}
	harouteAnswers, err := parity.Send(ctx, parity.Target{Name: "haroute", HTTPPort: haroute.HTTPPort, HTTPSPort: haroute.HTTPSPort}, endpoints, reqs)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := parity.Evaluate("live", reqs, stockAnswers, harouteAnswers, parity.Comparison{HAProxy: version}, known)
	if err != nil {
		t.Fatal(err)
	}
	rep.StockCommit, rep.StockHAProxy = stock.Commit, versionLine
	out := os.Getenv(parity.OutEnv)
	if out == "" {
		out = defaultOut
	}
	if err := rep.Write(out, "live"); err != nil {
		t.Fatal(err)
	}
	t.Logf("report (every difference in %s):\n%s", filepath.Join(out, "live.txt"), rep.Summary())
	if len(rep.Unexpected) > 0 {
		t.Errorf("%d differences that testdata/known-differences.yaml does not accept (see the report above)", len(rep.Unexpected))
	}
}

// startPods starts the corpus's pods in the pod network (the plain ones in one process, each TLS pod
// in its own) and the idler on the idled Service's cluster IP, and returns the pods' addresses.
func startPods(t *testing.T, n *framework.PodNetwork, corpus *parity.Corpus, pki *parity.PKI) map[string]netip.AddrPort {
	t.Helper()
	var plain []string
	for _, p := range corpus.Pods {
		if p.CertName == "" {
			plain = append(plain, p.Name)
		}
	}
	backends := n.StartEchoBackends(plain...)
	for _, p := range corpus.Pods {
		if p.CertName != "" {
			cert, key := pki.Backend(p.CertName)
			backends = append(backends, n.StartTLSEchoBackend(p.Name, cert, key))
		}
	}
	n.StartEchoBackendAt(parity.IdlerPod, parity.IdledClusterIP, parity.ServicePort)
	addrs := map[string]netip.AddrPort{}
	for _, b := range backends {
		addrs[b.Name] = netip.MustParseAddrPort(b.Addr())
	}
	return addrs
}

// waitReady waits until the router serves readyHost from its pod.
func waitReady(t *testing.T, name string, client *testkit.Client) {
	t.Helper()
	if err := testkit.Eventually(settleTimeout, 100*time.Millisecond, func() error {
		resp, err := client.Do(http.MethodGet, "http://"+readyHost+"/", nil)
		if err != nil {
			return err
		}
		if resp.Status != http.StatusOK || resp.Backend != "pod-a" {
			return fmt.Errorf("answer %d from %q", resp.Status, resp.Backend)
		}
		return nil
	}); err != nil {
		t.Fatalf("%s does not serve %s, the Route written after the corpus: %v", name, readyHost, err)
	}
	client.CloseIdleConnections()
}

// settle waits until the stock router has not reloaded for settleQuiet (the Route status writes of
// both routers are Route updates it may reload for).
func settle(t *testing.T, stock *bench.StockRouter) {
	t.Helper()
	last, since := stock.Reloads(), time.Now()
	deadline := time.Now().Add(settleTimeout)
	for time.Since(since) < settleQuiet {
		if time.Now().After(deadline) {
			t.Fatalf("the stock router keeps reloading (%d reloads)", last)
		}
		time.Sleep(200 * time.Millisecond)
		if n := stock.Reloads(); n != last {
			last, since = n, time.Now()
		}
	}
	t.Logf("the stock router has settled after %d reloads", last)
}

// checkStockCookies checks the stock router's cookies against the scheme this suite reproduces
// (StockCookieName, Endpoint.StockValue): the sticky session's first answer sets the default name
// and the answering pod's hash. Otherwise the stock cookies the corpus sends would name no pod.
func checkStockCookies(t *testing.T, reqs []parity.Request, answers []parity.Answer) {
	t.Helper()
	for i, r := range reqs {
		if r.ID != "cookies/sticky-1" {
			continue
		}
		want := parity.StockCookieName(parity.Namespace, "sticky")
		a := answers[i]
		if len(a.Cookies) != 1 || a.Cookies[0].Name != want || a.Cookies[0].Value != "stock-hash(answering pod)" {
			t.Fatalf("the stock router's cookie on %s is %+v, want %s=<hash of the answering pod's endpoint>: "+
				"the suite's reproduction of its cookie scheme (e2e/parity/endpoints.go) is wrong", r.ID, a.Cookies, want)
		}
		return
	}
	t.Fatal("no request cookies/sticky-1 in the corpus")
}

// waitStatus waits until every Route has an ingress entry of each router (admitted or not).
func waitStatus(ctx context.Context, t *testing.T, c *framework.Cluster, objs parity.Objects, routers ...string) {
	t.Helper()
	err := testkit.Eventually(statusTimeout, time.Second, func() error {
		var missing []string
		for _, r := range objs.Routes {
			for _, name := range routers {
				found := false
				for _, a := range c.Admissions(t, r.Namespace, r.Name) {
					found = found || a.RouterName == name
				}
				if !found {
					missing = append(missing, name+":"+r.Namespace+"/"+r.Name)
				}
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d Route statuses missing: %s", len(missing), strings.Join(missing[:min(len(missing), 8)], ", "))
		}
		return ctx.Err()
	})
	if err != nil {
		t.Fatalf("Route status: %v", err)
	}
}

// logAdmissions logs every Route that a router did not admit, with each router's condition: the
// answers' differences often start there.
func logAdmissions(t *testing.T, c *framework.Cluster, objs parity.Objects, routers ...string) {
	t.Helper()
	var lines []string
	for _, r := range objs.Routes {
		by := map[string]framework.Admission{}
		admitted := true
		for _, a := range c.Admissions(t, r.Namespace, r.Name) {
			by[a.RouterName] = a
			admitted = admitted && a.Status == "True"
		}
		if admitted {
			continue
		}
		line := r.Namespace + "/" + r.Name + ":"
		for _, name := range routers {
			a := by[name]
			line += fmt.Sprintf(" %s %s %s %q;", name, a.Status, a.Reason, a.Message)
		}
		lines = append(lines, line)
	}
	t.Logf("Routes not admitted by both routers (%d):\n%s", len(lines), strings.Join(lines, "\n"))
}
