package mapping

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/mapping/render"
)

// benchInput returns routes Routes, each with its own Service and one EndpointSlice of perRoute
// endpoints, spread over 100 namespaces; every fourth Route is edge, every tenth has a path.
func benchInput(routes, perRoute int) Input {
	var in Input
	for i := 0; i < routes; i++ {
		ns := fmt.Sprintf("ns-%d", i%100)
		svc := fmt.Sprintf("svc-%d", i)
		opts := []routeOpt{withService(svc, nil)}
		if i%4 == 0 {
			opts = append(opts, withTLS(routev1.TLSTerminationEdge, routev1.InsecureEdgeTerminationPolicyRedirect))
		}
		if i%10 == 0 {
			opts = append(opts, withPath(fmt.Sprintf("/p%d", i)))
		}
		in.Routes = append(in.Routes, newRoute(ns, fmt.Sprintf("route-%d", i), fmt.Sprintf("host-%d.apps.example.com", i), i, opts...))
		in.Services = append(in.Services, newService(ns, svc))
		addrs := make([]string, perRoute)
		for j := range addrs {
			n := i*perRoute + j
			addrs[j] = fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
		}
		in.EndpointSlices = append(in.EndpointSlices, newSlice(ns, svc+"-1", svc, addrs...))
	}
	return in
}

// BenchmarkTranslate translates 10k Routes with 100k endpoints (10 per Route).
func BenchmarkTranslate(b *testing.B) {
	in := benchInput(10000, 10)
	opts := DefaultOptions()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cfg, problems := Translate(in, opts)
		if len(cfg.Backends) != 10000 || len(problems) != 0 {
			b.Fatalf("got %d backends and %d problems", len(cfg.Backends), len(problems))
		}
	}
}

// TestBenchInputTranslates keeps the benchmark's input honest at a small size.
func TestBenchInputTranslates(t *testing.T) {
	cfg, problems := translate(t, benchInput(200, 10), DefaultOptions())
	if len(problems) != 0 || len(cfg.Backends) != 200 {
		t.Fatalf("problems %v, %d backends", problems, len(cfg.Backends))
	}
	servers := 0
	for _, b := range cfg.Backends {
		servers += len(b.Servers)
	}
	if servers != 2000 {
		t.Fatalf("%d servers, want 2000", servers)
	}
}

// BenchmarkTranslateRender is the whole pure pipeline at 10k Routes / 100k endpoints: Translate, then
// Render with the default template. Besides time and allocations it reports the process's peak RSS
// (input, model and files included), the figure to compare with the 500 MB budget.
func BenchmarkTranslateRender(b *testing.B) {
	in := benchInput(10000, 10)
	opts := DefaultOptions()
	cert := benchDefaultCert(b)
	b.ReportAllocs()
	b.ResetTimer()
	var size int
	for b.Loop() {
		cfg, _ := Translate(in, opts)
		files, err := render.Render(cfg, render.Options{Dir: "/var/lib/haproxy", DefaultCertificatePEM: cert})
		if err != nil {
			b.Fatal(err)
		}
		size = 0
		for _, f := range files {
			size += len(f.Data)
		}
	}
	b.StopTimer()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
	b.ReportMetric(float64(size)/(1<<20), "files-MB")
}

func benchDefaultCert(b *testing.B) []byte {
	var pemData []byte
	for _, f := range []string{"example.crt", "example.key"} {
		data, err := os.ReadFile(filepath.Join("testdata", "certs", f))
		if err != nil {
			b.Fatal(err)
		}
		pemData = append(pemData, data...)
	}
	return pemData
}
