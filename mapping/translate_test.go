package mapping

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/mapping/model"
)

// mixedInput builds an input that exercises most paths: conflicts, ownership, wildcards, TLS kinds,
// alternate backends, duplicated slices, refused endpoints, invalid Routes and Secrets.
func mixedInput(t testing.TB) Input {
	crt, key, ca := readCert(t, "example.crt"), readCert(t, "example.key"), readCert(t, "ca.crt")
	var in Input
	for _, ns := range []string{"a", "b"} {
		in.Namespaces = append(in.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": ns}}})
		for _, svc := range []string{"web", "api"} {
			in.Services = append(in.Services, newService(ns, svc))
			for i := 0; i < 3; i++ {
				in.EndpointSlices = append(in.EndpointSlices, newSlice(ns, fmt.Sprintf("%s-%d", svc, i), svc,
					fmt.Sprintf("10.%d.%d.%d", len(ns), i, len(svc)), fmt.Sprintf("10.9.%d.%d", i, len(svc)), "169.254.0.1"))
			}
		}
	}
	// The same Service twice with different content, and a slice listed twice: the choice must not
	// depend on the order.
	dupSvc := newService("b", "api")
	dupSvc.Spec.Ports[0].Name = "other"
	in.Services = append(in.Services, dupSvc)
	in.EndpointSlices = append(in.EndpointSlices, in.EndpointSlices[0].DeepCopy())
	in.Secrets = append(in.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}})
	in.Routes = []*routev1.Route{
		newRoute("a", "root", "www.example.com", 1),
		newRoute("a", "api", "www.example.com", 2, withPath("/api"), withService("api", ptr(int32(30))), withAlternate("web", ptr(int32(10)))),
		newRoute("b", "steal", "www.example.com", 3, withPath("/b")),
		newRoute("b", "dup", "www.example.com", 0, withPath("/api")),
		newRoute("a", "wild", "*.apps.example.com", 4, withWildcard(), withTLS(routev1.TLSTerminationPassthrough, "")),
		newRoute("a", "edge", "x.apps.example.com", 5, withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect),
			withAnnotation(AnnotationBalance, "%[env(HOME)]")),
		newRoute("b", "under-wild", "y.apps.example.com", 6),
		newRoute("a", "ext", "ext.example.com", 7, func(r *routev1.Route) {
			r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationEdge, ExternalCertificate: &routev1.LocalObjectReference{Name: "tls"}}
		}),
		newRoute("b", "re", "re.example.com", 8, func(r *routev1.Route) {
			r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt, Certificate: crt, Key: key, DestinationCACertificate: ca}
		}, withAnnotation(AnnotationIPAllowlist, "10.0.0.0/8 192.168.0.1")),
		newRoute("b", "bad", "bad.example.com", 9, withAnnotation(AnnotationIPAllowlist, "%[env(HOME)]")),
		newRoute("b", "tied", "tie.example.com", 10),
		newRoute("a", "tied", "tie.example.com", 10),
	}
	return in
}

