//go:build e2e

package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/e2e/bench/results"
	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// The sizes and bounds of TestScale.
const (
	scaleEnv          = "HAROUTE_BENCH_SCALE"           // comma-separated numbers of Routes
	scaleEndpointsEnv = "HAROUTE_BENCH_SCALE_ENDPOINTS" // endpoints per Route
	defaultScale      = "1000,10000,20000"
	defaultScaleEPs   = 10
	// changeTimeout bounds the wait for one change to show in traffic.
	changeTimeout = 60 * time.Second
	changePoll    = 5 * time.Millisecond
	metricsPause  = 200 * time.Millisecond
)

// TestScale runs haroute alone at growing numbers of Routes ($HAROUTE_BENCH_SCALE, default
// 1000,10000,20000), each with its own Service of $HAROUTE_BENCH_SCALE_ENDPOINTS endpoints (default
// 10), each size on a fresh API server: the time from haroute's start until a sample of the Routes
// answers and until every Route's status is written, the memory of haroute and HAProxy once idle,
// then $HAROUTE_BENCH_REPEATS times (default 3) an endpoint added to one Route and a Route added
// (API write → first answer that shows it) and a GET /metrics. It writes scale.json.
func TestScale(t *testing.T) {
	hb := HAProxy(t)
	sizes := scaleSizes(t)
	endpoints := envInt(t, scaleEndpointsEnv, defaultScaleEPs)
	repeats := Repeats(t)
	out := results.Scale{Header: NewHeader(hb, "make bench BENCH_RUN=TestScale", time.Now())}
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			p := scalePoint(t, hb, n, endpoints, repeats)
			t.Logf("FIGURES scale routes=%d endpoints=%d haroute_rss_MB=%.1f haproxy_rss_MB=%.1f haproxy_pss_MB=%.1f start_to_served=%.1fs start_to_status=%.1fs endpoint_change=%v route_add=%v metrics=%v bytes=%d",
				p.Routes, p.Endpoints, p.HarouteRSSMB, p.HAProxyRSSMB, p.HAProxyPSSMB, p.StartToServed, p.StartToStatus,
				p.EndpointChange, p.RouteAdd, p.MetricsScrape, p.MetricsBytes)
			out.Points = append(out.Points, p)
		})
	}
	out.Elapsed = time.Since(out.Started).Seconds()
	WriteResults(t, results.ScaleFile, out)
}

func scaleSizes(t *testing.T) []int {
	t.Helper()
	v := os.Getenv(scaleEnv)
	if v == "" {
		v = defaultScale
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want comma-separated positive integers", scaleEnv, v)
		}
		out = append(out, n)
	}
	return out
}

// scalePoint measures one size on a fresh API server.
func scalePoint(t *testing.T, hb string, routes, endpoints, repeats int) results.ScalePoint {
	c, ns, pods := framework.Setup(t, "scale")
	w := CreateWorkload(t, c, ns, pods, routes, endpoints)
	// Backends the changes add: one more pod per repeat.
	extra := make([]*framework.Backend, repeats)
	for i := range extra {
		extra[i] = pods.StartBackend(fmt.Sprintf("new-%02d", i))
	}
	env := []string{"ROUTER_MAX_CONNECTIONS=" + strconv.Itoa(benchMaxConn), "ROUTER_NAME=" + harouteName}
	start := time.Now()
	r := c.StartRouterArgs(t, []string{"--managed-haproxy=" + hb}, env...)
	served := WaitServed(t, c, w, harouteName, r.Client, true, servedTimeout(routes))
	m := measureIdle(t, r.Proc.Cmd.Process.Pid)
	p := results.ScalePoint{
		Routes: routes, Endpoints: endpoints,
		HarouteRSSMB: mib(m.RouterRSS), HAProxyRSSMB: mib(m.HAProxyRSS), HAProxyPSSMB: mib(m.HAProxyPSS),
		StartToServed: served.Answered.Sub(start).Seconds(), StartToStatus: served.Admitted.Sub(start).Seconds(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(repeats)*3*changeTimeout)
	defer cancel()
	// In cluster mode /metrics wants a bearer token the API server authorizes (a monitoring
	// stack's); a cluster-admin token is.
	token, err := adminToken(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for k := range repeats {
		// One endpoint more for Route k: the new pod answers.
		i := (k * 7919) % routes
		slice := w.slice(i)
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{extra[k].IP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(true)}})
		cur, err := c.Kube.DiscoveryV1().EndpointSlices(ns).Get(ctx, slice.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		slice.ResourceVersion = cur.ResourceVersion
		at := time.Now()
		if _, err := c.Kube.DiscoveryV1().EndpointSlices(ns).Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		p.EndpointChange = append(p.EndpointChange, waitBackend(t, r.Client, w.Host(i), extra[k].Name, at))

		// A new Route to a new Service.
		name := fmt.Sprintf("added-%02d", k)
		at = time.Now()
		createRoute(ctx, t, c, ns, name, w.Backends[0])
		p.RouteAdd = append(p.RouteAdd, waitBackend(t, r.Client, name+".bench.test", w.Backends[0].Name, at))

		d, n := scrapeMetrics(t, r.StatsPort, token)
		p.MetricsScrape, p.MetricsBytes = append(p.MetricsScrape, d), n
		time.Sleep(metricsPause)
	}
	return p
}

// waitBackend requests host until backend answers 200 and returns the seconds since at (bounded by
// changeTimeout).
func waitBackend(t *testing.T, client *testkit.Client, host, backend string, at time.Time) float64 {
	t.Helper()
	defer client.CloseIdleConnections()
	deadline := at.Add(changeTimeout)
	for time.Now().Before(deadline) {
		if resp, err := client.Do(http.MethodGet, "http://"+host+"/", nil); err == nil && resp.Status == http.StatusOK && resp.Backend == backend {
			return time.Since(at).Seconds()
		}
		time.Sleep(changePoll)
	}
	t.Fatalf("%s: no answer from %s within %v", host, backend, changeTimeout)
	return 0
}

// createRoute creates Service, EndpointSlice (one endpoint, b) and Route name in ns.
func createRoute(ctx context.Context, t *testing.T, c *framework.Cluster, ns, name string, b *framework.Backend) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{
			Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}}}}
	if _, err := c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	port, proto, portName := int32(framework.BackendPort), corev1.ProtocolTCP, "http"
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-bench", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{b.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(true)}}},
	}
	if _, err := c.Kube.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	route := &routev1.Route{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: routev1.RouteSpec{Host: name + ".bench.test", To: routev1.RouteTargetReference{Kind: "Service", Name: name},
			Port: &routev1.RoutePort{TargetPort: intstr.FromString("http")}}}
	if _, err := c.Routes.RouteV1().Routes(ns).Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// scrapeMetrics GETs haroute's /metrics once with token and returns the seconds it took and the
// body's size.
func scrapeMetrics(t *testing.T, port int, token string) (float64, int) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	at := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
	}
	return time.Since(at).Seconds(), int(n)
}

func ptrTo[T any](v T) *T { return &v }
