package parity

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of the replay.
const (
	replayReady   = 30 * time.Second
	replayApply   = 10 * time.Second
	replayTimeout = 2 * time.Minute
)

// replayNet is where the replay's pods listen: 127.77.0.<2+i>, pod i of the corpus, on PodPort
// (loopback, so no root is needed; a fixed address per pod, so the endpoints are the same on every
// replay).
var replayNet = netip.MustParseAddr("127.77.0.2")

// binary is the haroute binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testbed.RunWithHaroute(m, "e2e/parity", &binary))
}

// TestReplay runs haroute alone (`haroute run --manifests`) on the corpus's objects, with the same
// pods on loopback addresses, puts the corpus's requests to it and compares its answers with the
// stock router's recorded ones (testdata/stock-answers.json) through the same comparison and known
// differences as `make parity`, on the HAProxy the tests run ($HAROUTE_HAPROXY).
func TestReplay(t *testing.T) {
	corpus := Build()
	if err := corpus.Check(); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecording(RecordingFile, corpus)
	if err != nil {
		t.Fatal(err)
	}
	known, err := ReadKnown(KnownFile)
	if err != nil {
		t.Fatal(err)
	}
	_, version, err := HAProxyVersion(testkit.HAProxyBinary())
	if err != nil {
		t.Fatal(err)
	}

	pki := NewPKI(t)
	addrs := startReplayPods(t, corpus, pki)
	objs, err := corpus.Objects(addrs, pki)
	if err != nil {
		t.Fatal(err)
	}
	replayIdledService(t, objs)
	dir := testkit.TempDir(t)
	manifests := filepath.Join(dir, "m")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := objs.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifests, "parity.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := WriteRouterFiles(dir, pki)
	if err != nil {
		t.Fatal(err)
	}
	r := testbed.NewRouterProcess(t, testbed.RouterProcessConfig{
		Binary: binary,
		Dir:    filepath.Join(dir, "h"),
		Source: []string{"--manifests", manifests},
		Bounds: testbed.RouterProcessBounds{Ready: replayReady, Apply: replayApply, Poll: 20 * time.Millisecond,
			ShowProc: replayApply, Socket: time.Second},
		Process: testkit.ProcessOptions{StopTimeout: replayApply, Deathsig: syscall.SIGTERM, MustOutlive: true},
	})
	r.Start([]string{testbed.ManagedHAProxyFlag(), "--allow-loopback-endpoints"}, RouterEnv(files)...)

	endpoints, err := corpus.EndpointsAt(addrs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), replayTimeout)
	defer cancel()
	reqs := corpus.Requests()
	answers, err := Send(ctx, Target{Name: "haroute", HTTPPort: r.HTTPPort, HTTPSPort: r.HTTPSPort}, endpoints, reqs)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate("replay", reqs, rec.Answers, answers, Comparison{HAProxy: version}, known)
	if err != nil {
		t.Fatal(err)
	}
	rep.StockCommit, rep.StockHAProxy = rec.StockCommit, rec.HAProxy
	if out := os.Getenv(OutEnv); out != "" {
		if err := rep.Write(out, "replay-"+version.String()); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("requests compared: %d, agreeing: %d; differences: %d accepted, %d unexpected; %d fields not compared on HAProxy %s",
		rep.Requests, rep.Agreeing, len(rep.Accepted), len(rep.Unexpected), len(rep.Conditions), version)
	if len(rep.Unexpected) > 0 {
		t.Errorf("%d differences from the stock router's recorded answers that %s does not accept:\n%s",
			len(rep.Unexpected), KnownFile, rep.Summary())
	}
}

// replayIdler is where the replay's idler answers the idled Service: its cluster IP on loopback, at
// the pods' port, which a test that is not root may bind (the live run's is IdledClusterIP:80 in the
// pod network). The stock router and haroute send an idled Service's requests to its cluster IP and
// Service port; which address and port that is does not show in the answer.
var replayIdler = netip.AddrPortFrom(netip.MustParseAddr("127.77.0.250"), PodPort)

// replayIdledService moves the idled Service's cluster IP and port to replayIdler and starts the
// idler there, so that the replay's requests stay on loopback.
func replayIdledService(t *testing.T, objs Objects) {
	t.Helper()
	for _, svc := range objs.Services {
		if svc.Spec.ClusterIP != IdledClusterIP {
			continue
		}
		svc.Spec.ClusterIP = replayIdler.Addr().String()
		svc.Spec.Ports[0].Port = int32(replayIdler.Port())
		testkit.StartEchoBackend(t, replayIdler.Addr().String(), int(replayIdler.Port()), IdlerPod, nil, nil)
		return
	}
	t.Fatalf("the corpus has no Service at %s, the idled one", IdledClusterIP)
}

// startReplayPods starts the corpus's pods at 127.77.0.<2+i>:PodPort and returns their addresses.
func startReplayPods(t *testing.T, corpus *Corpus, pki *PKI) map[string]netip.AddrPort {
	t.Helper()
	addrs := map[string]netip.AddrPort{}
	ip := replayNet
	for _, p := range corpus.Pods {
		var cert, key []byte
		if p.CertName != "" {
			cert, key = pki.Backend(p.CertName)
		}
		b := testkit.StartEchoBackend(t, ip.String(), PodPort, p.Name, cert, key)
		addrs[p.Name] = b.AddrPort()
		ip = ip.Next()
	}
	return addrs
}
