package render

import (
	"fmt"
	"sort"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// BenchmarkRender renders 10k Routes with 10 endpoints each and a sticky cookie (as Routes without
// annotations have): in full, and with a BlockCache when one server changes per render.
func BenchmarkRender(b *testing.B) {
	f := newFixture(b)
	cfg := f.model(b)
	cfg.Backends, cfg.Routes, cfg.Certificates, cfg.CAFiles = nil, nil, nil, nil
	var httpEntries []model.MapEntry
	for i := range 10000 {
		name := model.BackendName(model.KindHTTP, fmt.Sprintf("ns%d", i%100), fmt.Sprintf("route%d", i))
		be := model.Backend{Name: name, Kind: model.KindHTTP, Mode: model.ModeHTTP, Balance: "random", CheckInterval: "5000ms",
			Cookie: &model.Cookie{Name: model.DefaultCookieName(name), Key: model.DefaultCookieKey(name)}}
		for j := range 10 {
			addr := fmt.Sprintf("10.%d.%d.%d", i/256%256, i%256, j+1)
			be.Servers = append(be.Servers, model.Server{
				Name: fmt.Sprintf("pod:p%d:svc:http:%s:8080", j, addr), Addr: addr, Port: 8080, Weight: 256, State: model.StateReady,
			})
		}
		model.AssignServerIDs(be.Servers)
		cfg.Backends = append(cfg.Backends, &be)
		httpEntries = append(httpEntries, model.MapEntry{Key: fmt.Sprintf("host%d.example.com/", i), Value: name})
	}
	sort.Slice(cfg.Backends, func(i, j int) bool { return cfg.Backends[i].Name < cfg.Backends[j].Name })
	sort.Slice(httpEntries, func(i, j int) bool { return httpEntries[i].Key < httpEntries[j].Key })
	cfg.Maps = []model.MapFile{{Name: model.MapHTTP, Entries: httpEntries}}
	opts := Options{Dir: testDir, DefaultCertificatePEM: f.ca.IssueBundle(b, "default.invalid")}
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Render(cfg, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	// With a Renderer kept across renders, one server weight changing per render (an endpoint
	// update).
	b.Run("incremental", func(b *testing.B) {
		r, err := NewRenderer(opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Render(cfg); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			be := cfg.Backends[i%len(cfg.Backends)]
			be.Servers = append([]model.Server(nil), be.Servers...)
			be.Servers[0].Weight = int32(1 + i%256)
			i++
			if _, err := r.Render(cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