func shuffled[T any](r *rand.Rand, s []T) []T {
	out := append([]T(nil), s...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// translated translates and returns the YAML of the model and problems.
func translated(t testing.TB, in Input, opts Options) string {
	t.Helper()
	cfg, problems := translate(t, in, opts)
	b, err := yaml.Marshal(struct {
		Model    *model.Config
		Problems []Problem
	}{cfg, problems})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeterministic: shuffling every input slice gives byte-identical output.
func TestDeterministic(t *testing.T) {
	in := mixedInput(t)
	opts := testOptions()
	opts.AllowWildcardRoutes = true
	want := translated(t, in, opts)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		s := Input{
			Routes:         shuffled(rng, in.Routes),
			Services:       shuffled(rng, in.Services),
			EndpointSlices: shuffled(rng, in.EndpointSlices),
			Namespaces:     shuffled(rng, in.Namespaces),
			Secrets:        shuffled(rng, in.Secrets),
		}
		// Reverse the endpoints inside the slices too (on copies).
		for j, sl := range s.EndpointSlices {
			c := sl.DeepCopy()
			for a, b := 0, len(c.Endpoints)-1; a < b; a, b = a+1, b-1 {
				c.Endpoints[a], c.Endpoints[b] = c.Endpoints[b], c.Endpoints[a]
			}
			s.EndpointSlices[j] = c
		}
		if got := translated(t, s, opts); got != want {
			t.Fatalf("shuffle %d changed the output", i)
		}
	}
}

// TestMixedInputOutcome pins the decisions on the mixed input, so that TestDeterministic compares
// something meaningful.
func TestMixedInputOutcome(t *testing.T) {
	opts := testOptions()
	opts.AllowWildcardRoutes = true
	cfg, problems := translate(t, mixedInput(t), opts)
	var admitted []string
	for _, r := range cfg.Routes {
		admitted = append(admitted, r.Namespace+"/"+r.Name)
	}
	wantAdmitted := []string{"a/edge", "a/ext", "a/tied", "a/wild", "b/dup", "b/re", "b/steal"}
	if fmt.Sprint(admitted) != fmt.Sprint(wantAdmitted) {
		t.Errorf("admitted %v, want %v", admitted, wantAdmitted)
	}
	var rejected []string
	warnings := map[string]int{}
	for _, p := range problems {
		if p.Warning {
			warnings[p.Namespace+"/"+p.Name+":"+p.Reason]++
			continue
		}
		rejected = append(rejected, p.Namespace+"/"+p.Name+":"+p.Reason)
	}
	// b/dup is the oldest Route of www.example.com: it owns the host for namespace b, so a/root and
	// a/api (younger) are refused and b/steal is admitted; a/wild owns *.apps.example.com, so
	// b/under-wild is refused; the tie on tie.example.com goes to the smaller UID (a/tied).
	wantRejected := []string{"a/api:HostAlreadyClaimed", "a/root:HostAlreadyClaimed", "b/bad:InvalidAnnotation",
		"b/tied:HostAlreadyClaimed", "b/under-wild:HostAlreadyClaimed"}
	if warnings["a/edge:EndpointRejected"] == 0 {
		t.Errorf("warnings %v: no EndpointRejected warnings for 169.254.0.1", warnings)
	}
	// a/edge's balance annotation is cosmetic: it is ignored with a warning.
	if warnings["a/edge:InvalidAnnotation"] != 1 {
		t.Errorf("warnings %v, want one InvalidAnnotation warning for a/edge", warnings)
	}
	if !sort.SliceIsSorted(problems, func(i, j int) bool {
		a, b := problems[i], problems[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Reason < b.Reason
	}) {
		t.Errorf("problems are not sorted: %v", problems)
	}
	if fmt.Sprint(rejected) != fmt.Sprint(wantRejected) {
		t.Errorf("rejected %v, want %v", rejected, wantRejected)
	}
}

// TestInputNotMutated: Translate leaves every input object as it found it.
func TestInputNotMutated(t *testing.T) {
	in := mixedInput(t)
	before := in.DeepCopy()
	routes := append([]*routev1.Route(nil), in.Routes...)
	opts := testOptions()
	opts.AllowWildcardRoutes = true
	translate(t, in, opts)
	if !reflect.DeepEqual(in, before) {
		t.Fatal("Translate modified its input objects")
	}
	for i := range routes {
		if routes[i] != in.Routes[i] {
			t.Fatal("Translate reordered the input slice")
		}
	}
}

func TestSettingsAndFrontends(t *testing.T) {
	opts := testOptions()
	opts.HTTPPort, opts.HTTPSPort, opts.BindAddress = 8080, 8443, "127.0.0.1"
	opts.Threads, opts.HardStopAfter, opts.RouterName = 4, "1h", "shard-x"
	cfg, _ := translate(t, Input{}, opts)
	s := cfg.Settings
	if s.HTTPPort != 8080 || s.HTTPSPort != 8443 || s.BindAddress != "127.0.0.1" || s.Threads != 4 || s.HardStopAfter != "1h" ||
		s.RouterName != "shard-x" || s.DefaultCertificate != "default_pub_keys.pem" || s.Timeouts != opts.Timeouts ||
		s.MaxConnections != opts.MaxConnections || s.BufSize != opts.BufSize || s.CheckInterval != opts.CheckInterval ||
		s.LoadBalanceAlgorithm != opts.LoadBalanceAlgorithm || s.TCPBalanceScheme != opts.TCPBalanceScheme ||
		s.ForwardedHeaders != opts.ForwardedHeaders {
		t.Errorf("settings %+v do not mirror options %+v", s, opts)
	}
	want := []model.Frontend{
		{Name: "public", Mode: model.ModeHTTP, Bind: "127.0.0.1:8080"},
		{Name: "public_ssl", Mode: model.ModeTCP, Bind: "127.0.0.1:8443"},
		{Name: "fe_sni", Mode: model.ModeHTTP, Bind: "unix@run/haproxy-sni.sock"},
		{Name: "fe_no_sni", Mode: model.ModeHTTP, Bind: "unix@run/haproxy-no-sni.sock"},
	}
	if !reflect.DeepEqual(cfg.Frontends, want) {
		t.Errorf("frontends %+v, want %+v", cfg.Frontends, want)
	}
	cfg, _ = translate(t, Input{}, DefaultOptions())
	if cfg.Frontends[0].Bind != ":80" || cfg.Frontends[1].Bind != ":443" {
		t.Errorf("default binds %v", cfg.Frontends)
	}
}

func TestSharding(t *testing.T) {
	routes := []*routev1.Route{
		newRoute("a", "in", "in.example.com", 1, withLabel("shard", "x")),
		newRoute("a", "out", "in.example.com", 0, withLabel("shard", "y")), // older, same host, other shard
		newRoute("b", "in-b", "b.example.com", 2, withLabel("shard", "x")),
		newRoute("c", "no-ns", "c.example.com", 3, withLabel("shard", "x")),
	}
	nss := []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"router": "public"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"router": "private"}}},
	}
	tests := []struct {
		name         string
		routeSel     string
		nsSel        string
		wantRoutes   string
		wantProblems int
	}{
		// Without sharding the older a/out keeps in.example.com and a/in is refused.
		{"all", "", "", "[a/out b/in-b c/no-ns]", 1},
		// a/out is in another shard: it is ignored and does not block a/in.
		{"route labels", "shard=x", "", "[a/in b/in-b c/no-ns]", 0},
		{"route labels other shard", "shard=y", "", "[a/out]", 0},
		// Namespace c has no Namespace object: ignored.
		{"namespace labels", "", "router=public", "[a/out]", 1},
		{"both", "shard=x", "router=public", "[a/in]", 0},
		{"namespace label set-based", "shard=x", "router in (public,private)", "[a/in b/in-b]", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			if tt.routeSel != "" {
				opts.RouteLabels = mustSelector(t, tt.routeSel)
			}
			if tt.nsSel != "" {
				opts.NamespaceLabels = mustSelector(t, tt.nsSel)
			}
			cfg, problems := translate(t, Input{Routes: routes, Namespaces: nss}, opts)
			var got []string
			for _, r := range cfg.Routes {
				got = append(got, r.Namespace+"/"+r.Name)
			}
			if fmt.Sprint(got) != tt.wantRoutes || len(problems) != tt.wantProblems {
				t.Fatalf("admitted %v problems %v, want %s and %d problems", got, problems, tt.wantRoutes, tt.wantProblems)
			}
		})
	}
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func TestInvalidRouteNames(t *testing.T) {
	tests := []struct{ ns, name string }{
		{"Bad_NS", "r"}, {"ns.dotted", "r"}, {"ns", "Upper"}, {"ns", "a:b"}, {"ns", "a/b"}, {"", "r"}, {"ns", ""},
		{"ns", "a..b"}, {"ns", "x%[env(HOME)]"},
	}
	for _, tt := range tests {
		r := newRoute(tt.ns, tt.name, "www.example.com", 0)
		cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
		if len(cfg.Backends) != 0 || len(problems) != 1 || problems[0].Reason != ReasonInvalidRoute {
			t.Errorf("%q/%q: backends %v problems %v, want InvalidRoute", tt.ns, tt.name, cfg.Backends, problems)
		}
	}
}

