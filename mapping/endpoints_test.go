package mapping

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/routetest"
)

func TestServerWeights(t *testing.T) {
	tests := []struct {
		w    []int32
		n    []int
		want []int32
	}{
		// One active Service: weight 1, as OpenShift (the ring of random/source is weight × 16).
		{[]int32{100}, []int{3}, []int32{1}},
		{[]int32{1}, []int{1}, []int32{1}},
		{[]int32{100, 0}, []int{2, 3}, []int32{1, 0}},   // weight 0 → 0
		{[]int32{100, 200}, []int{2, 0}, []int32{1, 0}}, // no endpoints: not counted
		{[]int32{0}, []int{2}, []int32{0}},
		{[]int32{100, 100}, []int{1, 1}, []int32{256, 256}},
		{[]int32{100, 50}, []int{2, 5}, []int32{256, 51}},         // r = 50, 10: 51.2 truncated
		{[]int32{50, 100}, []int{1, 4}, []int32{256, 128}},        // r = 50, 25
		{[]int32{1, 256}, []int{1000, 1}, []int32{1, 256}},        // tiny share floors at 1
		{[]int32{3, 2, 1}, []int{1, 1, 1}, []int32{256, 170, 85}}, // 170.67 and 85.33 truncated, as OpenShift
		{[]int32{20, 10}, []int{2, 4}, []int32{256, 64}},          // OpenShift's own example
		{[]int32{100, 30}, []int{3, 7}, []int32{256, 32}},         // 256·(30/7)/(100/3) = 32.91
		{[]int32{0, 0}, []int{1, 1}, []int32{0, 0}},
	}
	for _, tt := range tests {
		got := serverWeights(tt.w, tt.n)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("serverWeights(%v, %v) = %v, want %v", tt.w, tt.n, got, tt.want)
		}
	}
}

// TestServerWeightSharesProperty checks the formula over a grid of weights and endpoint counts:
//   - every server weight is the exact value x = 256·r/M truncated (or 1 where x < 1), so it is at
//     most 1 below x and never above (float32 arithmetic may put x ± 1e-4 on the other side of an
//     integer: such x are skipped);
//   - hence, where every x ≥ 1, each Service's share of the traffic is within the bound that this
//     truncation allows: with ε = 1/min(x), actual/wanted share lies in [1−ε, 1/(1−ε)].
func TestServerWeightSharesProperty(t *testing.T) {
	checked, shareChecked := 0, 0
	for _, w := range [][]int32{{100, 50}, {1, 256}, {10, 20, 30}, {256, 256, 1, 7}, {100, 100, 100, 100}, {3, 2, 1, 0}} {
		for _, n := range [][]int{{1, 1, 1, 1}, {2, 5, 3, 1}, {10, 1, 7, 3}, {1, 100, 2, 50}, {3, 3, 3, 3}} {
			n := n[:len(w)]
			weights := serverWeights(w, n)
			m := 0.0
			for i := range w {
				if w[i] > 0 {
					m = math.Max(m, float64(w[i])/float64(n[i]))
				}
			}
			exact := make([]float64, len(w))
			minX := math.Inf(1)
			for i := range w {
				if w[i] == 0 {
					if weights[i] != 0 {
						t.Errorf("w=%v n=%v: weight-0 service %d got server weight %d", w, n, i, weights[i])
					}
					continue
				}
				exact[i] = 256 * (float64(w[i]) / float64(n[i])) / m
				minX = math.Min(minX, exact[i])
				want := math.Max(1, math.Floor(exact[i]))
				if frac := exact[i] - math.Round(exact[i]); math.Abs(frac) > 1e-4 && float64(weights[i]) != want {
					t.Errorf("w=%v n=%v: service %d server weight %d, want %v (exact %.3f)", w, n, i, weights[i], want, exact[i])
				}
				checked++
			}
			if minX < 1 {
				continue // the floor of 1 applies: shares are only approximate by design
			}
			var totalX, totalY float64
			for i := range w {
				totalX += exact[i] * float64(n[i])
				totalY += float64(weights[i]) * float64(n[i])
			}
			eps := 1 / minX
			lo, hi := 1-eps, 1/(1-eps)
			for i := range w {
				if w[i] == 0 || eps >= 1 {
					continue
				}
				wanted := exact[i] * float64(n[i]) / totalX
				got := float64(weights[i]) * float64(n[i]) / totalY
				if ratio := got / wanted; ratio < lo-1e-9 || ratio > hi+1e-9 {
					t.Errorf("w=%v n=%v: service %d gets %.4f of the traffic, want %.4f (ratio %.4f outside [%.4f, %.4f])", w, n, i, got, wanted, ratio, lo, hi)
				}
				shareChecked++
			}
		}
	}
	if checked < 50 || shareChecked < 20 {
		t.Fatalf("checked %d weights and %d shares: the grid is broken", checked, shareChecked)
	}
}

