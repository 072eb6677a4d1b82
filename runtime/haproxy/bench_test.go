package haproxy_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

// benchRoutes is the number of Routes the HAProxy of the update benchmarks serves besides the one
// that changes, so that plans and renders have a realistic size.
const benchRoutes = 1000

// benchInput returns benchRoutes Routes with two endpoints each, plus Route app/big whose Service has
// bigEndpoints endpoints. Endpoint addresses are on 127.1.0.0/16 where nothing listens (health checks
// fail fast on loopback; addresses repeat beyond 8,192 Routes); traffic is not part of these
// benchmarks.
func benchInput(bigEndpoints int) mapping.Input { return benchInputN(benchRoutes, bigEndpoints) }

// benchInputN is benchInput with routes Routes besides app/big.
func benchInputN(routes, bigEndpoints int) mapping.Input {
	var in mapping.Input
	add := func(ns, name string, eps int, base int) {
		in.Routes = append(in.Routes, &routev1.Route{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.Unix(int64(base), 0)},
			Spec:       routev1.RouteSpec{Host: name + "." + ns + ".example.com", To: routev1.RouteTargetReference{Kind: "Service", Name: name}},
		})
		in.Services = append(in.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}})
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080))}},
		}
		for i := range eps {
			n := base*8 + i
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("127.1.%d.%d", n>>8&0xff, n&0xff)}})
		}
		in.EndpointSlices = append(in.EndpointSlices, slice)
	}
	for i := range routes {
		add("bench", fmt.Sprintf("r%05d", i), 2, i)
	}
	add("app", "big", bigEndpoints, 5000)
	return in
}

func ptr[T any](v T) *T { return &v }