func TestBackendLists(t *testing.T) {
	tests := []struct {
		name   string
		opts   []routeOpt
		reject bool
	}{
		{"three alternates", []routeOpt{withAlternate("b", nil), withAlternate("c", nil), withAlternate("d", nil)}, false},
		{"four alternates", []routeOpt{withAlternate("b", nil), withAlternate("c", nil), withAlternate("d", nil), withAlternate("e", nil)}, true},
		{"weight 256", []routeOpt{withService("web", ptr(int32(256)))}, false},
		{"weight 0", []routeOpt{withService("web", ptr(int32(0)))}, false},
		{"weight 257", []routeOpt{withService("web", ptr(int32(257)))}, true},
		{"weight -1", []routeOpt{withAlternate("b", ptr(int32(-1)))}, true},
		{"same service twice", []routeOpt{withAlternate("web", nil)}, true},
		{"invalid service name", []routeOpt{withService("Web_1", nil)}, true},
		{"empty service name", []routeOpt{withService("", nil)}, true},
		{"not a service", []routeOpt{func(r *routev1.Route) { r.Spec.To.Kind = "Pod" }}, true},
	}
	for _, tt := range tests {
		r := newRoute("ns", "r", "www.example.com", 0, tt.opts...)
		cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, testOptions())
		rejected := len(problems) == 1 && problems[0].Reason == ReasonInvalidRoute && len(cfg.Backends) == 0
		if rejected != tt.reject || (!tt.reject && len(problems) != 0) {
			t.Errorf("%s: problems %v, want rejected=%v", tt.name, problems, tt.reject)
		}
	}
}