// TestWeightsEndToEnd: alternate backends with different endpoint counts get their shares; a weight-0
// Service's servers get weight 0.
func TestWeightsEndToEnd(t *testing.T) {
	r := newRoute("ns", "r", "www.example.com", 0, withService("a", ptr(int32(60))), withAlternate("b", ptr(int32(30))),
		withAlternate("c", ptr(int32(0))), withAlternate("d", nil))
	in := Input{
		Routes:   []*routev1.Route{r},
		Services: []*corev1.Service{newService("ns", "a"), newService("ns", "b"), newService("ns", "c"), newService("ns", "d")},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			newSlice("ns", "a-1", "a", "10.0.0.1"),
			newSlice("ns", "b-1", "b", "10.0.1.1", "10.0.1.2", "10.0.1.3"),
			newSlice("ns", "c-1", "c", "10.0.2.1"),
			newSlice("ns", "d-1", "d", "10.0.3.1", "10.0.3.2"),
		},
	}
	cfg, problems := translate(t, in, testOptions())
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	perService := map[string]int32{}
	sum := map[string]int32{}
	for _, s := range cfg.Backends[0].Servers {
		perService[s.Service] = s.Weight
		sum[s.Service] += s.Weight
	}
	// r: a 60/1=60, b 30/3=10, d 100/2=50 → M=60: 256, 42.67 and 213.33 truncated.
	want := map[string]int32{"ns/a": 256, "ns/b": 42, "ns/c": 0, "ns/d": 213}
	if fmt.Sprint(perService) != fmt.Sprint(want) {
		t.Fatalf("per-server weights %v, want %v", perService, want)
	}
	// Shares a:b:d = 60:30:100 = 256 : 128 : 426.67; truncated per server: 256 : 126 : 426.
	if sum["ns/a"] != 256 || sum["ns/b"] != 126 || sum["ns/d"] != 426 {
		t.Fatalf("service totals %v", sum)
	}
}