// benchUpdater starts HAProxy from the translation of in and returns an Instance driving it, set
// up as `haroute run` sets it up (the adaptive spare pool).
func benchUpdater(b *testing.B, in mapping.Input) (*haproxy.Instance, mapping.Options, *socket.Master) {
	opts := testbed.RouterOptions(b)
	opts.CheckInterval = "1h" // keep thousands of failing checks from loading the machine
	cfg, _ := mapping.Translate(in, opts)
	dir := testkit.TempDir(b)
	ca := testkit.NewCA(b, "bench CA")
	ro := render.Options{DefaultCertificatePEM: ca.IssueBundle(b, "default.example.com")}
	u, err := haproxy.New(haproxy.Config{Dir: dir, Render: ro, Binary: testkit.HAProxyBinary(), AdaptivePool: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := u.WriteInitial(cfg); err != nil {
		b.Fatal(err)
	}
	h := testbed.Start(b, dir)
	master := socket.NewMaster(h.MasterSocket, socket.Options{})
	return u, opts, master
}

func update(b *testing.B, u *haproxy.Instance, cfg *model.Config) haproxy.Outcome {
	out, err := u.Update(context.Background(), cfg)
	if err != nil || out.Reloaded {
		b.Fatalf("update: reloaded %v, fallback %v, err %v, reasons %v", out.Reloaded, out.Fallback, err, out.Plan.Structural)
	}
	return out
}

// oneEndpointBench starts HAProxy for routes Routes plus app/big (3 endpoints) and returns two
// snapshots that share every object but app/big's EndpointSlice (4 endpoints in the second), as an
// informer cache gives them, and the Translator that translates them.
func oneEndpointBench(b *testing.B, routes int) (in3, in4 mapping.Input, u *haproxy.Instance, tr *mapping.Translator) {
	in3 = benchInputN(routes, 3)
	in4 = in3
	in4.EndpointSlices = slices.Clone(in3.EndpointSlices)
	in4.EndpointSlices[len(in4.EndpointSlices)-1] = benchInputN(0, 4).EndpointSlices[0] // app/big's
	u, opts, _ := benchUpdater(b, in3)
	return in3, in4, u, mapping.NewTranslator(opts)
}

// BenchmarkUpdateOneEndpoint is the time from a new desired state to HAProxy serving it when one
// endpoint of one Route changes, with 1,000, 10,000 and 20,000 other Routes (how the cost of a small
// change grows with the cluster): plan, render and write-through of every file, and the runtime ops
// (add or delete one server). Translate is not included. The two states come from one
// mapping.Translator fed snapshots that share every object but the changed EndpointSlice, as the
// controller makes them from the informers' caches.
func BenchmarkUpdateOneEndpoint(b *testing.B) {
	for _, routes := range []int{1000, 10000, 20000} {
		b.Run(fmt.Sprintf("routes=%d", routes), func(b *testing.B) {
			in3, in4, u, tr := oneEndpointBench(b, routes)
			three, _ := tr.Translate(in3)
			four, _ := tr.Translate(in4)
			states := []*model.Config{four, three}
			update(b, u, three) // from the started state: the dormant checks go, the base is set
			b.ResetTimer()
			i := 0
			for b.Loop() {
				update(b, u, states[i%2])
				i++
			}
		})
	}
}

// BenchmarkSyncOneEndpoint is BenchmarkUpdateOneEndpoint with what the controller does before the
// update: the Translator's translation of the new snapshot and the validation of what changed in it.
func BenchmarkSyncOneEndpoint(b *testing.B) {
	for _, routes := range []int{1000, 10000, 20000} {
		b.Run(fmt.Sprintf("routes=%d", routes), func(b *testing.B) {
			in3, in4, u, tr := oneEndpointBench(b, routes)
			var valid *model.Config
			sync := func(in mapping.Input) {
				cfg, _ := tr.Translate(in)
				if err := cfg.ValidateAfter(valid); err != nil {
					b.Fatal(err)
				}
				valid = cfg
				update(b, u, cfg)
			}
			sync(in3)
			inputs := []mapping.Input{in4, in3}
			b.ResetTimer()
			i := 0
			for b.Loop() {
				sync(inputs[i%2])
				i++
			}
		})
	}
}

// BenchmarkScaleOut1000 is the time to take one Route from 1 to 1,001 servers at runtime, with 1,000
// other Routes (the scale-in back to 1 between iterations is not timed).
func BenchmarkScaleOut1000(b *testing.B) {
	u, opts, master := benchUpdater(b, benchInput(1))
	small, _ := mapping.Translate(benchInput(1), opts)
	large, _ := mapping.Translate(benchInput(1001), opts)
	ps, err := master.ShowProc(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	ops := 0
	for b.Loop() {
		out := update(b, u, large)
		ops = out.Result.Applied
		b.StopTimer()
		update(b, u, small)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(ops), "ops")
	if after, err := master.ShowProc(context.Background()); err != nil || after.Master.Reloads != ps.Master.Reloads {
		b.Fatalf("HAProxy reloaded during the benchmark (%v)", err)
	}
}

// BenchmarkReload1000 is the time of a validated reload with 1,000 Routes: one Route's balance
// annotation flips, which no runtime op can carry (plan, render, write, haproxy -c, reload, new
// worker confirmed).
func BenchmarkReload1000(b *testing.B) {
	u, opts, _ := benchUpdater(b, benchInput(2))
	plain := benchInput(2)
	annotated := benchInput(2)
	last := annotated.Routes[len(annotated.Routes)-1].DeepCopy()
	last.Annotations = map[string]string{"haproxy.router.openshift.io/balance": "leastconn"}
	annotated.Routes[len(annotated.Routes)-1] = last
	states := make([]*model.Config, 2)
	states[0], _ = mapping.Translate(annotated, opts)
	states[1], _ = mapping.Translate(plain, opts)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		out, err := u.Update(context.Background(), states[i%2])
		if err != nil || !out.Reloaded {
			b.Fatalf("update: reloaded %v, err %v, reasons %v", out.Reloaded, err, out.Plan.Structural)
		}
		i++
	}
}