// TestTermination covers the termination and insecure-policy matrix.
func TestTermination(t *testing.T) {
	type tc struct {
		term   routev1.TLSTerminationType
		policy routev1.InsecureEdgeTerminationPolicyType
		path   string
		kind   model.BackendKind // "" = rejected
	}
	tests := []tc{
		{"edge", "", "", model.KindEdge},
		{"edge", "None", "", model.KindEdge},
		{"edge", "Allow", "/p", model.KindEdge},
		{"edge", "Redirect", "", model.KindEdge},
		{"reencrypt", "Allow", "", model.KindReencrypt},
		{"passthrough", "", "", model.KindPassthrough},
		{"passthrough", "None", "", model.KindPassthrough},
		{"passthrough", "Redirect", "", model.KindPassthrough},
		{"passthrough", "Allow", "", ""},
		{"passthrough", "", "/p", ""},
		{"", "", "", ""},
		{"Edge", "", "", ""},
		{"edge", "redirect", "", ""},
		{"edge", "Deny", "", ""},
	}
	opts := testOptions()
	opts.DefaultDestinationCAFile = "/ca.pem"
	for _, tt := range tests {
		r := newRoute("ns", "r", "www.example.com", 0, withPath(tt.path), withTLS(tt.term, tt.policy))
		cfg, problems := translate(t, Input{Routes: []*routev1.Route{r}}, opts)
		if tt.kind == "" {
			if len(problems) != 1 || problems[0].Reason != ReasonInvalidRoute {
				t.Errorf("%+v: problems %v, want InvalidRoute", tt, problems)
			}
			continue
		}
		if len(problems) != 0 || cfg.Backends[0].Kind != tt.kind || cfg.Backends[0].Mode != tt.kind.Mode() {
			t.Errorf("%+v: problems %v backends %+v", tt, problems, cfg.Backends)
		}
	}
	// An insecure policy without spec.tls does not exist: a nil TLS is plain HTTP.
	cfg, problems := translate(t, Input{Routes: []*routev1.Route{newRoute("ns", "r", "www.example.com", 0)}}, opts)
	if len(problems) != 0 || cfg.Backends[0].Kind != model.KindHTTP {
		t.Errorf("nil TLS: %v %+v", problems, cfg.Backends)
	}
}

func TestEmptyInput(t *testing.T) {
	cfg, problems := translate(t, Input{Routes: []*routev1.Route{nil}, Services: []*corev1.Service{nil}, EndpointSlices: []*discoveryv1.EndpointSlice{nil}}, testOptions())
	if len(problems) != 0 || len(cfg.Backends) != 0 || len(cfg.Routes) != 0 || len(cfg.Maps) != 12 {
		t.Fatalf("got %+v %v", cfg, problems)
	}
}