func TestEndpointSelection(t *testing.T) {
	svc := &corev1.Service{}
	svc.Namespace, svc.Name = "ns", "web"
	svc.Spec.Ports = []corev1.ServicePort{
		{Name: "web", Port: 80, TargetPort: intstr.FromString("http")},
		{Name: "admin", Port: 9000, TargetPort: intstr.FromInt32(9443)},
		{Name: "console", Port: 9001, TargetPort: intstr.FromString("con")},
	}
	slice := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
	slice.Namespace, slice.Name = "ns", "web-1"
	slice.Labels = map[string]string{discoveryv1.LabelServiceName: "web"}
	slice.Ports = []discoveryv1.EndpointPort{
		{Name: ptr("http"), Port: ptr(int32(8080))},
		{Name: ptr("admin"), Port: ptr(int32(9443))},
		{Name: ptr("console"), Port: ptr(int32(7000))},
		{Name: ptr("udp"), Port: ptr(int32(53)), Protocol: ptr(corev1.ProtocolUDP)},
		{Name: ptr("noport")},
	}
	slice.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}
	tests := []struct {
		name string
		port *routev1.RoutePort
		want string // server ports, space-separated
	}{
		{"no port: every TCP port", nil, "9443 7000 8080"},
		{"slice port name", &routev1.RoutePort{TargetPort: intstr.FromString("admin")}, "9443"},
		{"slice port number", &routev1.RoutePort{TargetPort: intstr.FromInt32(8080)}, "8080"},
		// As OpenShift: the Service's ports are not consulted, only the endpoints' names and numbers.
		{"service port number selects nothing", &routev1.RoutePort{TargetPort: intstr.FromInt32(9000)}, ""},
		{"service targetPort name selects nothing", &routev1.RoutePort{TargetPort: intstr.FromString("con")}, ""},
		{"service port name (the slice's port name)", &routev1.RoutePort{TargetPort: intstr.FromString("console")}, "7000"},
		{"unknown name", &routev1.RoutePort{TargetPort: intstr.FromString("nope")}, ""},
		{"unknown number", &routev1.RoutePort{TargetPort: intstr.FromInt32(1)}, ""},
		{"udp port is never selected", &routev1.RoutePort{TargetPort: intstr.FromString("udp")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTranslator(testOptions(), newIndex(Input{Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{slice}}), nil)
			eps, _ := tr.serviceEndpoints("ns", "web", tt.port)
			var ports []string
			for _, e := range eps {
				ports = append(ports, fmt.Sprint(e.port))
			}
			if got := strings.Join(ports, " "); got != tt.want {
				t.Fatalf("ports %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEndpointAddresses(t *testing.T) {
	tests := []struct {
		addr     string
		family   discoveryv1.AddressType
		loopback bool
		want     string // canonical address, or "" when refused
		why      string
	}{
		{"10.0.0.1", discoveryv1.AddressTypeIPv4, false, "10.0.0.1", ""},
		{"2001:DB8::1", discoveryv1.AddressTypeIPv6, false, "2001:db8::1", ""},
		{"127.0.0.1", discoveryv1.AddressTypeIPv4, false, "", "loopback"},
		{"127.0.0.1", discoveryv1.AddressTypeIPv4, true, "127.0.0.1", ""},
		{"::1", discoveryv1.AddressTypeIPv6, false, "", "loopback"},
		{"::1", discoveryv1.AddressTypeIPv6, true, "::1", ""},
		{"169.254.169.254", discoveryv1.AddressTypeIPv4, true, "", "link-local"},
		{"fe80::1", discoveryv1.AddressTypeIPv6, true, "", "link-local"},
		{"224.0.0.5", discoveryv1.AddressTypeIPv4, true, "", "multicast"},
		{"ff02::1", discoveryv1.AddressTypeIPv6, true, "", "multicast"},
		{"0.0.0.0", discoveryv1.AddressTypeIPv4, true, "", "unspecified"},
		{"::", discoveryv1.AddressTypeIPv6, true, "", "unspecified"},
		{"::ffff:127.0.0.1", discoveryv1.AddressTypeIPv6, false, "", "IPv4-mapped"},
		{"::a9fe:a9fe", discoveryv1.AddressTypeIPv6, true, "", "IPv4-compatible IPv6 address (deprecated; it embeds 169.254.169.254)"},
		{"::7f00:1", discoveryv1.AddressTypeIPv6, false, "", "IPv4-compatible"},
		{"::a00:1", discoveryv1.AddressTypeIPv6, true, "", "IPv4-compatible"},
		{"168.63.129.16", discoveryv1.AddressTypeIPv4, true, "", "cloud metadata"},
		{"fd00:ec2::254", discoveryv1.AddressTypeIPv6, true, "", "cloud metadata"},
		{"FD00:EC2:0::254", discoveryv1.AddressTypeIPv6, true, "", "cloud metadata"},
		{"100.100.100.200", discoveryv1.AddressTypeIPv4, true, "", "cloud metadata"},
		{"169.254.170.2", discoveryv1.AddressTypeIPv4, true, "", "link-local"},
		{"10.128.2.7", discoveryv1.AddressTypeIPv4, true, "", "the router's own"},
		{"192.0.2.10", discoveryv1.AddressTypeIPv4, true, "", "the router's own"},
		{"fd01::7", discoveryv1.AddressTypeIPv6, true, "", "the router's own"},
		{"10.128.2.8", discoveryv1.AddressTypeIPv4, true, "10.128.2.8", ""},
		{"::2:a00:1", discoveryv1.AddressTypeIPv6, true, "::2:a00:1", ""},
		{"fe80::1%eth0", discoveryv1.AddressTypeIPv6, true, "", "zoned"},
		{"10.0.0.1", discoveryv1.AddressTypeIPv6, true, "", "family"},
		{"2001:db8::1", discoveryv1.AddressTypeIPv4, true, "", "family"},
		{"010.0.0.1", discoveryv1.AddressTypeIPv4, true, "", "not an IP"},
		{"10.0.0.1 ", discoveryv1.AddressTypeIPv4, true, "", "not an IP"},
		{"10.0.0.1:80", discoveryv1.AddressTypeIPv4, true, "", "not an IP"},
	}
	for _, tt := range tests {
		opts := testOptions()
		opts.AllowLoopbackEndpoints = tt.loopback
		for _, a := range []string{"10.128.2.7", "192.0.2.10", "fd01::7"} {
			opts.RouterAddresses = append(opts.RouterAddresses, netip.MustParseAddr(a))
		}
		tr := &translator{opts: opts}
		addr, why := tr.endpointAddr(tt.addr, tt.family)
		got := ""
		if why == "" {
			got = addr.String()
		}
		if got != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("endpointAddr(%q, %s, loopback=%v) = %q, %q; want %q, %q", tt.addr, tt.family, tt.loopback, got, why, tt.want, tt.why)
		}
	}
}

// TestLoopbackEndpointRefused: in cluster mode (AllowLoopbackEndpoints false) a loopback endpoint is
// skipped with an EndpointRejected warning, and the Route stays admitted.
func TestLoopbackEndpointRefused(t *testing.T) {
	in := Input{
		Routes:         []*routev1.Route{newRoute("ns", "r", "www.example.com", 0)},
		Services:       []*corev1.Service{newService("ns", "web")},
		EndpointSlices: []*discoveryv1.EndpointSlice{newSlice("ns", "web-1", "web", "127.0.0.1", "10.0.0.1", "127.9.9.9")},
	}
	opts := testOptions()
	opts.AllowLoopbackEndpoints = false
	cfg, problems := translate(t, in, opts)
	if len(cfg.Backends) != 1 || len(cfg.Backends[0].Servers) != 1 || cfg.Backends[0].Servers[0].Addr != "10.0.0.1" {
		t.Fatalf("backends %+v, want only 10.0.0.1", cfg.Backends)
	}
	if len(problems) != 2 {
		t.Fatalf("problems %v, want two warnings", problems)
	}
	for _, p := range problems {
		if !p.Warning || p.Reason != ReasonEndpointRejected || !strings.Contains(p.Message, "loopback") {
			t.Errorf("problem %s, want an EndpointRejected loopback warning", p)
		}
	}
	opts.AllowLoopbackEndpoints = true
	cfg, problems = translate(t, in, opts)
	if len(problems) != 0 || len(cfg.Backends[0].Servers) != 3 {
		t.Fatalf("with loopback allowed: problems %v servers %v", problems, cfg.Backends[0].Servers)
	}
}

// TestForeignPodEndpointsRefused: a hand-made EndpointSlice whose endpoints name another namespace's
// pods gives this namespace's Route none of them (a warning each) unless trusted; the slices of the
// EndpointSlice controller, and hand-made ones naming their own namespace's pods, are served.
func TestForeignPodEndpointsRefused(t *testing.T) {
	hand := routetest.PodSlice("ns", "web", "10.0.0.1", "10.0.0.2")
	hand.Endpoints[1].TargetRef.Namespace = "other"
	hand.Endpoints[0].TargetRef.Namespace = "ns"
	in := Input{
		Routes:         []*routev1.Route{newRoute("ns", "r", "www.example.com", 0)},
		Services:       []*corev1.Service{newService("ns", "web")},
		EndpointSlices: []*discoveryv1.EndpointSlice{hand},
	}
	cfg, problems := translate(t, in, testOptions())
	if got := cfg.Backends[0].Servers; len(got) != 1 || got[0].Addr != "10.0.0.1" {
		t.Fatalf("servers %+v, want only 10.0.0.1", got)
	}
	if len(problems) != 1 || !problems[0].Warning || problems[0].Reason != ReasonEndpointRejected ||
		!strings.Contains(problems[0].Message, `pod "other"/"web-10-0-0-2" of another namespace`) {
		t.Fatalf("problems %v, want one EndpointRejected warning naming the foreign pod", problems)
	}

	managed := hand.DeepCopy()
	managed.Labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
	in.EndpointSlices = []*discoveryv1.EndpointSlice{managed}
	if cfg, problems := translate(t, in, testOptions()); len(cfg.Backends[0].Servers) != 2 || len(problems) != 0 {
		t.Fatalf("the controller's slice: servers %v, problems %v; want both, none", cfg.Backends[0].Servers, problems)
	}

	in.EndpointSlices = []*discoveryv1.EndpointSlice{hand}
	opts := testOptions()
	opts.TrustCrossNamespaceEndpoints = true
	if cfg, problems := translate(t, in, opts); len(cfg.Backends[0].Servers) != 2 || len(problems) != 0 {
		t.Fatalf("trusted: servers %v, problems %v; want both, none", cfg.Backends[0].Servers, problems)
	}
}

func TestServersNamesConditionsAndDedup(t *testing.T) {
	s1 := newSlice("ns", "web-1", "web", "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4")
	s1.Endpoints[0].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: "pod-a"}
	s1.Endpoints[1].Conditions = discoveryv1.EndpointConditions{Ready: ptr(false)}
	s1.Endpoints[2].Conditions = discoveryv1.EndpointConditions{Ready: ptr(true), Terminating: ptr(true)}
	s1.Endpoints[3].Conditions = discoveryv1.EndpointConditions{}
	s1.Endpoints[3].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: "bad name;x"}
	s2 := newSlice("ns", "web-2", "web", "10.0.0.1") // duplicate ip:port, other pod name
	s2.Endpoints[0].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: "pod-z"}
	s3 := newSlice("ns", "web-3", "web", "2001:db8::7")
	s3.AddressType = discoveryv1.AddressTypeIPv6
	s3.Ports[0].Name = ptr("Not_A_Label")
	empty := newSlice("ns", "web-4", "web")
	empty.Endpoints = []discoveryv1.Endpoint{{Addresses: nil}}
	r := newRoute("ns", "r", "www.example.com", 0, reencrypt)
	opts := testOptions()
	opts.DefaultDestinationCAFile = "/ca.pem"
	for _, slices := range [][]*discoveryv1.EndpointSlice{{s1, s2, s3, empty}, {empty, s3, s2, s1}} {
		cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}, Services: []*corev1.Service{newService("ns", "web")}, EndpointSlices: slices}, opts)
		if len(problems) != 0 {
			t.Fatal(problems)
		}
		var got []string
		for _, s := range cfg.Backends[0].Servers {
			got = append(got, fmt.Sprintf("%s %s %d %d %s %s %s", s.Name, s.Addr, s.Port, s.Weight, s.State, s.Service, s.VerifyHost))
		}
		want := []string{
			"pod::web::2001:db8::7:8080 2001:db8::7 8080 1 ready ns/web web.ns.svc",
			"pod::web:http:10.0.0.4:8080 10.0.0.4 8080 1 ready ns/web web.ns.svc",
			"pod:pod-a:web:http:10.0.0.1:8080 10.0.0.1 8080 1 ready ns/web web.ns.svc",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("servers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestServersOnlyForTheirService(t *testing.T) {
	other := newSlice("ns", "other-1", "other", "10.0.9.9")
	foreign := newSlice("elsewhere", "web-1", "web", "10.0.8.8") // same Service name, other namespace
	unlabelled := newSlice("ns", "web-x", "web", "10.0.7.7")
	unlabelled.Labels = nil
	fqdn := newSlice("ns", "web-fqdn", "web", "web.example.net")
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	in := Input{
		Routes:         []*routev1.Route{newRoute("ns", "r", "www.example.com", 0)},
		Services:       []*corev1.Service{newService("ns", "web"), newService("ns", "other"), newService("elsewhere", "web")},
		EndpointSlices: []*discoveryv1.EndpointSlice{other, foreign, unlabelled, fqdn, newSlice("ns", "web-1", "web", "10.0.0.1")},
	}
	cfg, problems := translate(t, in, testOptions())
	if len(problems) != 0 || len(cfg.Backends[0].Servers) != 1 || cfg.Backends[0].Servers[0].Addr != "10.0.0.1" {
		t.Fatalf("problems %v servers %+v, want only 10.0.0.1", problems, cfg.Backends[0].Servers)
	}
}

func TestMissingServiceHasNoServers(t *testing.T) {
	in := Input{
		Routes:         []*routev1.Route{newRoute("ns", "r", "www.example.com", 0)},
		EndpointSlices: []*discoveryv1.EndpointSlice{newSlice("ns", "web-1", "web", "10.0.0.1")},
	}
	cfg, problems := translate(t, in, testOptions())
	if len(problems) != 0 || len(cfg.Backends) != 1 || len(cfg.Backends[0].Servers) != 0 {
		t.Fatalf("problems %v backends %+v, want an admitted Route without servers", problems, cfg.Backends)
	}
	if m := mapEntries(cfg, model.MapHTTP); m["www.example.com/"] != "be_http:ns:r" {
		t.Fatalf("http map %v", m)
	}
}

// idledService is Service ns/web (port "http" 80) idled at cluster IP ip.
func idledService(ip string) *corev1.Service {
	s := newService("ns", "web")
	s.Annotations = map[string]string{AnnotationIdledAt: "2024-01-01T00:00:00Z"}
	s.Spec.ClusterIP = ip
	return s
}

// TestIdledService: an idled Service whose EndpointSlices hold no ready address is served at its
// cluster IP and the Service's port, one server per selected port, never health-checked, as
// OpenShift's router serves it; not without the annotation, nor without a slice, nor when a ready
// address exists, nor for a headless Service; a cluster IP that no endpoint may have is refused.
func TestIdledService(t *testing.T) {
	empty := newSlice("ns", "web-1", "web")
	unready := newSlice("ns", "web-1", "web", "10.0.0.5")
	unready.Endpoints[0].Conditions.Ready = ptr(false)
	ready := newSlice("ns", "web-1", "web", "10.0.0.5")
	twoPorts := idledService("172.30.0.10")
	twoPorts.Spec.Ports = append(twoPorts.Spec.Ports, corev1.ServicePort{Name: "admin", Port: 9000},
		corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	tests := []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		port   *routev1.RoutePort
		want   string // "name addr:port check" per server
		warn   string
	}{
		{"idled, empty slice", idledService("172.30.0.10"), []*discoveryv1.EndpointSlice{empty}, nil, "ept:web:http:172.30.0.10:80 172.30.0.10:80 false", ""},
		{"idled, unready endpoint", idledService("172.30.0.10"), []*discoveryv1.EndpointSlice{unready}, nil, "ept:web:http:172.30.0.10:80 172.30.0.10:80 false", ""},
		{"idled, IPv6 cluster IP", idledService("fd00:30::10"), []*discoveryv1.EndpointSlice{empty}, nil, "ept:web:http:fd00:30::10:80 [fd00:30::10]:80 false", ""},
		{"idled, every TCP port", twoPorts, []*discoveryv1.EndpointSlice{empty}, nil,
			"ept:web:admin:172.30.0.10:9000 172.30.0.10:9000 false; ept:web:http:172.30.0.10:80 172.30.0.10:80 false", ""},
		{"idled, targetPort by name", twoPorts, []*discoveryv1.EndpointSlice{empty}, &routev1.RoutePort{TargetPort: intstr.FromString("admin")},
			"ept:web:admin:172.30.0.10:9000 172.30.0.10:9000 false", ""},
		{"idled, targetPort of the pods", twoPorts, []*discoveryv1.EndpointSlice{empty}, &routev1.RoutePort{TargetPort: intstr.FromInt32(8080)}, "", ""},
		{"idled, a ready endpoint", idledService("172.30.0.10"), []*discoveryv1.EndpointSlice{ready}, nil, "pod::web:http:10.0.0.5:8080 10.0.0.5:8080 false", ""},
		{"idled, no slice", idledService("172.30.0.10"), nil, nil, "", ""},
		{"idled, headless", idledService(corev1.ClusterIPNone), []*discoveryv1.EndpointSlice{empty}, nil, "", ""},
		{"not idled", newService("ns", "web"), []*discoveryv1.EndpointSlice{empty}, nil, "", ""},
		{"idled, metadata address", idledService("168.63.129.16"), []*discoveryv1.EndpointSlice{empty}, nil, "", "cloud metadata"},
		{"idled, link-local", idledService("169.254.169.254"), []*discoveryv1.EndpointSlice{empty}, nil, "", "link-local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRoute("ns", "r", "www.example.com", 0)
			if tt.port != nil {
				r.Spec.Port = tt.port
			}
			in := Input{Routes: []*routev1.Route{r}, Services: []*corev1.Service{tt.svc}, EndpointSlices: tt.slices}
			cfg, problems := translate(t, in, testOptions())
			if len(cfg.Backends) != 1 {
				t.Fatalf("backends %v, problems %v", cfg.Backends, problems)
			}
			var got []string
			for _, s := range cfg.Backends[0].Servers {
				addr, err := netip.ParseAddr(s.Addr)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s %s %v", s.Name, netip.AddrPortFrom(addr, uint16(s.Port)), s.HealthCheck))
			}
			if g := strings.Join(got, "; "); g != tt.want {
				t.Errorf("servers %q, want %q", g, tt.want)
			}
			var warned []string
			for _, p := range problems {
				warned = append(warned, p.Message)
			}
			if w := strings.Join(warned, "; "); (tt.warn == "") != (w == "") || !strings.Contains(w, tt.warn) {
				t.Errorf("warnings %q, want one saying %q", w, tt.warn)
			}
		})
	}
}

// TestIdledServiceTranslator: a Translator follows an idled Service's slice emptying and filling
// again (the fast path, which only rebuilds the backends of changed slices) as Translate does.
func TestIdledServiceTranslator(t *testing.T) {
	svc := idledService("172.30.0.10")
	running := Input{
		Routes:         []*routev1.Route{newRoute("ns", "r", "www.example.com", 0)},
		Services:       []*corev1.Service{svc},
		EndpointSlices: []*discoveryv1.EndpointSlice{newSlice("ns", "web-1", "web", "10.0.0.5")},
	}
	asleep := running
	asleep.EndpointSlices = []*discoveryv1.EndpointSlice{newSlice("ns", "web-1", "web")}
	tr := NewTranslator(testOptions())
	for i, in := range []Input{running, asleep, running, asleep} {
		cfg, _, _ := translateStep(t, tr, in)
		idle := len(cfg.Backends[0].Servers) == 1 && strings.HasPrefix(cfg.Backends[0].Servers[0].Name, "ept:")
		if idle != (i%2 == 1) {
			t.Fatalf("step %d: servers %+v", i, cfg.Backends[0].Servers)
		}
	}
}
