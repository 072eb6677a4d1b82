package dataplane_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/inspect/dataplane"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// benchRoutes is the number of edge Routes of the read benchmarks, each with a certificate of its
// own and a Service of two endpoints.
const benchRoutes = 1000

// benchLive starts HAProxy serving benchRoutes edge Routes. Endpoint addresses are on 127.1.0.0/16
// where nothing listens, with checks every hour so that failing checks do not load the machine.
func benchLive(b *testing.B) (*testbed.StaticHAProxy, render.RuntimePaths) {
	b.Helper()
	ca := testkit.NewCA(b, "bench CA")
	var m testbed.Manifests
	for i := range benchRoutes {
		name := fmt.Sprintf("r%04d", i)
		host := name + ".bench.example.com"
		var eps []netip.AddrPort
		for n := 2 * i; n < 2*i+2; n++ {
			eps = append(eps, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 1, byte(n >> 8), byte(n)}), 8080))
		}
		cert, key := ca.Issue(b, host)
		m.ServiceAt("bench", name, eps...)
		m.Route("bench", name, host, "", name, testbed.Edge(cert, key))
	}
	opts := testbed.RouterOptions(b)
	opts.CheckInterval = "1h"
	r := testbed.StartStaticHAProxy(b, m.Objects(), opts, ca.IssueBundle(b, "default.example.com"), ca.Pool())
	r.RequireAdmitted(b)
	paths, err := render.PathsFor(r.Config, r.Dir)
	if err != nil {
		b.Fatal(err)
	}
	return r, paths
}

// BenchmarkRead1000 is the time of each read of the package, and of the handler's answers, against
// HAProxy with 1,000 edge Routes: the servers of one backend, the edge map (1,000 entries), the
// process information, one certificate, and all 1,001 certificates (one `show ssl cert <path>` per
// certificate, on one session, or on a connection each when the Runner cannot open a session).
func BenchmarkRead1000(b *testing.B) {
	r, paths := benchLive(b)
	ctx := context.Background()
	admin := socket.NewAdmin(r.AdminSocket, socket.Options{})
	backend := "be_edge_http:bench:r0500"
	certPath := paths.CertDir + "/bench_r0500.pem"
	edgeMap := paths.Maps[model.MapEdgeReencrypt]

	check := func(b *testing.B, n, want int, err error) {
		b.Helper()
		if err != nil || n != want {
			b.Fatalf("read %d items, want %d: %v", n, want, err)
		}
	}
	b.Run("Servers", func(b *testing.B) {
		for b.Loop() {
			out, err := dataplane.Servers(ctx, admin, backend)
			check(b, len(out), 2, err)
		}
	})
	b.Run("MapEntries", func(b *testing.B) {
		for b.Loop() {
			out, err := dataplane.MapEntries(ctx, admin, edgeMap)
			check(b, len(out), benchRoutes, err)
		}
	})
	b.Run("Info", func(b *testing.B) {
		for b.Loop() {
			_, err := dataplane.Info(ctx, admin)
			check(b, 0, 0, err)
		}
	})
	b.Run("Certificate", func(b *testing.B) {
		for b.Loop() {
			_, err := dataplane.Certificate(ctx, admin, certPath)
			check(b, 0, 0, err)
		}
	})
	b.Run("Certificates", func(b *testing.B) {
		for b.Loop() {
			out, err := dataplane.Certificates(ctx, admin)
			check(b, len(out), benchRoutes+1, err)
		}
	})
	// The same through a Runner that cannot open a session: one connection per command.
	b.Run("CertificatesConnEach", func(b *testing.B) {
		r := &recorder{Runner: admin}
		for b.Loop() {
			out, err := dataplane.Certificates(ctx, r)
			check(b, len(out), benchRoutes+1, err)
		}
	})

	srv := httptest.NewServer(dataplane.Handler(admin, paths, nil))
	b.Cleanup(srv.Close)
	for _, p := range []string{
		"backends/" + url.PathEscape(backend) + "/servers",
		"maps/" + model.MapEdgeReencrypt + "/entries",
		"info",
		"ssl_certs/bench_r0500.pem",
		"ssl_certs",
	} {
		b.Run("GET "+p, func(b *testing.B) {
			for b.Loop() {
				resp, err := srv.Client().Get(srv.URL + dataplane.RuntimePrefix + "/" + p)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d, %v", p, resp.StatusCode, err)
				}
				b.ReportMetric(float64(n), "bytes")
			}
		})
	}
}
